"""tokviz.audit: worked examples on hand-built vocabularies for every finding, parity of the own-text verdict
with HF ``tokenizers`` and ``sentencepiece`` on trained tokenizers of each model kind, witnesses checked by encoding."""

from __future__ import annotations

import json
import math

import pytest

from tokviz import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from tokviz.added_vocabulary import AddedToken
from tokviz.audit import (
    REACHABLE,
    UNDECIDED,
    UNREACHABLE,
    AuditError,
    MergeEngine,
    audit,
    normalizer_kill,
    pre_tokenizer_split,
    utf8_parts,
)
from tokviz.byte_level import BYTES_TO_UNICODE, bytes_to_symbols
from tokviz.samples import load_sample


def bpe(vocab: list[str], merges: list[tuple[str, str]], **options) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE({token: index for index, token in enumerate(vocab)}, merges, **options))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


# ------------------------------------------------------------------------------------------ own text, merge order


def test_bpe_merge_order_makes_a_token_unreachable_with_the_merge_named():
    # 'b c' is merged before 'a b', so 'abc' (made of 'ab' + 'c') never forms: 'bc' takes the 'b' first.
    tokenizer = bpe(["a", "b", "c", "bc", "ab", "abc"], [("b", "c"), ("a", "b"), ("ab", "c")])
    report = audit(tokenizer)
    abc = report.verdict("abc")
    assert abc.status == UNREACHABLE
    assert abc.segmentation == ("a", "bc")
    assert abc.reason == (
        "unreachable: the merges inside its span run as on its symbols alone (a merge with a neighbour would make a "
        "symbol that sticks out of it), and alone they end as a bc; merge #0 ('b' + 'c' → 'bc') takes a part first"
    )
    assert report.verdict("ab").status == REACHABLE and report.verdict("ab").witness == "ab"
    own = report.finding("own_text")
    assert [(item.tokens, item.detail) for item in own.items] == [(("abc",), "a bc")]
    assert [item.tokens for item in report.finding("unreachable").items] == [("abc",)]
    assert report.finding("unreachable").share == pytest.approx(1 / 6)


def test_bpe_token_no_merge_makes():
    tokenizer = bpe(["a", "b", "ab", "ba"], [("a", "b")])
    verdict = audit(tokenizer).verdict("ba")
    assert verdict.status == UNREACHABLE
    assert verdict.reason == "unreachable: no merge makes it, and it is 2 symbols long; its symbols alone end as b a"


def test_merge_engine_leftmost_among_equal_ranks():
    engine = MergeEngine({"a": 0, "aa": 1}, [("a", "a")], "")
    assert engine.apply(["a", "a", "a"]) == ["aa", "a"]


def test_context_witness_for_a_token_its_own_text_does_not_give():
    # 'bc' alone becomes 'bc'... but give it a suffix model where the word end decides: CharBPE's '</w>'.
    vocab = ["a", "b", "b</w>", "a</w>", "ab", "ab</w>"]
    tokenizer = bpe(vocab, [("a", "b"), ("a", "b</w>")], end_of_word_suffix="</w>")
    report = audit(tokenizer)
    ab = report.verdict("ab")  # 'ab' not at a word's end: alone 'ab' is 'ab</w>'
    assert ab.segmentation == ("ab</w>",)
    assert ab.status == REACHABLE and ab.witness == "abs"  # 's' has no symbol and no unk token: BPE drops it
    assert tokenizer.encode("abs").tokens == ["ab"]
    assert report.verdict("ab</w>").status == REACHABLE


# ------------------------------------------------------------------------------------------ normalizers, pre-tokenizers


def test_uppercase_under_lowercase_and_composed_under_nfd_are_unreachable():
    tokenizer = bpe(["a", "A", "é", "e", "\u0301"], [])
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    report = audit(tokenizer)
    assert report.verdict("A").reason == "unreachable: the normalizer's Lowercase never outputs U+0041 'A': no character lowercases to it"
    assert report.verdict("é").reason == (
        "unreachable: the normalizer's NFD never outputs U+00C9 'É': it becomes U+0045 U+0301; "
        "the normalizer's NFD never outputs U+00E9 'é': it becomes U+0065 U+0301")
    assert report.verdict("a").status == REACHABLE
    assert report.verdict("\u0301").status == REACHABLE  # NFD makes combining marks


def test_normalizer_kill_walks_back_through_steps_that_only_remove():
    nfd_then_strip = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]}
    assert normalizer_kill(nfd_then_strip, "é") is not None  # NFD kills it, StripAccents only removes
    assert normalizer_kill(nfd_then_strip, "\u0301") == "the normalizer's StripAccents removes every combining mark such as U+0301 '́'"
    nfd_then_nfc = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFC"}]}
    assert normalizer_kill(nfd_then_nfc, "é") is None  # NFC composes it again
    assert normalizer_kill({"type": "Lowercase"}, "a") is None


def test_bert_pre_tokenizer_punctuation_and_wordpiece_continuation():
    vocab = ["[UNK]", "a", "b", "x", "ab", "##b", "##.", ".", "a.", "a b"]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    report = audit(tokenizer)
    assert report.verdict("##.").reason == "unreachable: the pre-tokenizer BertPreTokenizer makes every '.' a word of its own"
    assert report.verdict("a.").reason == "unreachable: the pre-tokenizer BertPreTokenizer makes every '.' a word of its own"
    assert report.verdict("a b").reason == "unreachable: the pre-tokenizer BertPreTokenizer splits at every whitespace character such as ' '"
    continuation = report.verdict("##b")
    assert continuation.own_text == "b" and continuation.segmentation == ("##b",)  # the continuation of a word
    assert continuation.status == REACHABLE and continuation.witness == "xb"  # 'ab' is one token: 'a' + 'b' never cuts there
    assert tokenizer.encode("xb").tokens == ["x", "##b"]
    assert report.verdict("[UNK]").status == REACHABLE and report.verdict("[UNK]").witness is not None


def test_wordpiece_continuation_without_a_witness_is_undecided_with_the_bound():
    # '2b' would be a witness, but '2' is neither one of the letters tried nor a word made of letters
    vocab = ["[UNK]", "2", "##b"]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    verdict = audit(tokenizer).verdict("##b")
    assert verdict.status == UNDECIDED
    assert verdict.reason == ("cannot decide: no proof applies, and no witness among 19 contexts around its text "
                              "(one character, or one of the vocabulary's 8 longest whole words, before or after it)")
    assert tokenizer.encode("2b").tokens == ["2", "##b"]  # so it is reachable: the audit did not guess


def test_a_whole_word_of_the_vocabulary_is_the_left_context_a_continuation_needs():
    vocab = ["[UNK]", "a", "ab", "##b"]  # 'a' + 'b' is the token 'ab': only after the word 'ab' does '##b' appear
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    verdict = audit(tokenizer).verdict("##b")
    assert verdict.status == REACHABLE and verdict.witness == "abb"
    assert tokenizer.encode("abb").tokens == ["ab", "##b"]


def test_pre_tokenizer_split_rules():
    assert pre_tokenizer_split({"type": "Whitespace"}, "a.", False) == (
        "the pre-tokenizer Whitespace always splits a run of letters or digits from a run of punctuation")
    assert pre_tokenizer_split({"type": "Whitespace"}, "ab", False) is None
    assert pre_tokenizer_split({"type": "ByteLevel"}, "a.", False) is None  # a regex: decides nothing
    digits = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}]}
    assert pre_tokenizer_split(digits, "12", False) == "the pre-tokenizer Digits makes every digit a word of its own"


# ------------------------------------------------------------------------------------------ Unigram


def test_unigram_piece_beaten_on_its_own_string_is_unreachable():
    tokenizer = Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -3.0), ("c", -1.0), ("bc", -1.5)], unk_id=0))
    report = audit(tokenizer)
    verdict = report.verdict("ab")
    assert verdict.status == UNREACHABLE
    assert verdict.segmentation == ("a", "b")
    assert verdict.reason == ("unreachable: its own string segments as a b with log-probability -2.0000 > -3.0000 for the piece; "
                              "that swap beats every path through the piece in any context")
    assert report.verdict("bc").status == REACHABLE


def test_unigram_metaspace_piece_is_a_space_and_continuation_pieces_find_a_context():
    pieces = [("<unk>", 0.0), ("▁", -2.0), ("a", -2.0), ("b", -2.0), ("▁a", -1.0), ("▁ab", -1.5), ("ba", -0.5)]
    tokenizer = Tokenizer(models.Unigram(pieces, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    report = audit(tokenizer)
    assert report.verdict("▁ab").own_text == " ab" and report.verdict("▁ab").shown == " ab"
    assert report.verdict("▁ab").status == REACHABLE
    ba = report.verdict("ba")
    assert ba.segmentation == ("▁", "ba") and ba.status == REACHABLE
    assert "ba" in tokenizer.encode(ba.witness).tokens


def test_metaspace_split_makes_a_piece_with_an_inner_marker_unreachable():
    pieces = [("<unk>", 0.0), ("▁", -2.0), ("a", -2.0), ("b", -2.0), ("▁a", -1.0), ("▁a▁b", -0.1)]
    tokenizer = Tokenizer(models.Unigram(pieces, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    verdict = audit(tokenizer).verdict("▁a▁b")
    assert verdict.segmentation == ("▁a", "▁", "b")
    assert verdict.reason == ("unreachable: the pre-tokenizer Metaspace starts a new word at every '▁', "
                              "and this token holds one after its start")


# ------------------------------------------------------------------------------------------ bytes


def test_utf8_parts_literal():
    assert utf8_parts("中".encode()[:2]) == "the first 2 bytes of a character (1 of 64: 一, 丁, 丂, 七…)"
    assert utf8_parts("é".encode()[1:]) == "a continuation byte of a character (1 of 51,102: ©, é, ĩ, ũ…)"
    assert utf8_parts(b"ab") is None


def byte_level_bpe(merges: list[tuple[str, str]]) -> Tokenizer:
    alphabet = [BYTES_TO_UNICODE[b] for b in range(256)]
    vocab = alphabet + [left + right for left, right in merges]
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def test_partial_utf8_tokens_with_their_characters_and_witnesses():
    head = bytes_to_symbols("中".encode()[:2])  # 'ä¸'
    tokenizer = byte_level_bpe([(head[0], head[1]), ("Ġ", "t")])
    report = audit(tokenizer)
    partial = {item.tokens[0]: item for item in report.finding("partial_utf8").items}
    assert partial[head].reason == "its bytes are not UTF-8 alone: the first 2 bytes of a character (1 of 64: 一, 丁, 丂, 七…)"
    assert report.verdict(head).status == REACHABLE and report.verdict(head).witness == "一"
    assert tokenizer.encode("一").tokens == [head, "Ģ"]
    # 0xC0, 0xC1 and 0xF5-0xFF are in no UTF-8 text
    assert report.verdict("À").reason == "unreachable: no UTF-8 text holds the bytes c0, and byte-level pre-tokenizers see only UTF-8"
    assert report.verdict("Ġt").own_text == " t" and report.verdict("Ġt").status == REACHABLE
    assert sum(1 for v in report.verdicts if v.status == UNREACHABLE) == 13  # C0, C1, F5..FF


def test_byte_fallback_tokens_duplicates_and_the_byte_symbol_proof():
    vocab = ["<unk>", "A", "b", "<0x41>", "<0xC3>", "<0xA9>"]
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, [], unk_token="<unk>", byte_fallback=True))
    report = audit(tokenizer)
    assert report.verdict("<0x41>").reason == (
        "unreachable: the byte 0x41 occurs only in the character 'A', which the vocabulary has as a symbol, so it never falls back to bytes")
    assert report.verdict("<0xC3>").status == REACHABLE
    assert "<0xC3>" in tokenizer.encode(report.verdict("<0xC3>").witness).tokens
    duplicates = report.finding("duplicates").items
    assert [(item.tokens, item.reason) for item in duplicates] == [(("A", "<0x41>"), "2 tokens decode to 'A'")]


# ------------------------------------------------------------------------------------------ texts


def test_round_trip_failures_by_cause_and_unused_tokens():
    vocab = ["[UNK]", "hello", "a", "b", "##b"]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece()
    report = audit(tokenizer, ["Hello", "a  b", "☃", "hello"])
    assert report.round_trip_counts == (("unknown token", 1), ("whitespace handling", 1), ("normalization", 1))
    assert [(e.text, e.decoded, e.cause) for e in report.round_trip_examples] == [
        ("Hello", "hello", "normalization"), ("a  b", "a b", "whitespace handling"), ("☃", "[UNK]", "unknown token")]
    unused = report.finding("unused")
    assert [item.tokens for item in unused.items] == [("##b",)]
    assert unused.share == pytest.approx(1 / 5)


def test_residues_from_texts_replay_the_merges():
    tokenizer = bpe(["a", "b", "c", "ab", "abc"], [("a", "b"), ("ab", "c")])
    report = audit(tokenizer, ["abc abc abc ab"])
    residues = {r.token: (r.f1, r.f2) for r in report.residues}
    assert residues == {"ab": (1, 3), "abc": (3, 0)}
    assert [r.token for r in report.residues_below(0.5)] == ["ab"]
    assert report.residues_below(0.5)[0].r == 0.25
    assert report.residue_source == "the given texts"


def test_residues_from_a_training_history():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(["abc abc abc ab"], trainers.BpeTrainer(vocab_size=5, show_progress=False))
    history = tokenizer.training_history
    assert [(m.left, m.right, m.count) for m in history.merges] == [("a", "b", 4), ("ab", "c", 3)]
    report = audit(tokenizer, history=history)
    assert {r.token: (r.f1, r.f2) for r in report.residues} == {"ab": (1, 3), "abc": (3, 0)}
    assert report.residue_source == "the training history"


def test_special_tokens_plain_text_produces():
    tokenizer = bpe(["a", "b"], [])
    tokenizer.add_special_tokens(["<|end|>"])
    tokenizer.add_special_tokens([AddedToken("<|single|>", single_word=True)])
    report = audit(tokenizer)
    items = report.finding("special_from_text").items
    assert [item.tokens for item in items] == [("<|end|>",), ("<|single|>",)]
    assert items[0].witness == "<|end|>"
    assert report.verdict("<|end|>").status == "added token"


def test_report_json_and_summary():
    tokenizer = bpe(["a", "b", "c", "bc", "ab", "abc"], [("b", "c"), ("a", "b"), ("ab", "c")])
    report = audit(tokenizer, "abc\nab\n")
    data = json.loads(report.to_json(0.5))
    assert data["findings"]["unreachable"]["count"] == 1
    assert data["residues"]["threshold"] == 0.5
    rows = {row["finding"]: row["tokens"] for row in report.summary()}
    assert rows["Unreachable at all"] == 1 and rows["Round-trip failures"] == 1  # 'abc' comes back as 'a bc'


def test_progress_is_reported_and_ends_at_one():
    seen = []
    audit(bpe(["a", "b", "ab"], [("a", "b")]), ["ab"], progress=lambda fraction, message: seen.append(fraction))
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_an_unknown_model_kind_is_a_clear_error():
    class Odd:
        def to_str(self):
            return json.dumps({"model": {"type": "Mystery"}})

    with pytest.raises(AuditError, match="not 'Mystery'"):
        audit(Odd())


# ------------------------------------------------------------------------------------------ parity with HF


def _trained_hf(kind: str):
    tokenizers = pytest.importorskip("tokenizers")
    lines = [line for line in load_sample().splitlines() if line.strip()]
    hf = tokenizers
    if kind == "bpe":
        tok = hf.Tokenizer(hf.models.BPE())
        tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = hf.decoders.ByteLevel()
        trainer = hf.trainers.BpeTrainer(vocab_size=800, initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(),
                                         special_tokens=["<|endoftext|>"], show_progress=False)
    elif kind == "wordpiece":
        tok = hf.Tokenizer(hf.models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = hf.normalizers.BertNormalizer()
        tok.pre_tokenizer = hf.pre_tokenizers.BertPreTokenizer()
        tok.decoder = hf.decoders.WordPiece()
        trainer = hf.trainers.WordPieceTrainer(vocab_size=800, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
    elif kind == "unigram":
        tok = hf.Tokenizer(hf.models.Unigram())
        tok.normalizer = hf.normalizers.NFKC()
        tok.pre_tokenizer = hf.pre_tokenizers.Metaspace()
        tok.decoder = hf.decoders.Metaspace()
        trainer = hf.trainers.UnigramTrainer(vocab_size=800, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False)
    else:
        tok = hf.Tokenizer(hf.models.WordLevel(unk_token="[UNK]"))
        tok.normalizer = hf.normalizers.Lowercase()
        tok.pre_tokenizer = hf.pre_tokenizers.Whitespace()
        trainer = hf.trainers.WordLevelTrainer(vocab_size=800, special_tokens=["[UNK]"], show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return tok, lines


def _hf_continuation(hf_tokenizer, text: str) -> tuple[str, ...]:
    """HF's WordPiece on ``text`` as a word's continuation: a model whose pieces are the ## pieces without ##."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = hf_tokenizer.get_vocab(with_added_tokens=False)
    stripped = {token[2:]: index for token, index in vocab.items() if token.startswith("##")}
    stripped.setdefault("[UNK]", vocab["[UNK]"])
    model = tokenizers.models.WordPiece(stripped, unk_token="[UNK]", continuing_subword_prefix="")
    normalized = hf_tokenizer.normalizer.normalize_str(text)
    words = [word for word, _ in hf_tokenizer.pre_tokenizer.pre_tokenize_str(normalized)]
    if not words:
        return ()
    first = tuple("[UNK]" if t.value == "[UNK]" else "##" + t.value for t in model.tokenize(words[0]))
    rest = tuple(t.value for word in words[1:] for t in hf_tokenizer.model.tokenize(word))
    return first + rest


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram", "wordlevel"])
def test_own_text_verdict_and_witnesses_match_hf(kind):
    hf_tokenizer, lines = _trained_hf(kind)
    tokenizer = Tokenizer.from_str(hf_tokenizer.to_str())
    report = audit(tokenizer, lines[:200])
    checked = 0
    for verdict in report.verdicts:
        if verdict.status == "added token" or verdict.own_text is None or verdict.own_text == "":
            continue
        if kind == "wordpiece" and verdict.token.startswith("##"):
            reference = _hf_continuation(hf_tokenizer, verdict.own_text)
        else:
            reference = tuple(hf_tokenizer.encode(verdict.own_text, add_special_tokens=False).tokens)
        assert verdict.segmentation == reference, verdict
        checked += 1
    assert checked >= 0.9 * sum(1 for v in report.verdicts if v.status != "added token" and v.own_text)
    for verdict in report.verdicts:
        if verdict.witness is not None:
            assert verdict.id in hf_tokenizer.encode(verdict.witness, add_special_tokens=False).ids, verdict
        if verdict.status == UNREACHABLE:
            assert verdict.witness is None
    assert all(v.status in (REACHABLE, UNREACHABLE, UNDECIDED, "added token") for v in report.verdicts)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_own_text_verdict_matches_sentencepiece(tmp_path, model_type):
    spm = pytest.importorskip("sentencepiece")
    from tokviz import load

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(load_sample(), encoding="utf-8")
    prefix = str(tmp_path / model_type)
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=prefix, vocab_size=600, model_type=model_type,
                                   minloglevel=2, byte_fallback=model_type == "bpe")
    processor = spm.SentencePieceProcessor(model_file=prefix + ".model")
    report = audit(load(prefix + ".model"))
    unk = processor.unk_id()
    checked = 0
    for verdict in report.verdicts:
        if verdict.status == "added token" or not verdict.own_text:
            continue
        assert verdict.segmentation == tuple(processor.encode(verdict.own_text, out_type=str)), verdict
        checked += 1
        if verdict.witness is not None and verdict.id != unk:
            assert verdict.id in processor.encode(verdict.witness), verdict
    assert checked > 400
    assert not math.isnan(report.finding("reachable").share)


def test_every_file_kind_tokviz_loads_is_audited(tmp_path):
    import base64

    from tokviz import load
    from tokviz.byte_level import bytes_to_symbols

    ranks = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b" a", "中".encode()[:2]]
    (tmp_path / "toy.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks)))
    (tmp_path / "vocab.txt").write_text("[UNK]\n[CLS]\nhello\n##lo\nhel\n##.\n")
    vocab = {bytes_to_symbols(bytes([b])): b for b in range(256)} | {"ab": 256, "abc": 257}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\nab c\n")

    tiktoken = audit(load(tmp_path / "toy.tiktoken", tiktoken_encoding="cl100k_base"), ["abc ab"])
    assert tiktoken.finding("unreachable").count == 13
    assert tiktoken.verdict("abc").witness == "abc"
    head = bytes_to_symbols("中".encode()[:2])
    assert tiktoken.verdict(head).status == REACHABLE and tiktoken.verdict(head).witness == "一"
    assert [item.tokens for item in tiktoken.finding("special_from_text").items][0] == ("<|endoftext|>",)
    assert {r.token: (r.f1, r.f2) for r in tiktoken.residues}["ab"] == (1, 1)

    bert = audit(load(tmp_path / "vocab.txt"))
    assert bert.verdict("##.").status == UNREACHABLE
    assert bert.verdict("##lo").witness == "hellolo"  # after the whole word 'hello', greedy matching cuts right there

    gpt2 = audit(load(tmp_path / "vocab.json"), ["abc ab"])
    assert gpt2.verdict("abc").own_text_ok and gpt2.finding("unreachable").count == 13
    assert {r.token: (r.f1, r.f2) for r in gpt2.residues} == {"ab": (1, 1), "abc": (1, 0)}


def test_a_pipeline_that_prepends_the_marker_gives_the_own_text_without_its_space():
    # Llama 2's legacy form: Replace(' ', '▁') then Prepend('▁'), no pre-tokenizer: '▁the' comes from 'the'
    vocab = ["▁", "t", "h", "e", "▁t", "▁th", "▁the", "th", "the"]
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, [("▁", "t"), ("▁t", "h"), ("▁th", "e"), ("t", "h"), ("th", "e")]))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(" ", "▁"), normalizers.Prepend("▁")])
    report = audit(tokenizer)
    the = report.verdict("▁the")
    assert (the.own_text, the.segmentation, the.shown) == ("the", ("▁the",), " the")
    assert tokenizer.encode(" the").tokens == ["▁", "▁the"]  # the space typed too would be doubled
    inner = report.verdict("the")  # a piece inside a word: its own text gets the prefix, a context finds it
    assert inner.segmentation == ("▁the",) and inner.status == REACHABLE and "the" in tokenizer.encode(inner.witness).tokens
    assert report.finding("duplicates").count == 0  # ' the' and 'the' differ


def test_a_lead_byte_whose_characters_all_have_symbols_never_falls_back():
    chars = [bytes([0xC3, second]).decode("utf-8") for second in range(0x80, 0xC0)]
    vocab = ["<unk>", "<0xC3>", "<0xC4>", "<0x80>"] + chars
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, [], unk_token="<unk>", byte_fallback=True))
    report = audit(tokenizer)
    assert report.verdict("<0xC3>").reason == ("unreachable: the byte 0xC3 occurs only in 64 characters (À to ÿ), and the "
                                               "vocabulary has each as a symbol, so none falls back to bytes")
    assert report.verdict("<0xC4>").status == REACHABLE  # 'Ā' is no symbol: it falls back to C4 80


def test_a_real_sentencepiece_model_own_texts_and_witnesses_match_sentencepiece():
    """Mistral v1's tokenizer.model (32,000 pieces, byte fallback, Llama's legacy Prepend form) from the catalog."""
    spm = pytest.importorskip("sentencepiece")
    from tokviz import catalog

    if "Mistral v1" not in [entry.name for entry in catalog.available()]:
        pytest.skip("mistral-common is not installed (requirements.txt installs it)")
    processor = spm.SentencePieceProcessor(model_proto=catalog.file_bytes("Mistral v1"))
    report = audit(catalog.load("Mistral v1"))
    checked = 0
    for verdict in report.verdicts:
        if verdict.status != "added token" and verdict.own_text:
            assert verdict.segmentation == tuple(processor.encode(verdict.own_text, out_type=str)), verdict
            checked += 1
        if verdict.witness is not None and verdict.id != processor.unk_id():
            assert verdict.id in processor.encode(verdict.witness), verdict
    assert checked == 31_869
    assert report.verdict("▁the").own_text == "the"
    assert report.finding("undecided").count == 0
    assert report.verdict("<unk>").reason == ("unreachable: the unknown token, and byte fallback spells every character the "
                                              "vocabulary lacks with its bytes (all 256 <0xNN> tokens are in the vocabulary)")


def test_merge_engine_equals_the_plain_rank_loop_on_random_words():
    """The heap replay (O(n log n)) against the plain loop 'lowest rank first, leftmost among equals', merges recorded."""
    import random

    def plain(symbols, ranks):
        symbols, steps = list(symbols), []
        while len(symbols) > 1:
            pairs = [(ranks[pair][0], index) for index, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
            if not pairs:
                break
            _, where = min(pairs)
            new = ranks[(symbols[where], symbols[where + 1])][1]
            steps.append((symbols[where], symbols[where + 1], new))
            symbols[where: where + 2] = [new]
        return symbols, steps

    rng = random.Random(37)
    for _ in range(2000):
        alphabet = "abc"[: rng.randint(1, 3)]
        vocab, merges = set(alphabet), []
        for _ in range(rng.randint(0, 8)):
            pair = (rng.choice(sorted(vocab)), rng.choice(sorted(vocab)))
            if pair not in merges:
                merges.append(pair)
                vocab.add(pair[0] + pair[1])
        engine = MergeEngine({token: index for index, token in enumerate(sorted(vocab))}, merges, "")
        word = [rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
        steps = []
        assert (engine.apply(word, lambda *step: steps.append(step)), steps) == plain(word, engine.ranks), (word, merges)
