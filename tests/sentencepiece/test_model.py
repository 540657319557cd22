"""tokviz.sentencepiece: the .model codec, the normalizer, the processor API and the trainer's options."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import tokviz.sentencepiece as tsp
from tokviz.errors import SerializationError, TokvizError
from tokviz.sentencepiece.model_proto import ModelProto, NormalizerSpec, PieceType, SentencePiece, TrainerSpec
from tokviz.sentencepiece.normalizer import SentencePieceNormalizer, charsmap_for_rule, parse_charsmap
from tokviz.sentencepiece.pieces import PieceRules, script_of, split_into_words
from tokviz.sentencepiece.trainer import parse_flags

HUG = ["hug pug hugs", "hug the pug", "the hugs"] * 5


def _train(**options: object) -> tuple[tsp.SentencePieceHistory, tsp.SentencePieceProcessor]:
    out = io.BytesIO()
    history = tsp.train_sentencepiece(sentence_iterator=iter(options.pop("lines", HUG)), model_writer=out, **options)
    return history, tsp.SentencePieceProcessor(model_proto=out.getvalue())


# -- ModelProto --------------------------------------------------------------------------


def test_model_proto_round_trip_keeps_set_fields_and_unknown_fields() -> None:
    unknown = bytes([0x22, 0x02, 0x08, 0x01])  # field 4 (self_test_data), a message we do not type
    proto = ModelProto(pieces=(SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("▁a", -1.5)),
                       trainer_spec=TrainerSpec(vocab_size=2, pad_id=-1, user_defined_symbols=("x", "y")),
                       normalizer_spec=NormalizerSpec(name="identity", add_dummy_prefix=False), unknown_fields=(unknown,))
    again = ModelProto.from_bytes(proto.to_bytes())
    assert again == proto
    assert again.trainer_spec.set_fields() == {"vocab_size": 2, "pad_id": -1, "user_defined_symbols": ("x", "y")}
    assert again.trainer_spec.unk_id == 0 and again.normalizer_spec.remove_extra_whitespaces is True
    assert again.pieces[1] == SentencePiece("▁a", -1.5, PieceType.NORMAL)


def test_model_proto_wire_bytes_of_a_tiny_model() -> None:
    proto = ModelProto(pieces=(SentencePiece("a", -1.0),), trainer_spec=TrainerSpec(vocab_size=1))
    # pieces: field 1, len 8: piece "a" (0a 01 61), score -1.0 (15 00 00 80 bf); trainer_spec: field 2: vocab_size=1 (20 01)
    assert proto.to_bytes() == bytes.fromhex("0a080a0161150000 80bf 12022001 1a00".replace(" ", ""))


@pytest.mark.parametrize("blob", [b"", b"\x0a\x05ab", b"\xff\xff\xff", b"not a model at all"])
def test_bad_model_files_raise_a_serialization_error(blob: bytes) -> None:
    with pytest.raises(SerializationError):
        ModelProto.from_bytes(blob)


# -- normalizer ----------------------------------------------------------------------------


def test_normalizer_rules_and_whitespace() -> None:
    assert parse_charsmap(charsmap_for_rule("nmt_nfkc"))["ﬁ"] == "fi"
    assert parse_charsmap(charsmap_for_rule("nfkc_cf"))["A"] == "a"
    n = SentencePieceNormalizer.from_rule("nmt_nfkc")
    assert n.normalize("  Ｈｅｌｌｏ   ﬁne ") == "▁Hello▁fine"
    assert n.normalize("   ") == ""
    keep = SentencePieceNormalizer.from_rule("identity", remove_extra_whitespaces=False, add_dummy_prefix=False)
    assert keep.normalize(" a  b ") == "▁a▁▁b▁"
    suffix = SentencePieceNormalizer.from_rule("identity", treat_whitespace_as_suffix=True)
    assert suffix.normalize("a b") == "a▁b▁"
    user = SentencePieceNormalizer.from_rule("nfkc_cf", user_defined_symbols=["<X>"])
    assert user.normalize("<X>AB") == "▁<X>ab"


def test_piece_rules_and_words() -> None:
    rules = PieceRules()
    assert [rules.is_valid(p) for p in ("▁the", "the▁", "n't", "12.", "a1", "▁▁")] == [True, False, False, True, False, False]
    assert PieceRules(split_digits=True).is_valid("12") is False
    assert PieceRules(split_by_number=False).is_valid("a1") is True
    assert [script_of(c) for c in "aЖ,中カ"] == ["LATIN", "CYRILLIC", "COMMON", "HAN", "HAN"]
    assert split_into_words("▁a▁▁b") == ["▁a", "▁", "▁b"]


# -- processor --------------------------------------------------------------------------------


def test_processor_api_on_a_tiny_bpe_model(tmp_path: Path) -> None:
    history, sp = _train(vocab_size=20, model_type="bpe", user_defined_symbols=["<x>"], pad_id=3)
    assert sp.get_piece_size() == sp.GetPieceSize() == len(sp) == 20
    assert [sp.id_to_piece(i) for i in range(5)] == ["<unk>", "<s>", "</s>", "<pad>", "<x>"]
    # literal values below are what sentencepiece 0.2.3 gives for the same training
    assert [sp.id_to_piece(i) for i in range(5, 12)] == ["ug", "▁h", "▁hug", "he", "▁p", "▁t", "▁pug"]
    assert sp.encode_as_pieces("hugs<x>the") == ["▁hug", "s", "<x>", "t", "he"]
    assert sp.encode("hugs", out_type=str, add_bos=True, add_eos=True) == ["<s>", "▁hug", "s", "</s>"]
    assert sp.decode(sp.encode("the hugs")) == "the hugs"
    assert sp.piece_to_id("nope") == sp.unk_id() == 0
    assert (sp.bos_id(), sp.eos_id(), sp.pad_id()) == (1, 2, 3)
    assert sp.is_unknown(0) and sp.is_control(1) and not sp.is_unused(5) and not sp.is_byte(5)
    assert sp.get_score(5) == 0.0 and sp.get_score(6) == -1.0
    assert sp.DecodePieces(["▁hug", "s"]) == "hugs" and sp.DecodeIds([]) == ""
    assert sp.decode([[sp.piece_to_id("▁hug")], [7, 18]]) == ["hug", "hugs"]
    with pytest.raises(IndexError):
        sp.id_to_piece(20)
    path = tmp_path / "m.model"
    path.write_bytes(sp.serialized_model_proto())
    again = tsp.SentencePieceProcessor()
    assert again.load(str(path)) and again.encode("hug") == sp.encode("hug")
    with pytest.raises(tsp.SentencePieceError, match="NOT_FOUND"):
        tsp.SentencePieceProcessor().load(str(tmp_path / "missing.model"))


def test_unknown_characters_become_bytes_with_byte_fallback() -> None:
    _, sp = _train(vocab_size=270, model_type="bpe", byte_fallback=True)
    assert sp.encode_as_pieces("hug é") == ["▁hug", "▁", "<0xC3>", "<0xA9>"]
    assert sp.decode(sp.encode("hug é")) == "hug é"
    _, plain = _train(vocab_size=30, model_type="unigram", hard_vocab_limit=False)
    assert plain.encode_as_pieces("hug éé") == ["▁hug", "▁", "éé"]  # a run of unknowns is one <unk>
    assert plain.decode(plain.encode("hug éé")) == "hug  ⁇ "


def test_sampling_and_nbest() -> None:
    _, sp = _train(vocab_size=30, model_type="unigram", hard_vocab_limit=False)
    # sentencepiece 0.2.3 trains the same 14 pieces on this corpus and gives these three paths
    assert sp.nbest_encode_as_pieces("hugs", 3) == [["▁hugs"], ["▁hug", "s"], ["▁", "h", "u", "g", "s"]]
    assert sp.nbest_encode_as_pieces("hug", 1) == [["▁hug"]]
    samples = {tuple(sp.sample_encode_as_pieces("hugs", -1, 0.1)) for _ in range(30)}
    assert all("".join(s) == "▁hugs" for s in samples) and len(samples) > 1


# -- trainer options --------------------------------------------------------------------------


def test_flag_string_and_keywords_give_the_same_model(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(HUG), encoding="utf-8")
    tsp.SentencePieceTrainer.Train(f"--input={corpus} --model_prefix={tmp_path / 'a'} --vocab_size=20 --model_type=bpe "
                                   "--max_sentence_length=9999 --user_defined_symbols=<x>,<y> --split_digits")
    tsp.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "b"), vocab_size=20, model_type="bpe",
                                   max_sentence_length=9999, user_defined_symbols=["<x>", "<y>"], split_digits=True)
    a, b = ModelProto.from_bytes((tmp_path / "a.model").read_bytes()), ModelProto.from_bytes((tmp_path / "b.model").read_bytes())
    assert a.pieces == b.pieces and a.normalizer_spec == b.normalizer_spec
    assert a.trainer_spec.replace(model_prefix="") == b.trainer_spec.replace(model_prefix="")
    assert a.trainer_spec.user_defined_symbols == ("<x>", "<y>") and a.trainer_spec.split_digits is True
    assert (tmp_path / "a.vocab").read_text(encoding="utf-8").splitlines()[:4] == ["<unk>\t0", "<s>\t0", "</s>\t0", "<x>\t0"]
    assert parse_flags("--a=1 --b") == {"a": "1", "b": "true"}
    assert tsp.SentencePieceTrainer.train(sentence_iterator=iter(HUG), model_writer=io.BytesIO(), vocab_size=20,
                                              model_type="bpe") is True  # as sentencepiece 0.2.x


@pytest.mark.parametrize("options, message", [
    ({"vocab_sise": 10}, 'unknown field name "vocab_sise"'),
    ({"vocab_size": "abc"}, 'cannot parse "abc" as int'),
    ({"model_type": "xx"}, 'unknown enumeration value of "xx"'),
    ({"character_coverage": 0.5}, "character_coverage"),
    ({"normalization_rule_name": "zz"}, "No precompiled charsmap is found: zz"),
    ({"byte_fallback": "maybe"}, 'cannot parse "maybe" as bool'),
    ({"shrinking_factor": 0.99}, "shrinking_factor"),
    ({"vocab_size": 5}, "Vocabulary size is smaller than required_chars"),
    ({"vocab_size": 500, "model_type": "bpe"}, "Vocabulary size too high"),
    ({"unk_id": -1}, "must be defined"),
])
def test_bad_options_raise_errors_naming_them(options: dict, message: str) -> None:
    with pytest.raises(tsp.SentencePieceError, match=message.replace("(", r"\(")) as info:
        _train(**options)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, TokvizError)


def test_character_coverage_and_sentence_length() -> None:
    lines = ["aaaa bbbb"] * 200 + ["z"]  # z is 1 of 1601 characters: below a 0.9995 coverage it goes
    history, sp = _train(lines=lines, vocab_size=12, model_type="bpe", character_coverage=0.9995)
    assert "z" not in history.alphabet and sp.encode("z") == [sp.piece_to_id("▁"), 0]
    history, _ = _train(lines=lines, vocab_size=12, model_type="bpe", character_coverage=1.0)
    assert "z" in history.alphabet
    history, _ = _train(lines=["a" * 50, "b b"], vocab_size=5, model_type="char", max_sentence_length=20)
    assert history.skipped_too_long == 1 and "a" not in history.alphabet


def test_char_and_word_models_match_sentencepiece() -> None:
    spm = pytest.importorskip("sentencepiece")
    for model_type in ("char", "word"):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(HUG), model_writer=out, vocab_size=30, model_type=model_type,
                                       hard_vocab_limit=False, minloglevel=2)
        theirs = [(p.piece, round(p.score, 4)) for p in ModelProto.from_bytes(out.getvalue()).pieces]
        history, sp = _train(vocab_size=30, model_type=model_type, hard_vocab_limit=False)
        ours = [(p.piece, round(p.score, 4)) for p in history.proto.pieces]
        assert ours == theirs, model_type
        ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
        for text in ("hug the pugs x", "hug éé"):
            assert sp.encode(text) == ref.encode(text) and sp.decode(sp.encode(text)) == ref.decode(ref.encode(text))


# -- history ----------------------------------------------------------------------------


def test_bpe_history_records_merges_and_gives_smaller_models() -> None:
    history, _ = _train(vocab_size=20, model_type="bpe")
    first = history.merge_steps[0]
    assert (first.rank, first.left, first.right, first.token, first.count) == (0, "u", "g", "ug", 30)
    assert history.min_vocab_size == 11 and history.max_vocab_size == 20
    small = history.proto_at(13)
    assert [p.piece for p in small.pieces][:5] == ["<unk>", "<s>", "</s>", "ug", "▁h"]
    assert len(small.pieces) == 13 and small.pieces[-1].score == -9.0
    assert history.model_at(13).get_vocab_size() == 13
    assert list(history.to_frame().columns[:4]) == ["rank", "left", "right", "token"]


def test_unigram_history_records_em_steps_and_prune_rounds(read_shared_corpus) -> None:
    lines = read_shared_corpus("tinyshakespeare.txt").split("\n")[:1500]
    history, sp = _train(lines=lines, vocab_size=300, model_type="unigram")
    steps, rounds = history.unigram.em_steps, history.unigram.prune_rounds
    assert steps and rounds and steps[0].sub_iteration == 0 and steps[1].sub_iteration == 1
    assert all(r.size_after < r.size_before for r in rounds)
    assert any(loss > 0 for r in rounds for _, loss in r.removed)
    assert len(history.proto.pieces) == 300 == sp.get_piece_size()
    assert len(history.proto_at(200).pieces) == 200


# -- properties -----------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TRICKY = st.text(alphabet=st.sampled_from(list(" \u3000\t\n▁aAé\u0301\u00a0ﬁ①１\u200b\x01<x>Ω한")), max_size=14)


@settings(max_examples=300, deadline=None)
@given(text=_TRICKY, rule=st.sampled_from(["nmt_nfkc", "nfkc_cf", "identity"]),
       options=st.sampled_from([{}, {"remove_extra_whitespaces": False}, {"add_dummy_prefix": False},
                                {"treat_whitespace_as_suffix": True}, {"escape_whitespaces": False},
                                {"user_defined_symbols": ["<x>", "a"]}]))
def test_fast_normalizer_equals_sentencepieces_loop(text: str, rule: str, options: dict) -> None:
    normalizer = SentencePieceNormalizer.from_rule(rule, **options)
    assert normalizer.normalize(text) == normalizer.normalize_reference(text)


def test_no_rule_maps_to_a_double_space() -> None:
    """What lets the fast normalizer collapse space runs after mapping (see its docstring)."""
    import struct

    for rule in ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"):
        charsmap = charsmap_for_rule(rule)
        (trie_size,) = struct.unpack("<I", charsmap[:4])
        replacements = charsmap[4 + trie_size:]  # NUL-terminated UTF-8 strings
        assert b" " in replacements and b"  " not in replacements


def test_charsmap_read_on_demand_equals_the_whole_trie() -> None:
    """The normalizer reads the trie only under the characters a text holds: per first character
    it must find exactly the rules the whole-trie walk finds."""
    from tokviz.sentencepiece.normalizer import _Trie

    for rule in ("nmt_nfkc", "nfkc_cf"):
        trie = _Trie(charsmap_for_rule(rule))
        whole = parse_charsmap(charsmap_for_rule(rule))
        by_first: dict[str, str] = {}
        for char in {key[0] for key in whole}:
            by_first.update(trie.rules_from(char))
        assert by_first == whole
    trie = _Trie(charsmap_for_rule("nmt_nfkc"))
    # halfwidth KA alone, with the halfwidth voiced mark, with the combining voiced mark
    assert trie.rules_from("ｶ") == {"ｶ": "カ", "ｶﾞ": "ガ", "ｶ\u3099": "ガ"}
    assert trie.rules_from("q") == {}
    n = SentencePieceNormalizer.from_rule("nmt_nfkc")
    assert n.normalize("ｶﾞｷ Ｈｉ") == "▁ガキ▁Hi"


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("hugpst é🤗 ")), max_size=20))
def test_decode_inverts_encode_with_byte_fallback(text: str) -> None:
    sp = _byte_fallback_processor()
    assert sp.decode(sp.encode(text)) == " ".join(text.split())


_CACHE: dict[str, tsp.SentencePieceProcessor] = {}


def _byte_fallback_processor() -> tsp.SentencePieceProcessor:
    if "bf" not in _CACHE:
        _CACHE["bf"] = _train(vocab_size=270, model_type="bpe", byte_fallback=True)[1]
    return _CACHE["bf"]


# -- the fast segmenters against the plain ones ------------------------------------------------


def _tiny_model(model_type: int, scored: list[tuple[str, float]], extra: tuple[SentencePiece, ...] = ()) -> "tsp.SentencePieceModel":
    from tokviz.sentencepiece.model import SentencePieceModel

    pieces = (SentencePiece("<unk>", 0, PieceType.UNKNOWN), *(SentencePiece(p, s) for p, s in scored), *extra)
    return SentencePieceModel(ModelProto(pieces=pieces, trainer_spec=TrainerSpec(model_type=model_type),
                                         normalizer_spec=NormalizerSpec(name="identity")))


# scores with ties (equal scores, and sums that tie: -1 + -1 == -2) so the order of candidates decides
_TIED = [("▁", -1.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("ba", -2.0), ("▁a", -2.0), ("aba", -3.0),
         ("bab", -3.0), ("▁ab", -3.0), ("c", -4.0), ("abc", -5.0), ("bc", -2.5), ("xa", -1.5)]


@given(st.text(alphabet="▁abcxy", max_size=24))
@settings(max_examples=400, deadline=None)
def test_unigram_automaton_equals_the_plain_walk(text: str) -> None:
    model = _tiny_model(1, _TIED, (SentencePiece("ca", -0.5, PieceType.UNUSED), SentencePiece("cy", 0, PieceType.USER_DEFINED)))
    assert model._automaton is not None
    assert model._automaton.viterbi(text) == model.encode_optimized(text)[0]
    if text.startswith("▁"):  # (a word's: read on from the state after its "▁")
        assert model._automaton.split(text, text[1:]) == model._automaton.split(text)


@given(st.text(alphabet="abcxyz", max_size=24))
@settings(max_examples=400, deadline=None)
def test_unigram_split_of_one_kind_is_that_kind_of_the_finished_word(tail: str) -> None:
    # (a word table's miss: pieces (kind 3) or ids (kind 2) alone, unknown characters merged as finish() merges them)
    model = _tiny_model(1, _TIED)
    automaton, word = model._automaton, "▁" + tail
    pieces, ids = model._finish_word(*automaton.split(word, tail))
    assert automaton.split(word, tail, 3) == pieces and automaton.split(word, tail, 2) == ids
    assert type(automaton.split(word, tail, 3)) is type(pieces)  # (a close word stays close)


def test_unigram_split_of_one_kind_worked_example() -> None:
    model = _tiny_model(1, _TIED)
    automaton = model._automaton
    assert automaton.split("▁abzzc", "abzzc") == (("▁ab", "z", "z", "c"), (9, 0, 0, 10))
    assert automaton.split("▁abzzc", "abzzc", 3) == ("▁ab", "zz", "c")  # (the unknown run merged)
    assert automaton.split("▁abzzc", "abzzc", 2) == (9, 0, 10)
    assert automaton.split("▁abc", "abc", 3) == ("▁a", "bc") and automaton.split("▁abc", "abc", 2) == (6, 12)  # (-4.5 against ▁ab c -7)


@given(st.text(alphabet="▁abcxy", max_size=24))
@settings(max_examples=400, deadline=None)
def test_bpe_pair_list_equals_the_queue(text: str) -> None:
    model = _tiny_model(2, _TIED)
    assert model._merge_scores is not None
    assert model._bpe_word(text) == model._bpe(text)


@pytest.mark.parametrize("model_type", [1, 2])
@given(words=st.lists(st.text(alphabet="ab.,x1!", min_size=1, max_size=6), max_size=8))
@settings(max_examples=300, deadline=None)
def test_word_table_cut_before_punctuation_equals_the_whole_word(model_type: int, words: list[str]) -> None:
    """A new word ending in cut characters is its stem's pieces and the rest's where no piece joins them
    ("b." is a piece here: never cut there; "x" is unknown: never cut next to it); both kinds, either
    first; unigram's Viterbi and BPE's merges alike."""
    scored = [("▁", -1.0), ("a", -1.0), ("b", -1.5), (".", -2.0), (",", -2.0), ("1", -3.0), ("!", -3.0),
              ("▁a", -1.5), ("ab", -2.0), ("b.", -1.0), ("..", -2.5), ("1!", -1.0)]
    text = " ".join(words)
    expected = _tiny_model(model_type, scored).encode(text)  # (the whole words' segmentation)
    for first in (False, True):
        fresh = _tiny_model(model_type, scored)
        for stem in {w.rstrip(".,1!") for w in words} - {""}:  # (stems met first, as in a text)
            fresh.encode_as(stem, first)
        assert fresh.encode_as(text, first) == [pair[first] for pair in expected], text
        assert fresh.encode_as(text, not first) == [pair[not first] for pair in expected], text


def test_unigram_automaton_worked_example() -> None:
    # "abc": ab(-2)+c(-4) = -6 ties a(-1)+bc(-2.5)... no: -3.5 wins; "xy": x is no piece, y neither -> unknowns
    model = _tiny_model(1, _TIED)
    assert model._automaton.viterbi("abcxy") == [("a", 2), ("bc", 12), ("x", 0), ("y", 0)]
    assert model.encode_as("ab xy", False) == ["▁ab", "▁", "xy"]
    assert model.encode_as("ab xy", True) == [9, 1, 0]


def test_word_by_word_encoding_equals_sentencepiece_with_unknowns_and_bytes(tmp_path: Path) -> None:
    spm = pytest.importorskip("sentencepiece")
    lines = ["the quick brown fox jumps over the lazy dog", "pack my box with five dozen liquor jugs",
             "Sphinx of black quartz, judge my vow!"] * 20
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    texts = ["zebra ¿qué? ÷ 42 ∑ x  y", "  lead", "日本 語 quartz", "ab\tc\u0007d", "quickbrown" * 30]  # (a long word: BPE's queue)
    for model_type, byte_fallback in (("unigram", False), ("unigram", True), ("bpe", False), ("bpe", True)):
        prefix = tmp_path / f"{model_type}{byte_fallback}"
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=60 if not byte_fallback else 300,
                                       model_type=model_type, byte_fallback=byte_fallback, hard_vocab_limit=False,
                                       minloglevel=2)
        theirs = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
        ours = tsp.SentencePieceProcessor(model_file=f"{prefix}.model")
        ids_first = tsp.SentencePieceProcessor(model_file=f"{prefix}.model")  # (each kind read from the other's table)
        for text in texts + lines[:3]:
            assert ours.encode_as_pieces(text) == theirs.encode_as_pieces(text), (model_type, byte_fallback, text)
            assert ours.encode(text) == theirs.encode(text), (model_type, byte_fallback, text)
            assert ids_first.encode(text) == theirs.encode(text), (model_type, byte_fallback, text)
            assert ids_first.encode_as_pieces(text) == theirs.encode_as_pieces(text), (model_type, byte_fallback, text)
            assert ours.encode(text, out_type=str, add_bos=True, reverse=True, emit_unk_piece=True) == \
                theirs.encode(text, out_type=str, add_bos=True, reverse=True, emit_unk_piece=True), (model_type, byte_fallback, text)


def test_llama_style_model_is_cut_before_runs_of_spaces_and_encodes_as_sentencepiece(tmp_path: Path) -> None:
    """Pieces of "▁" runs ("▁▁", "▁▁▁▁", as Llama 2's) may cross a "▁" after another "▁", never one
    after another character: the text is cut there, word by word, with sentencepiece's ids."""
    spm = pytest.importorskip("sentencepiece")
    lines = ["the quick brown fox jumps over the lazy dog", "def f(x):", "    if x:", "        return  x  +  1"] * 40
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "llama"), vocab_size=400, model_type="bpe",
                                   byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   allow_whitespace_only_pieces=True, split_digits=True, hard_vocab_limit=False, minloglevel=2)
    theirs = spm.SentencePieceProcessor(model_file=str(tmp_path / "llama.model"))
    ours = tsp.SentencePieceProcessor(model_file=str(tmp_path / "llama.model"))
    assert "▁▁▁▁" in ours.model.matchable and ours.model._by_runs and not ours.model._by_words
    for text in lines[:4] + ["  a  b\n\tc   ", "   lead", "trail   ", "🤗 ▁▁x", "", "x" * 80 + "    y"]:
        assert ours.encode(text) == theirs.encode(text), text
        assert ours.encode_as_pieces(text) == theirs.encode_as_pieces(text), text
        # the option paths read the same word tables
        assert ours.encode(text, add_bos=True, add_eos=True) == theirs.encode(text, add_bos=True, add_eos=True), text
        assert [(p.piece, p.id, p.surface, p.begin, p.end) for p in ours.encode(text, out_type="proto").pieces] == \
            [(p.piece, p.id, p.surface, p.begin, p.end) for p in theirs.encode(text, out_type="proto").pieces], text
    assert ours.encode(lines[1], return_type="offset_mapping")["ids"] == theirs.encode(lines[1])


def test_lazy_automaton_of_a_large_vocabulary_equals_the_eager_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large vocabulary's automaton makes its states as texts reach them: same segmentations."""
    import random

    import tokviz.sentencepiece.model as model_module

    extra = (SentencePiece("ca", -0.5, PieceType.UNUSED), SentencePiece("cy", 0, PieceType.USER_DEFINED))
    eager = _tiny_model(1, _TIED, extra)
    monkeypatch.setattr(model_module, "_EAGER_STATES", 0)
    lazy = _tiny_model(1, _TIED, extra)
    # (made at load: the root and the state after "▁", where every word starts)
    assert lazy._automaton.lazy and not eager._automaton.lazy and set(lazy._automaton.states) == {"", "▁"}
    rng = random.Random(35)
    for _ in range(500):
        text = "".join(rng.choice("▁abcxy") for _ in range(rng.randrange(30)))
        assert lazy._automaton.viterbi(text) == eager._automaton.viterbi(text) == eager.encode_optimized(text)[0], text


# -- unigram near ties: sentencepiece adds float32 scores along the whole line -------------------


def _near_tie_model() -> bytes:
    """a + bc and ab + c sum to the same float64 score but for the last bits: which one wins is
    decided by the rounding of the line's running float32 score, as sentencepiece adds it."""
    pieces = (SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("▁", -1.5), SentencePiece("x", -3.3),
              SentencePiece("a", -2.268728494644165), SentencePiece("b", -9.0), SentencePiece("c", -2.436046600341797),
              SentencePiece("ab", -3.5275492668151855), SentencePiece("bc", -3.6948673725128174))
    return ModelProto(pieces=pieces, trainer_spec=TrainerSpec(model_type=1), normalizer_spec=NormalizerSpec(name="identity")).to_bytes()


def test_unigram_near_tie_is_decided_by_the_lines_float32_score() -> None:
    sp = tsp.SentencePieceProcessor(model_proto=_near_tie_model())
    # three "x" words before "abc": the running score rounds the other way (sentencepiece 0.2.3's pieces)
    assert sp.encode_as_pieces("x x x abc") == ["▁", "x", "▁", "x", "▁", "x", "▁", "ab", "c"]
    assert sp.encode_as_pieces("x x abc") == ["▁", "x", "▁", "x", "▁", "a", "bc"]
    assert sp.encode_as_ids("x x x abc") == [1, 2, 1, 2, 1, 2, 1, 6, 5]
    assert sp.encode("x x x abc", add_bos=False, out_type=str, emit_unk_piece=False) == ["▁", "x", "▁", "x", "▁", "x", "▁", "ab", "c"]
    assert sp.nbest_encode_as_pieces("x x x abc", 1) == [["▁", "x", "▁", "x", "▁", "x", "▁", "ab", "c"]]
    assert sp.sample_encode_as_pieces("x x x abc", 1, 0.5) == ["▁", "x", "▁", "x", "▁", "x", "▁", "ab", "c"]
    # the whole-line walk (models whose lines are not cut into words) and sentencepiece's own, step by step
    model = sp.model
    assert model._automaton.viterbi("▁x▁x▁x▁abc")[-2:] == [("ab", 6), ("c", 5)]
    assert model.encode_optimized("▁x▁x▁x▁abc")[0][-2:] == [("ab", 6), ("c", 5)]
    assert model.encode_optimized("▁abc")[0] == [("▁", 1), ("a", 3), ("bc", 7)]


def test_unigram_near_ties_match_sentencepiece_along_lines_and_past_the_reset() -> None:
    spm = pytest.importorskip("sentencepiece")
    blob = _near_tie_model()
    theirs, ours = spm.SentencePieceProcessor(model_proto=blob), tsp.SentencePieceProcessor(model_proto=blob)
    # up to ~60,000 words: sentencepiece moves its scores back once the running one passes 100,000 in size
    texts = ["x " * n + "abc" for n in range(40)] + ["x " * n + "abc x abc" for n in (2_000, 20_000, 21_000, 60_000)]
    texts.append(" ".join(["x x x abc"] * 30_000))
    for text in texts:
        assert ours.encode_as_pieces(text) == theirs.encode_as_pieces(text), len(text)
        assert ours.encode_as_ids(text) == theirs.encode_as_ids(text), len(text)
        assert ours.nbest_encode_as_ids(text[-2_000:], 1) == theirs.nbest_encode_as_ids(text[-2_000:], 1)


def test_unigram_near_tie_after_thousands_of_words_added_up_by_binade() -> None:
    """A long line's words are added up a binade of float32 at a time (each piece's score rounded to the
    binade's spacing, :class:`_Rounded`); the near tie at its end falls as sentencepiece 0.2.3 decides it:
    the running score before "abc" is -4.8 a word, rounded along the way, past the reset at 21,000 words."""
    from tokviz.sentencepiece.model import _Rounded

    sp = tsp.SentencePieceProcessor(model_proto=_near_tie_model())
    found = {n: tuple(sp.encode_as_pieces("x " * n + "abc")[-3:]) for n in (106, 107, 1_000, 5_000, 13_000, 21_000, 30_000)}
    assert found == {106: ("▁", "a", "bc"), 107: ("▁", "ab", "c"), 1_000: ("▁", "a", "bc"), 5_000: ("▁", "ab", "c"),
                     13_000: ("▁", "a", "bc"), 21_000: ("▁", "ab", "c"), 30_000: ("▁", "a", "bc")}
    assert sp.encode_as_ids("x xx " * 2_000 + "abc")[-3:] == [1, 6, 5]
    assert sp.encode_as_pieces("x xx " * 2_000 + "abc")[-3:] == ["▁", "ab", "c"]
    # within [16384, 32768] the spacing is 2**-9: -3.3 (float32 -3.2999999523) moves a score by 1690 / 512
    assert _Rounded({"x": -3.3}, 15)["x"] == 1690 / 512 and _Rounded({"x": -3.3}, 10)["x"] == 54067 / 2**14


def test_unigram_near_tie_after_words_holding_unknowns() -> None:
    """"qq" is no piece: two unknown nodes (min score - 10 = -19.3 each) merged into one piece; a long
    line's sum counts a node a character (counted once, the tie after 500 words fell the other way)."""
    proto = ModelProto.from_bytes(_near_tie_model())
    pieces = tuple(SentencePiece("b", -9.3) if piece.piece == "b" else piece for piece in proto.pieces)
    blob = proto.replace(pieces=pieces).to_bytes()
    sp = tsp.SentencePieceProcessor(model_proto=blob)
    assert sp.encode_as_pieces("x qq abc") == ["▁", "x", "▁", "qq", "▁", "a", "bc"]
    assert sp.encode_as_pieces("x qq " * 500 + "abc")[-3:] == ["▁", "ab", "c"]
    assert sp.encode_as_pieces("x qq " * 1_000 + "abc")[-3:] == ["▁", "a", "bc"]
    assert sp.encode_as_ids("x qq " * 500 + "abc")[-3:] == [1, 6, 5]
    assert sp.encode_as_ids("x qq " * 1_000 + "abc")[-3:] == [1, 3, 7]


def test_user_defined_pieces_score_as_sentencepiece_0_2_3() -> None:
    """0.1 * (length - 1) (bytes in its Viterbi, characters in its lattice): "ab" (user-defined, 0.1)
    beats a + bc (-0.02) where the older rule (length * max score - 0.1 = -0.1) did not."""
    pieces = (SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("ab", 0, PieceType.USER_DEFINED),
              SentencePiece("a", -0.01), SentencePiece("bc", -0.01), SentencePiece("c", -0.01), SentencePiece("b", -0.01),
              SentencePiece("▁", -0.01), SentencePiece("é", 0, PieceType.USER_DEFINED), SentencePiece("éé", -0.05))
    blob = ModelProto(pieces=pieces, trainer_spec=TrainerSpec(model_type=1),
                      normalizer_spec=NormalizerSpec(name="identity", add_dummy_prefix=False)).to_bytes()
    sp = tsp.SentencePieceProcessor(model_proto=blob)
    assert sp.encode_as_pieces("abc") == ["ab", "c"]
    assert sp.nbest_encode_as_pieces("abc", 3) == [["ab", "c"], ["a", "bc"], ["a", "b", "c"]]
    assert sp.encode_as_pieces("éé") == ["é", "é"]  # ("é" is two bytes: 0.1 each in the Viterbi)
    spm = pytest.importorskip("sentencepiece")
    theirs = spm.SentencePieceProcessor(model_proto=blob)
    for text in ("abc", "xabc", "éé", "éééabcé", "ab éé"):
        assert sp.encode_as_pieces(text) == theirs.encode_as_pieces(text), text
        assert sp.nbest_encode_as_pieces(text, 4) == theirs.nbest_encode_as_pieces(text, 4), text


def test_unigram_corpus_lines_that_float64_decided_otherwise(read_shared_corpus) -> None:
    """A 1,000-piece model sentencepiece trains on the bench's botchan-sized slice of big.txt decides
    "base" as ▁b a se where float64 sums decide ▁b as e (0.0002 apart at a running score of ~-1,966):
    53 of 59,830 corpus lines were encoded otherwise before the line's float32 score was followed."""
    spm = pytest.importorskip("sentencepiece")
    big, wiki = read_shared_corpus("big.txt"), read_shared_corpus("wikitext2_test.txt")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(big[:278_000].split("\n")), model_writer=out, vocab_size=1000,
                                   model_type="unigram", num_threads=1, minloglevel=2)
    theirs, ours = spm.SentencePieceProcessor(model_proto=out.getvalue()), tsp.SentencePieceProcessor(model_proto=out.getvalue())
    case = next(line for line in big.split("\n") if "waiting-maid. Well, the temptation" in line)
    case = case[:case.index("jewel-case") + len("jewel-case")]
    assert ours.encode_as_pieces(case)[-6:] == ["w", "el", "-", "c", "a", "se"]
    flank = next(line for line in wiki.split("\n") if "southern @-@ most flank" in line)
    flank = flank[:flank.index("the base") + len("the base")]
    assert ours.encode_as_pieces(flank)[-6:] == ["▁lay", "▁at", "▁the", "▁b", "a", "se"]
    lines = [line for line in (big + wiki).split("\n") if "ase" in line]
    assert [ours.encode_as_pieces(line) for line in lines] == [theirs.encode_as_pieces(line) for line in lines]


def test_unigram_model_with_scores_past_the_float32_range_walks_each_line() -> None:
    """A piece scored -20,000: a line's scores may pass 2**17 before sentencepiece's reset brings them back,
    where a float32 ulp outgrows any word's margin: no automaton, each line walked as sentencepiece walks it."""
    blob = ModelProto.from_bytes(_near_tie_model())
    blob = blob.replace(pieces=(*blob.pieces, SentencePiece("zz", -20_000.0))).to_bytes()
    sp = tsp.SentencePieceProcessor(model_proto=blob)
    assert sp.model._automaton is None and not sp.model._by_words
    assert sp.encode_as_pieces("zz abc") == ["▁", "zz", "▁", "ab", "c"]  # (-20,001.5 rounds the tie the other way)
    spm = pytest.importorskip("sentencepiece")
    theirs = spm.SentencePieceProcessor(model_proto=blob)
    for text in ["x " * n + "abc zz abc" for n in (0, 3, 50, 3_000)] + ["zz " * 30 + "abc"]:
        assert sp.encode_as_pieces(text) == theirs.encode_as_pieces(text)
        assert sp.encode_as_ids(text) == theirs.encode_as_ids(text)


def test_unigram_near_ties_with_threads_sharing_a_processor() -> None:
    """Lines read close words on other threads meanwhile: each line's check counts its own reads."""
    from concurrent.futures import ThreadPoolExecutor

    spm = pytest.importorskip("sentencepiece")
    blob = _near_tie_model()
    theirs, ours = spm.SentencePieceProcessor(model_proto=blob), tsp.SentencePieceProcessor(model_proto=blob)
    texts = [f"{'x ' * (n % 13)}abc {'x ' * (n % 7)}abc" for n in range(600)]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(ours.encode_as_pieces, texts))
    assert found == [theirs.encode_as_pieces(text) for text in texts]
