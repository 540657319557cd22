"""The chunk-cached fast path (tokviz.engine.cut) against the general path and HF.

Each pipeline kind of issue 13 is built with HF ``tokenizers`` (trained on a slice of the
shared corpora, with the real tokenizers' components) and loaded by tokviz. On random text
(ASCII, whitespace of every kind, accents, combining marks, CJK, emoji, '▁', controls) the
fast path must give exactly what the general path gives: ids, tokens, offsets, word ids.
"""

from __future__ import annotations

import functools
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz import Tokenizer, _mutation, pre_tokenizers
from tokviz.engine import fields as engine_fields
from tokviz.engine.cut import encode_cut
from tokviz.engine.plan import build_plan
from tokviz.pre_tokenizers import GPT2_PATTERN

hf = pytest.importorskip("tokenizers")

CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
# clip_converted: as transformers' CLIP converter writes it, ByteLevel with its own regex after the split.
KINDS = ("wordlevel", "bert", "clip", "clip_converted", "whisper", "bart", "llama2", "openllama", "albert", "t5")
EXTRA_LINES = ["Ünïcödé naïve café 中文字符 東京 한국어 😀👍🏽 ﬁ ① Ｆｕｌｌ", "e\u0301 Ångström — “quotes” ‘x’ ..."] * 5


@pytest.fixture(scope="module")
def train_lines(shared_corpus_lines) -> list[str]:
    return list(shared_corpus_lines) + EXTRA_LINES


def _charsmap(lines: list[str]) -> bytes:
    sentencepiece = pytest.importorskip("sentencepiece")
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines[:300]), model_writer=model, vocab_size=200, hard_vocab_limit=False,
        normalization_rule_name="nmt_nfkc", minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def build_hf(kind: str, lines: list[str]):
    """A small HF tokenizer of each kind (the bench builds the same ones, larger)."""
    from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

    Tok = hf.Tokenizer
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    if kind == "wordlevel":
        tok = Tok(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=500, special_tokens=["[UNK]"], show_progress=False))
    elif kind == "bert":
        tok = Tok(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
        tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    elif kind in ("clip", "clip_converted"):
        tok = Tok(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>", continuing_subword_prefix=""))
        tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(CLIP_PATTERN), behavior="removed", invert=True),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=kind == "clip_converted")]
        )
        tok.train_from_iterator(lines, trainers.BpeTrainer(
            vocab_size=700, special_tokens=["<|startoftext|>", "<|endoftext|>"], end_of_word_suffix="</w>",
            initial_alphabet=alphabet, show_progress=False))
    elif kind in ("whisper", "bart"):
        tok = Tok(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>"], initial_alphabet=alphabet, show_progress=False))
        if kind == "whisper":
            tok.add_special_tokens(["<|notimestamps|>"] + [f"<|{i * 0.02:.2f}|>" for i in range(50)])
            data = json.loads(tok.to_str())
            data["model"]["ignore_merges"] = True
            tok = Tok.from_str(json.dumps(data))
        else:
            tok.add_tokens([AddedToken(f"<extra_{i}>", normalized=i % 2 == 0) for i in range(40)] + ["madeupword", "the cat"])
            tok.post_processor = processors.RobertaProcessing(("<|endoftext|>", 0), ("<|endoftext|>", 0), trim_offsets=True)
    elif kind in ("llama2", "openllama"):
        tok = Tok(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        specials = ["<unk>", "<s>"] + [f"<0x{b:02X}>" for b in range(256)]
        tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=900, special_tokens=specials, limit_alphabet=60, show_progress=False))
        data = json.loads(tok.to_str())
        data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
        if kind == "llama2":
            data["normalizer"] = {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
            data["pre_tokenizer"] = None
        else:
            data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        tok = Tok.from_str(json.dumps(data))
    else:  # albert, t5
        tok = Tok(models.Unigram())
        steps = [normalizers.Precompiled(_charsmap(lines)), normalizers.Replace(Regex(" {2,}"), " ")]
        if kind == "albert":
            steps = [normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
                     normalizers.StripAccents(), normalizers.Lowercase(), *steps]
        tok.normalizer = normalizers.Sequence(steps)
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
        tok.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=300, special_tokens=["<pad>", "<unk>"], unk_token="<unk>", show_progress=False))
        tok.decoder = decoders.Metaspace()
        if kind == "t5":  # as older converted tokenizer.json files have it (T5's and ALBERT's on the Hub)
            tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="always")])
    return tok


@pytest.fixture(scope="module")
def pipelines(train_lines) -> dict[str, tuple[str, object]]:
    # The reference is HF reading the file, as tokviz does (see tokviz.json_floats).
    return {kind: (text, hf.Tokenizer.from_str(text)) for kind in KINDS for text in [build_hf(kind, train_lines).to_str()]}


def _engine_encodes(tok: Tokenizer, text: str) -> bool:
    """Whether the engine's one lane encodes ``text`` (no general path)."""
    plan = tok._engine().cut()
    return plan is not None and encode_cut(tok._added, plan, text, 0, None) is not None


def _general(json_text: str) -> Tokenizer:
    tok = Tokenizer.from_str(json_text)
    tok.use_fast_path = False
    return tok


def _fields(encoding) -> tuple:
    return (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids, encoding.type_ids)


# Characters that stress every rule: whitespace of all kinds, '▁', controls, combining marks,
# a Prepend-class char, CJK, emoji with joiners, no-break and ideographic spaces.
_ALPHABET = list("aAbBcé É,.!?'`-1 2  \t\n\r▁") + [
    "\u00a0", "\u3000", "\u2009", "\x00", "\x1c", "\x0b", "\u0301", "\u0600", "中", "文", "😀", "\u200d", "👍", "\U0001f3fd",
    "ﬁ", "①", "Ａ", "Σ", "İ", "ß", "\ufffd", "<", ">", "|", "<extra_2>", "<extra_3>", "madeupword", "the cat", "<|0.04|>",
    "<|notimestamps|>", "the", " the", "Hello", " world", "''", "``", "’", "“", "”", "—", "«", "¿", "\u00ad",
]
random_text = st.lists(st.sampled_from(_ALPHABET), max_size=25).map("".join)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_plan_or_byte_level_lane(pipelines, kind):
    tok = Tokenizer.from_str(pipelines[kind][0])
    byte_level = kind in ("whisper", "bart")
    assert (tok._engine().cut() is not None) or byte_level


@pytest.mark.parametrize("kind", KINDS)
def test_fast_path_equals_general_path_and_hf_on_corpus_lines(pipelines, kind, shared_corpus_lines):
    json_text, reference = pipelines[kind]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    for line in [*shared_corpus_lines[:150], *EXTRA_LINES[:2], "", " ", "  lead and trail  ", "a\u00a0 b\t\tc"]:
        ours = fast.encode(line)
        assert _fields(ours) == _fields(general.encode(line)), line
        assert ours.ids == reference.encode(line).ids, line


@pytest.mark.parametrize("kind", KINDS)
def test_fast_path_equals_general_path_on_random_text(pipelines, kind):
    json_text = pipelines[kind][0]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(random_text)
    def check(text: str) -> None:
        # Twice: the second call reads every chunk from the cache.
        assert _fields(fast.encode(text)) == _fields(general.encode(text)), repr(text)
        assert _fields(fast.encode(text)) == _fields(general.encode(text)), repr(text)

    check()


# Long texts: lines of the random alphabet (combining marks, controls, '▁'...) joined by
# newlines and spaces, with ordinary corpus text between them, so that a text holds a few
# chunks whose boundaries are not safe among many that are.
long_text = st.lists(st.one_of(random_text, st.sampled_from(["The cat sat.", "Hello world, again", "x  y"])), min_size=2, max_size=12).map(
    lambda parts: "\n".join(parts) + " " + " ".join(parts)
)


@pytest.mark.parametrize("kind", KINDS)
def test_long_texts_align_only_the_segments_the_stages_change(pipelines, kind, monkeypatch):
    import tokviz.engine.fields as chunks

    json_text, reference = pipelines[kind]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    aligned = []
    real = chunks._aligned_fields

    def counting(plan, text, *flags):
        result = real(plan, text, *flags)
        aligned.append(result is not None)
        return result

    monkeypatch.setattr(chunks, "_aligned_fields", counting)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(long_text)
    def check(text: str) -> None:
        expected = _fields(general.encode(text))
        assert _fields(fast.encode(text)) == expected, repr(text)
        assert _fields(fast.encode(text)) == expected, repr(text)  # (the joined chunks from the cache)

    check()
    # Precompiled loses the removal of a control char that opens the text (HF's quirk): every
    # later offset is shifted, so no segment may be aligned alone (found by this test).
    for text in ["\x1cﬁ\n \x1cﬁ ", "\x1cﬁ x", "\x1c\x1c a b"]:
        assert _fields(fast.encode(text)) == _fields(general.encode(text)), repr(text)
        assert fast.encode(text).offsets == reference.encode(text).offsets, repr(text)
    # A 20 KB-like text with one combining mark: the same as HF, one segment aligned.
    text = "\n".join(["Some plain words here."] * 40 + ["Accents: e\u0301 and ﬁ", "Tabs\tand  double  spaces"] + ["More text, more lines."] * 40)
    assert fast.encode(text).ids == reference.encode(text).ids
    assert fast.encode(text).offsets == reference.encode(text).offsets
    if kind in ("albert", "t5", "bert", "clip"):  # (their stages change the combining mark's segment)
        assert any(aligned), "the text was expected to be taken in segments"


# Pieces a Replace of whitespace runs changes (blank lines, tabs, double spaces) and pieces
# whose non-ASCII chars each become one char (accents stripped, full-width letters): the
# whole-piece path takes them, mapping offsets through the collapsed runs.
WHOLE_PIECE_TEXTS = ["Blank\n\nlines and\ttabs  here\n", "  Lead\n \n", "Été à Paris, Ｆｕｌｌ Σοφία", "naïve\n\ncafé  ①"]
_RUNS_ALPHABET = ["a", "B", "é", "É", "Ｆ", "Σ", " ", "  ", "\n", "\n\n", "\t", "\x0b", "\r\n", "\u00a0", "\u3000", "ﬁ", "한",
                  "\u0301", "▁", ".", "the", "Hello", "①", "ß"]


@pytest.mark.parametrize("name", ["bert", "bert_cased"])
def test_bert_text_with_unicode_punctuation_stays_on_the_whole_piece_path(pipelines, name):
    """Curly quotes, dashes and accents (English prose) under BertPreTokenizer: the whole-piece
    path splits them with a Unicode regex (checked char by char against BertPreTokenizer's own
    test), so a line with ’ is not left to the chunks."""
    import tokviz.engine.fields as chunks

    json_text = pipelines[name][0] if name == "bert" else _small_pipelines()[name]
    reference = hf.Tokenizer.from_str(json_text)
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    plan = fast._engine().cut()
    for text in ["“Don’t,” she said — «déjà vu»?", "l’été\u00a0est là… ¿Qué?", "It’s a “test”."]:
        assert chunks._line_fields(plan, text, True) is not None, repr(text)
        ours, expected = fast.encode(text), reference.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
    assert [m.group() for m in pre_tokenizers.BertPreTokenizer().plain_split().words("a’b")] == ["a", "’", "b"]


@pytest.mark.parametrize("name", ["bert", "bert_cased"])
def test_chinese_under_bert_stays_on_the_whole_piece_path(pipelines, name):
    """BertNormalizer puts spaces around each Chinese char (all three aligned to it): a line of
    Chinese is one whole piece with an origin per normalized char, not a chunk per char
    through the general machinery (~9x HF's time on a cold line of it); same ids and offsets
    as HF, a ligature and full-width letters among them."""
    import tokviz.engine.fields as chunks

    json_text = pipelines[name][0] if name == "bert" else _small_pipelines()[name]
    reference = hf.Tokenizer.from_str(json_text)
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    plan = fast._engine().cut()
    for text in ["我们今天去公园散步，天气非常好。", "東京は日本の首都です。", "ﬁne 中文 Ｆｕｌｌ", "中", "a中b  文\tc"]:
        fields = chunks._line_fields(plan, text, True)
        assert fields is not None, repr(text)
        ours, expected = fast.encode(text), reference.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
    encoding = fast.encode("我们")
    assert [offsets for offsets, special in zip(encoding.offsets, encoding.special_tokens_mask) if not special] == [(0, 1), (1, 2)]


@pytest.mark.parametrize("kind", ["clip", "albert", "t5"])
def test_whitespace_runs_and_one_char_changes_stay_on_the_whole_piece_path(pipelines, kind):
    import tokviz.engine.fields as chunks

    json_text, reference = pipelines[kind]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    plan = fast._engine().cut()
    for text in WHOLE_PIECE_TEXTS:
        assert chunks._line_fields(plan, text, True) is not None, repr(text)
        ours, expected = fast.encode(text), reference.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
    # A combining mark joins the char before it: such pieces are left to the chunks (and
    # still agree). Korean syllables become three jamo under ALBERT's NFKD, each aligned to
    # its syllable, and a ligature its letters: the whole piece, offsets mapped back.
    assert chunks._line_fields(plan, "e\u0301 x", True) is None
    for text in ["한국어 ﬁn", "ﬁ한"]:
        assert chunks._line_fields(plan, text, True) is not None, repr(text)
        ours, expected = fast.encode(text), reference.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
    if kind == "albert":
        jamo = chunks._line_fields(plan, "한국", True)
        assert jamo[1] == ("▁", "ᄒ", "ᅡ", "ᆫ", "ᄀ", "ᅮ", "ᆨ")
        assert jamo[2] == ((0, 1), (0, 1), (0, 1), (0, 1), (1, 2), (1, 2), (1, 2))

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(_RUNS_ALPHABET), max_size=16).map("".join))
    def check(text: str) -> None:
        ours, expected = fast.encode(text), reference.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)

    check()


@pytest.mark.parametrize("newline_merges", [False, True])
def test_llama_words_are_cut_at_newlines_only_when_no_merge_takes_them(newline_merges):
    """A Llama word holds the newlines between lines ("▁end.\\nThe"); when the newline's byte
    token is in no merge, the word is cut around it, so each line's words are the cached
    ones. Where a merge joins it to the next char, the word stays whole. Both as HF."""
    from tokenizers import models, normalizers

    chars = ["▁", "a", "b", "e", "n", "d", ".", "T", "h"]
    vocab = {"<unk>": 0, **{f"<0x{byte:02X}>": 1 + byte for byte in range(256)}}
    for token in [*chars, "▁e", "▁en", "▁end", "Th", "The", "▁a"]:
        vocab.setdefault(token, len(vocab))
    merges = [("▁", "e"), ("▁e", "n"), ("▁en", "d"), ("T", "h"), ("Th", "e"), ("▁", "a")]
    if newline_merges:
        vocab["<0x0A>T"] = len(vocab)
        merges.insert(0, ("<0x0A>", "T"))
    tok = hf.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    ours = Tokenizer.from_str(tok.to_str())
    plan = ours._engine().cut()
    pieces = plan.run_findall("▁end.\nThe▁a")
    assert ("\n" in pieces) is not newline_merges
    if not newline_merges:  # (no made token mixes letters and other chars: letters cut too)
        assert pieces == ["▁end", ".", "\n", "The", "▁a"]
    for text in ["end.\nThe a", "a\n\nThe end.\n", "\nThe\n", "The end.\nThe end.\nxy\n a"]:
        expected = tok.encode(text)
        assert (ours.encode(text).ids, ours.encode(text).offsets) == (expected.ids, expected.offsets), repr(text)
    if newline_merges:
        assert "<0x0A>T" in ours.encode("end.\nThe").tokens


LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


BLOOM_PATTERN = " ?[^(\\s|[.,!?…。，、।۔،])]+"  # a class nested in a class: a union, as in Oniguruma


@pytest.mark.parametrize(
    "pattern, normal_form",
    [(LLAMA3_PATTERN, None), (LLAMA3_PATTERN, "NFC"), (LLAMA3_PATTERN, "NFKC"), (r"\p{L}+|\p{N}{1,3}|\s+|[^\s\p{L}\p{N}]", None),
     (r"\p{L}+| ?\p{N}+", None), (BLOOM_PATTERN, None), (GPT2_PATTERN, None)],
)
def test_split_then_byte_level_on_the_byte_level_lane(train_lines, pattern, normal_form, monkeypatch):
    """Llama 3's, tiktoken-style and BLOOM's pre-tokenizers: a Split by a regex ("isolated")
    before a ByteLevel without its own regex, on the engine's byte-level words. Where the matches tile
    the text (Llama 3's pattern, the second here) the words are the matches; where they leave
    gaps (the third: no punctuation, no space before a letter; BLOOM's: no spaces or
    punctuation) the gaps are words too. With a Unicode normal form first (Qwen2's NFC) a text
    the form changes is aligned segment by segment. Same fields as the general path and as HF."""
    from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers

    tok = hf.Tokenizer(models.BPE(ignore_merges=True))
    if normal_form:
        tok.normalizer = getattr(normalizers, normal_form)()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(pattern), behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train_lines, trainers.BpeTrainer(vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    json_text = tok.to_str()
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    lane = []
    real = engine_fields._byte_level_fields

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        lane.append(result is not None)
        return result

    monkeypatch.setattr(engine_fields, "_byte_level_fields", counting)
    for line in [*train_lines[:150], "", " ", "  lead\n\n and 12345 trail  ", "don't WON'T x\u00a0 y"]:
        ours = fast.encode(line)
        assert _fields(ours) == _fields(general.encode(line)), line
        assert (ours.ids, ours.offsets) == (tok.encode(line).ids, tok.encode(line).offsets), line

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(random_text, long_text))
    def check(text: str) -> None:
        ours = fast.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (tok.encode(text).ids, tok.encode(text).offsets), repr(text)

    check()
    assert any(lane) and all(lane)
    assert _engine_encodes(fast, "it's 42! (x) café")
    assert fast.encode("it's 42! (x)").tokens == tok.encode("it's 42! (x)").tokens
    if normal_form:
        assert _engine_encodes(fast, "cafe\u0301 ﬁ")  # the form changes it: aligned segment by segment
    if pattern == GPT2_PATTERN:
        # GPT-2's pattern (tiktoken files converted by transformers) splits as its pre-tokenizer
        # does, not by the regex run under a time limit (several times slower).
        import tokviz.patterns

        def timed(*args, **kwargs):
            raise AssertionError("the timed regex ran")

        monkeypatch.setattr(tokviz.patterns, "find_all", timed)
        again = Tokenizer.from_str(json_text)
        for line in ["It's 42 — déjà vu!", *train_lines[:20]]:
            assert again.encode(line).ids == tok.encode(line).ids, line


@pytest.mark.parametrize("individual", [True, False])
@pytest.mark.parametrize("prefix_space", [False, True])
def test_digits_then_byte_level_on_the_byte_level_lane(train_lines, individual, prefix_space):
    """StarCoder's pre-tokenizer, Digits then ByteLevel with its own regex, on the byte-level
    lane (it was the general path: 4.8x HF warm on StarCoder's vocabulary): numbers (each digit,
    or runs) and GPT-2's pre-tokens between them. With a prefix space ByteLevel would prefix
    every piece: the general path. Same fields as the general path and as HF."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=individual), pre_tokenizers.ByteLevel(add_prefix_space=prefix_space)]
    )
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train_lines, trainers.BpeTrainer(vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    json_text = tok.to_str()
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    for line in [*train_lines[:150], "", " ", "  12  345 ", "x1y22z333", "½ ② ٣٤ 5\u00a06", "it's 42!\n\n 7"]:
        ours = fast.encode(line)
        assert _fields(ours) == _fields(general.encode(line)), line
        assert (ours.ids, ours.offsets) == (tok.encode(line).ids, tok.encode(line).offsets), line

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(random_text, long_text, st.lists(st.sampled_from(["1", "23", " ", "a", "½", "②", "٣", ".", "  "]), max_size=12).map("".join)))
    def check(text: str) -> None:
        ours = fast.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (tok.encode(text).ids, tok.encode(text).offsets), repr(text)

    check()
    assert _engine_encodes(fast, "Call 123, x2 ½") is (not prefix_space)


@pytest.mark.parametrize("scheme", ["always", "never", "first"])
@pytest.mark.parametrize("split", [True, False])
def test_whitespace_split_then_metaspace_on_the_fast_paths(pipelines, scheme, split):
    """T5's and ALBERT's pre-tokenizer in older tokenizer.json files: WhitespaceSplit, then a
    Metaspace that prepends '▁' to every word (its offsets: the word's first char, as HF
    aligns a prepended char). Every scheme and split against the general path and HF, with
    '▁' in the text (a word that starts with one gets none prepended; split cuts before it)."""
    data = json.loads(pipelines["t5"][0])
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}]}
    json_text = json.dumps(data)
    reference = hf.Tokenizer.from_str(json_text)
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    assert fast._engine().cut().splitter == "ws_metaspace"
    # ("first": only a word at offset 0 of the original text gets its '▁'; HF's Precompiled loses
    # the removal of a leading control char, so "\x01Hello" still counts as starting there.)
    for text in ["Hello world", "  two  spaces\tand\ttabs\n", "▁a ▁▁b a▁b▁ ﬁne Ｆｕｌｌ", "", " ", "\x01Hello x", "\u200bHi there"]:
        expected = reference.encode(text)
        assert (fast.encode(text).ids, fast.encode(text).offsets) == (expected.ids, expected.offsets), repr(text)

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(random_text, long_text))
    def check(text: str) -> None:
        ours = fast.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        expected = reference.encode(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
        pair = fast.encode(text, "▁x y"), reference.encode(text, "▁x y")
        assert (pair[0].ids, pair[0].offsets) == (pair[1].ids, pair[1].offsets), repr(text)

    check()
    # Added tokens in the text: the pieces after one do not start the text.
    fast.add_special_tokens(["<sep>"]), reference.add_special_tokens(["<sep>"])
    for text in ["a<sep>b c", "<sep>Hello", " x<sep> ▁y", "Word<sep>"]:
        assert (fast.encode(text).ids, fast.encode(text).offsets) == (reference.encode(text).ids, reference.encode(text).offsets), repr(text)


@pytest.mark.parametrize("byte_merge", [False, True])
def test_a_token_holding_a_greater_than_before_the_space_keeps_the_fast_path(byte_merge):
    """Gemma's vocabulary has ">▁</": a '>' before '▁' inside a token. A '>' also ends the text
    of byte and unk tokens, whose char before a run is another; when no token holds such a
    text before '▁', the '>' is a '>' and only blocks the runs after one (Gemma's real
    vocabulary went 3.32x -> 0.86x HF warm). A merge of a byte token with '▁' still turns the
    fast path off. Same as the general path and HF either way."""
    from tokenizers import models as hf_models
    from tokenizers import normalizers as hf_normalizers

    from tokviz.engine.bpe import model_splits_at as _model_splits_at

    chars = ["▁", "a", "b", ">", "<", "/", "x"]
    vocab = {"<unk>": 0, **{f"<0x{byte:02X}>": 1 + byte for byte in range(256)}}
    for token in [*chars, "▁a", "▁b", ">▁", ">▁<", ">▁</", "▁>", "ab", "▁ab"]:
        vocab.setdefault(token, len(vocab))
    merges = [("▁", "a"), ("▁", "b"), (">", "▁"), (">▁", "<"), (">▁<", "/"), ("▁", ">"), ("a", "b"), ("▁a", "b")]
    if byte_merge:
        vocab["<0x0A>▁"] = len(vocab)
        merges.append(("<0x0A>", "▁"))
    hf_model = hf_models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True)
    tok = hf.Tokenizer(hf_model)
    tok.normalizer = hf_normalizers.Replace(" ", "▁")  # (Gemma's: no prepended '▁')
    fast, general = Tokenizer.from_str(tok.to_str()), _general(tok.to_str())
    assert _model_splits_at(fast.model, "▁") == (None if byte_merge else frozenset({">"}))
    plan = fast._engine().cut()
    assert (plan is not None and plan.one_word) or byte_merge
    texts = ["a > </b ab", "x\n ab >  </", "a>b\n\n ab", "😀 ab > < /", ">", " > ", "ab  ab   >   x"]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(["a", "b", "ab", " ", "  ", ">", "<", "/", "\n", "😀", "x", "é"]), max_size=14).map("".join))
    def check(text: str) -> None:
        ours, expected = fast.encode(text), tok.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)

    for text in texts:
        check.hypothesis.inner_test(text)
    check()


@pytest.mark.parametrize("metaspace", [False, True])
def test_multi_word_vocabularies_cut_only_where_no_token_reaches_over(train_lines, metaspace, monkeypatch):
    """A SentencePiece model trained with ``split_by_whitespace=false`` has tokens holding
    '▁' after another char ("▁of▁the"): a run of '▁' is then a safe cut only after a char
    that no token joins to '▁'. Trained here by HF on whole lines (no pre-tokenizer), so
    the vocabulary has many such tokens; same fields as the general path and HF, on random
    text and on corpus lines (which stay on the fast path)."""
    from tokenizers import models, normalizers, pre_tokenizers, trainers

    tok = hf.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    specials = ["<unk>", "<s>"] + [f"<0x{b:02X}>" for b in range(256)]
    # (Without wikitext's literal "<unk>": a token holding ">▁" turns the fast path off, since
    # an unk or byte token also ends in ">".)
    plain = [line for line in train_lines if "<" not in line and ">" not in line]
    tok.train_from_iterator(plain[::2], trainers.BpeTrainer(vocab_size=1200, special_tokens=specials, limit_alphabet=60, show_progress=False))
    data = json.loads(tok.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
    if metaspace:
        data["normalizer"] = None
        data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    tok = hf.Tokenizer.from_str(json.dumps(data))
    vocab = tok.get_vocab()
    assert any("▁" in token.lstrip("▁") for token in vocab), "expected tokens spanning words"
    fast, general = Tokenizer.from_str(tok.to_str()), _general(tok.to_str())
    plan = fast._engine().cut()
    assert plan is not None and plan.one_word
    lines = plain[1::2]
    words = plan.run_findall("▁" + lines[0].replace(" ", "▁"))
    assert len(words) > 1 and "".join(words) == "▁" + lines[0].replace(" ", "▁")
    for text in [*lines, "\n".join(lines[:40])]:
        expected = tok.encode(text)
        ours = fast.encode(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(random_text, long_text, st.sampled_from(lines).map(lambda line: line[:60])))
    def check(text: str) -> None:
        expected = tok.encode(text)
        ours = fast.encode(text)
        assert _fields(ours) == _fields(general.encode(text)), repr(text)
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), repr(text)

    check()
    # The chunks (cut before spaces) when the whole-piece path is not taken: a chunk that
    # ends in a char some token joins to '▁' is joined to the next one.
    import tokviz.engine.fields as chunks

    monkeypatch.setattr(chunks, "_line_fields", lambda *args, **kwargs: None)
    fast = Tokenizer.from_str(tok.to_str())
    check()
    for text in lines[:100]:
        expected = tok.encode(text)
        assert (fast.encode(text).ids, fast.encode(text).offsets) == (expected.ids, expected.offsets), repr(text)


@pytest.mark.parametrize("kind", KINDS)
def test_long_texts_in_segments_equal_the_general_path(pipelines, kind, monkeypatch):
    """A text the whole-piece path refuses (a few awkward chars) is normalized segment by
    segment, the awkward segments with their alignments. Same fields as the general path,
    and as HF."""
    import tokviz.engine.fields as chunks

    json_text, reference = pipelines[kind]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    segmented = []
    real = chunks._aligned_fields

    def counting(plan, text, *flags):
        result = real(plan, text, *flags)
        segmented.append(result is not None)
        return result

    monkeypatch.setattr(chunks, "_aligned_fields", counting)

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(long_text)
    def check(text: str) -> None:
        expected = _fields(general.encode(text))
        assert _fields(fast.encode(text)) == expected, repr(text)
        assert _fields(fast.encode(text)) == expected, repr(text)

    check()
    text = "\n".join(["Plain words, a line.", "Hindi: हिन्दी and Korean: 한국어 e\u0301"] * 3 + ["More text here.\n\nAnd more."] * 4)
    assert (fast.encode(text).ids, fast.encode(text).offsets) == (reference.encode(text).ids, reference.encode(text).offsets)
    if kind in ("albert", "t5", "clip", "clip_converted"):
        assert any(segmented), "the text was expected to be taken in segments"


def test_batches_and_pretokenized_input_agree(pipelines):
    json_text = pipelines["bert"][0]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    lines = ["Hello there", "  Tabs\tand\nnewlines ", "中文 and ﬁ"]
    assert [_fields(e) for e in fast.encode_batch(lines)] == [_fields(e) for e in general.encode_batch(lines)]
    words = ["Hello", "wörld", "  x"]
    assert _fields(fast.encode(words, is_pretokenized=True)) == _fields(general.encode(words, is_pretokenized=True))


def test_an_edited_component_is_seen_by_the_next_call(pipelines):
    """Components become mutable (issue 14): a setter bumps tokviz._mutation, the plan and
    its chunk caches are rebuilt, and the fast path still equals the general path."""
    json_text = pipelines["bert"][0]
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    text = "Hello World HELLO"
    before = fast.encode(text).ids
    plan = fast._engine().cut()
    for tok in (fast, general):
        object.__setattr__(tok.normalizer, "lowercase", False)
        object.__setattr__(tok.normalizer, "strip_accents", False)
    _mutation.bump()
    assert fast._engine().cut() is not plan
    after = fast.encode(text)
    assert _fields(after) == _fields(general.encode(text))
    assert after.ids != before


def test_what_the_engine_refuses_takes_the_general_path_and_the_rest_agrees_with_it():
    from tokviz import models, normalizers, pre_tokenizers

    model = models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
    # (ByteLevel prefixing a space to every word of a step before it)
    assert build_plan(None, pre_tokenizers.Sequence([pre_tokenizers.Digits(), pre_tokenizers.ByteLevel(add_prefix_space=True)]), model) is None
    assert build_plan(normalizers.Normalizer.custom(type("Upper", (), {"normalize": lambda self, n: n.uppercase()})()),
                      pre_tokenizers.Whitespace(), model) is None
    # A Strip or a Replace of any literal: the piece is normalized whole, with its alignments.
    for normalizer in (normalizers.Strip(), normalizers.Replace("a b", "x"), normalizers.Sequence([normalizers.NFKC(), normalizers.Strip()])):
        fast = Tokenizer(model)
        fast.normalizer, fast.pre_tokenizer = normalizer, pre_tokenizers.Punctuation()
        general = Tokenizer.from_str(fast.to_str())
        general.use_fast_path = False
        assert fast._engine().cut().splitter == "tiles"  # (the words Punctuation declares)
        for text in [" a b a ", "a b\n ﬁ a.", "", "  "]:
            assert _fields(fast.encode(text)) == _fields(general.encode(text)), (normalizer, text)


# ---------------------------------------------------------------------- whole-piece path (round 4)
def _all_fields(encoding) -> tuple:
    return (
        *_fields(encoding), encoding.special_tokens_mask, encoding.attention_mask,
        [encoding.token_to_sequence(i) for i in range(len(encoding.ids))],
    )


@functools.lru_cache(maxsize=1)
def _small_pipelines() -> dict[str, str]:
    """tokenizer.json texts (HF-built, tiny vocabularies) of the shapes _line_fields takes:
    WordLevel with and without an unk token, Prepend before Whitespace (prepended chars),
    Metaspace with each prepend scheme and split, a Llama-like model-level split, BERT
    without lowercasing, each with added tokens (one normalized, one not) and a processor."""
    from tokenizers import AddedToken, models, normalizers, pre_tokenizers, processors

    words = ["a", "b", "c", "é", "the", "Hello", "world", ",", ".", "!", "?", "1", "2", "中", "文", "▁"]
    vocab = {word: index for index, word in enumerate(["[UNK]", *words])}
    made = {}

    def finish(name, tok, processor=None):
        tok.add_tokens([AddedToken("the cat", normalized=False), AddedToken("<x>", normalized=True)])
        tok.add_special_tokens(["[CLS]", "[SEP]"])
        if processor is not None:
            tok.post_processor = processor
        made[name] = tok.to_str()

    template = processors.TemplateProcessing(
        single="[CLS] $A:1 [SEP] [SEP]:2", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", len(vocab)), ("[SEP]", len(vocab) + 1)])
    tok = hf.Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    finish("wordlevel", tok, template)
    tok = hf.Tokenizer(models.WordLevel({k: v for k, v in vocab.items() if k != "[UNK]"}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    finish("wordlevel_no_unk", tok)
    tok = hf.Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    finish("prepend_whitespace", tok, processors.BertProcessing(("[SEP]", 1), ("[CLS]", 2)))
    pieces = ["▁", "▁a", "▁b", "a", "b", "c", "▁the", "▁th", "th", "e", "▁Hello", "▁world", ",", "<unk>"]
    bpe_vocab = {piece: index for index, piece in enumerate(pieces)}
    merges = [("▁", "a"), ("▁", "b"), ("t", "h"), ("▁", "th"), ("▁th", "e")]
    bpe_vocab.update({"t": len(bpe_vocab), "h": len(bpe_vocab) + 1})
    for scheme in ("always", "first", "never"):
        for split in (True, False):
            tok = hf.Tokenizer(models.BPE(bpe_vocab, merges, unk_token="<unk>", fuse_unk=True))
            tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
            finish(f"metaspace_{scheme}_{split}", tok, processors.RobertaProcessing(("[SEP]", 1), ("[CLS]", 2)))
    tok = hf.Tokenizer(models.BPE(bpe_vocab, merges, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    finish("llama_like", tok)
    tok = hf.Tokenizer(models.BPE(bpe_vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    finish("llama_template", tok, processors.TemplateProcessing(
        single="[CLS] $A", pair="[CLS] $A [CLS] $B:1", special_tokens=[("[CLS]", len(bpe_vocab))]))
    tok = hf.Tokenizer(models.BPE(bpe_vocab, merges, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    finish("metaspace_first_False_bert", tok, processors.BertProcessing(("[SEP]", 1), ("[CLS]", 2)))
    tok = hf.Tokenizer(models.WordPiece({**vocab, "##a": len(vocab), "##e": len(vocab) + 1}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    finish("bert_cased", tok, template)
    return made


_PIECE_ALPHABET = [*_ALPHABET, "<x>", "[CLS]", "\x0c", "\u2028", "\x85", "\u0300", "🙂", "▁▁", "  ", "HELLO"]


SMALL_PIPELINES = [
    "wordlevel", "wordlevel_no_unk", "prepend_whitespace", *[f"metaspace_{s}_{b}" for s in ("always", "first", "never") for b in (True, False)],
    "llama_like", "bert_cased", "llama_template", "metaspace_first_False_bert",
]


@pytest.mark.parametrize("name", SMALL_PIPELINES)
def test_whole_piece_path_equals_general_path_and_hf(name):
    json_text = _small_pipelines()[name]
    fast, general, reference = Tokenizer.from_str(json_text), _general(json_text), hf.Tokenizer.from_str(json_text)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(_PIECE_ALPHABET), max_size=20).map("".join), st.booleans())
    def check(text: str, add_special_tokens: bool) -> None:
        try:
            expected = reference.encode(text, add_special_tokens=add_special_tokens)
        except Exception:
            with pytest.raises(Exception):
                general.encode(text)
            with pytest.raises(Exception):
                fast.encode(text)
            return
        for _ in range(2):  # cold, then from the word cache
            ours = fast.encode(text, add_special_tokens=add_special_tokens)
            assert _all_fields(ours) == _all_fields(general.encode(text, add_special_tokens=add_special_tokens)), repr(text)
            assert _all_fields(ours) == _all_fields(expected), repr(text)

    check()


def test_single_sequence_post_processing_equals_the_merging_path(monkeypatch):
    from tokviz.encoding import Encoding
    from tokviz.processors import BertProcessing, PostProcessor, RobertaProcessing, TemplateProcessing

    def encoding():
        return Encoding.from_tokens([(5, "Ġhi", (0, 3)), (6, "Ġ", (3, 4)), (7, "yo ", (4, 7))], word_ids=[0, 1, 2])

    processors = [
        TemplateProcessing(single="[CLS] $A:1 [SEP] [SEP]:2", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]),
        TemplateProcessing(single="$A", special_tokens=[]),
        BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
        RobertaProcessing(("</s>", 2), ("<s>", 0)),
        RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
        RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False),
    ]
    fast = [[_all_fields(p.process(encoding(), None, add)) for add in (True, False)] for p in processors]
    for kind in (TemplateProcessing, BertProcessing, RobertaProcessing):
        monkeypatch.setattr(kind, "_process_single", PostProcessor._process_single)
    merged = [[_all_fields(p.process(encoding(), None, add)) for add in (True, False)] for p in processors]
    assert fast == merged
    assert fast[0][0][1] == ["[CLS]", "Ġhi", "Ġ", "yo ", "[SEP]", "[SEP]"]
    assert fast[0][0][4] == [0, 1, 1, 1, 0, 2]


def test_clip_as_converted_takes_the_byte_level_path_but_for_the_specials_literals(pipelines):
    """transformers' CLIP converter leaves ByteLevel's own regex on after CLIP's split (which
    drops the text between its words: ``kept_words``): GPT-2's pattern leaves every piece of that
    split whole (a letter run, a digit, a run of other chars, a contraction), so a line takes the
    byte-level path; the specials' literals are cut in three by it, so a text holding one where
    they are not added tokens goes to the general path. Same fields as that and as HF."""
    import tokviz.engine.fields as chunks

    json_text, reference = pipelines["clip_converted"]
    fast = Tokenizer.from_str(json_text)
    plan = fast._engine().cut()
    assert plan.splitter == "bytes" and type(plan.byte_words("a b")) is tuple
    for text in ["Hello world, it's 42!", "don't  stop—now «quoted» café ①"]:
        assert chunks._line_fields(plan, text, True) is not None, text
    for text in ["Hello world, it's 42!", "don't  stop—now «quoted» café ①", "a<|endoftext|>b"]:  # (a special is cut out first)
        assert (fast.encode(text).ids, fast.encode(text).offsets) == (reference.encode(text).ids, reference.encode(text).offsets)
    data = json.loads(json_text)
    data["added_tokens"] = []  # the literals now reach the pre-tokenizer
    bare_json = json.dumps(data)
    bare, bare_reference, bare_general = Tokenizer.from_str(bare_json), hf.Tokenizer.from_str(bare_json), _general(bare_json)
    bare_plan = bare._engine().cut()
    assert chunks._line_fields(bare_plan, "a <|endoftext|> b", True) is None
    assert chunks._line_fields(bare_plan, "a <| b |>", True) is not None
    for text in ["a <|endoftext|> b", "<|startoftext|>x", "a <| b |>", "plain text"]:
        ours, expected = bare.encode(text), bare_reference.encode(text)
        assert _fields(ours) == _fields(bare_general.encode(text)), text
        assert (ours.ids, ours.offsets) == (expected.ids, expected.offsets), text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=30) | st.lists(st.sampled_from(["'s", "'ll", "<|endoftext|>", "<|startoftext|>", "a1", " ", "\x1c"])).map("".join))
def test_ascii_twins_split_ascii_text_as_their_patterns(text):
    from tokviz.patterns import ascii_twin, compile_pattern

    for pattern in [CLIP_PATTERN, r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]:
        compiled = compile_pattern(pattern)
        assert [m.span() for m in ascii_twin(compiled).finditer(text)] == [m.span() for m in compiled.finditer(text)]


@pytest.mark.parametrize("name", ["llama_like", "prepend_whitespace", "bert_cased"])
def test_normalized_added_tokens_are_found_after_the_normalizer(name):
    """'<x>' is added with normalized=True: after Prepend('▁') it is matched as '▁<x>', which
    the raw text does not contain (the chunk path once missed it)."""
    json_text = _small_pipelines()[name]
    fast, reference = Tokenizer.from_str(json_text), hf.Tokenizer.from_str(json_text)
    for text in ["<x>", "a <x>", "a<x>", "<x> the cat <x>", "the cat"]:
        assert _all_fields(fast.encode(text)) == _all_fields(reference.encode(text)), text


def test_precompiled_normalize_str_equals_its_changes(pipelines):
    """normalize_str (per grapheme cluster, cached) gives the chars of the changes the
    NormalizedString path applies, on every char of the alphabet and random text."""
    from tokviz.normalizers import _charsmap, _precompiled_changes

    stage = Tokenizer.from_str(pipelines["t5"][0]).normalizer.normalizers[0]
    charsmap = _charsmap(stage.precompiled_charsmap)

    def expected(text: str) -> str:
        changes = _precompiled_changes(charsmap, text)
        return text if changes is None else "".join(char for char, _ in changes)

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(random_text | st.text(max_size=12))
    def check(text: str) -> None:
        assert stage.normalize_str(text) == expected(text), repr(text)
        assert stage.normalize_str(text) == expected(text), repr(text)  # from the cache

    check()
    assert stage.normalize_str("ﬁ Ａ①\u3000x") == expected("ﬁ Ａ①\u3000x") != "ﬁ Ａ①\u3000x"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=30))
def test_whitespace_ascii_regex_splits_as_whitespace(text):
    from tokviz.pre_tokenizers import WORD_OR_SYMBOLS, Whitespace

    # (the words function takes its re twin on ASCII text)
    assert [m.span() for m in Whitespace().plain_split().words(text)] == [m.span() for m in WORD_OR_SYMBOLS.finditer(text)]


@pytest.mark.parametrize("name", ["wordlevel", "prepend_whitespace", "metaspace_always_True", "metaspace_first_False", "llama_like", "bert_cased"])
def test_pairs_and_pretokenized_words_on_the_whole_piece_path(name):
    json_text = _small_pipelines()[name]
    fast, general, reference = Tokenizer.from_str(json_text), _general(json_text), hf.Tokenizer.from_str(json_text)
    texts = st.lists(st.sampled_from(_PIECE_ALPHABET), max_size=12).map("".join)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(texts, texts, st.lists(texts.filter(bool), min_size=1, max_size=4))
    def check(first: str, second: str, words: list[str]) -> None:
        for args, kwargs in (((first, second), {}), ((words,), {"is_pretokenized": True})):
            try:
                expected = reference.encode(*args, **kwargs)
            except Exception:
                continue
            ours = fast.encode(*args, **kwargs)
            assert _all_fields(ours) == _all_fields(general.encode(*args, **kwargs)), (args, kwargs)
            assert _all_fields(ours) == _all_fields(expected), (args, kwargs)

    check()


@pytest.mark.parametrize("name", ["llama_template", "metaspace_first_False_bert", "wordlevel", "bert_cased"])
def test_templates_wrapped_in_one_step_with_padding(name, monkeypatch):
    """encode_processed (the whole-piece fields between a template's or BERT's special
    tokens, one Encoding): as the general path and HF, also padded, and it is taken."""
    import tokviz.tokenizer

    json_text = _small_pipelines()[name]
    fast, general, reference = Tokenizer.from_str(json_text), _general(json_text), hf.Tokenizer.from_str(json_text)
    for tok in (fast, general, reference):
        tok.enable_padding(length=12, pad_id=0, pad_token="[UNK]")
    calls = []
    original = tokviz.tokenizer.encode_processed

    def counted(*args):
        result = original(*args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(tokviz.tokenizer, "encode_processed", counted)
    for text in ["a b", "Hello world, the", " a  b ", "é中 a", "▁a▁b", "the cat a", "a <x>", "", "  "]:
        ours = fast.encode(text)
        assert _all_fields(ours) == _all_fields(general.encode(text)), text
        assert _all_fields(ours) == _all_fields(reference.encode(text)), text
    assert any(calls)


@pytest.mark.parametrize("kind", ["wordlevel", "clip", "whisper", "bart"])
def test_fast_lane_encodings_keep_their_offsets_flat_through_the_post_processor(pipelines, kind, shared_corpus_lines):
    # Encodings that live on (a list of a corpus's encodings) should not hold a pair per token
    # for the cycle collector to walk: the fast lanes keep offsets as two runs of ints through
    # the post-processor (a template, RobertaProcessing with or without trimming) until read.
    # Read, they must be the general path's and HF's.
    from tokenizers import processors as hf_processors

    from tokviz.encoding import flat_offsets_of

    reference = hf.Tokenizer.from_str(pipelines[kind][0])
    vocab = reference.get_vocab()
    if kind == "clip":
        reference.post_processor = hf_processors.RobertaProcessing(
            ("<|endoftext|>", vocab["<|endoftext|>"]), ("<|startoftext|>", vocab["<|startoftext|>"]), trim_offsets=False
        )
    elif kind != "bart":  # (bart's is RobertaProcessing with trim_offsets)
        special = "[UNK]" if kind == "wordlevel" else "<|endoftext|>"
        reference.post_processor = hf_processors.TemplateProcessing(
            single=f"{special} $A {special}", special_tokens=[(special, vocab[special])]
        )
    json_text = reference.to_str()
    fast, general = Tokenizer.from_str(json_text), _general(json_text)
    lines = [*shared_corpus_lines[:150], "", "  lead and trail  "]
    flat = 0
    for line in lines:
        ours = fast.encode(line)
        flat += flat_offsets_of(ours) is not None
        theirs = reference.encode(line)
        assert _fields(ours) == _fields(general.encode(line)), line
        assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets), line
    # (CLIP's lines with whitespace runs or curly quotes map offsets through its normalizer: pairs)
    assert flat >= len(lines) * 3 // 4, flat


# ---------------------------------------------------------------------- kinds nobody tuned for
# Pipelines the bench did not build when the engine was written (a CLIP file, a Llama BPE with
# byte fallback trained on Chinese, Digits, Punctuation, a Split regex with added tokens): HF
# trains them here, and every line and fuzzed text must encode as in HF.
import random  # noqa: E402

from tokviz.added_vocabulary import AddedToken, AddedVocabulary  # noqa: E402
from tokviz.engine.cut import encode_cut  # noqa: E402
from tokviz.models import BPE, WordLevel  # noqa: E402
from tokviz.normalizers import NFKC, Lowercase, Sequence  # noqa: E402
from tokviz.pre_tokenizers import Split, Whitespace  # noqa: E402

tokenizers = pytest.importorskip("tokenizers")

SPLIT_PATTERN = r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"
UNTUNED_KINDS = (
    "clip", "llama_zh", "llama_digits", "wordlevel", "split_added", "wordpiece_punct",
    # (bench/bench_untuned.py's)
    "falcon", "bloom", "gemma", "mistral", "deberta", "bert_strip", "wordlevel_char",
)
#: BLOOM's Split pattern, as its tokenizer.json has it.
BLOOM_SPLIT = " ?[^(\\s|[.,!?…。，、।۔،])]+"


def chinese_lines(count: int, seed: int) -> list[str]:
    """Made-up Chinese (Zipf-like words of CJK ideographs) with English words and numbers."""
    rng = random.Random(seed)
    chars = [chr(0x4E00 + i) for i in range(400)]
    words = ["".join(rng.choices(chars, [1 / (i + 1) for i in range(400)], k=rng.choice((1, 2, 3)))) for _ in range(500)]
    return [
        "".join(rng.choices(words, k=rng.randint(4, 20))) + rng.choice(["，", " the model ", "。", " 2026 ", "！"])
        + "".join(rng.choices(words, k=rng.randint(2, 8)))
        for _ in range(count)
    ]


def _build(kind: str, lines: list[str]):
    from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if kind == "clip":
        tok = tokenizers.Tokenizer(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>", continuing_subword_prefix=""))
        tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(CLIP_PATTERN), behavior="removed", invert=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
        )
        tok.train_from_iterator(lines, trainers.BpeTrainer(
            vocab_size=1500, special_tokens=["<|startoftext|>", "<|endoftext|>"], end_of_word_suffix="</w>",
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        tok.post_processor = processors.RobertaProcessing(
            ("<|endoftext|>", tok.token_to_id("<|endoftext|>")), ("<|startoftext|>", tok.token_to_id("<|startoftext|>")),
            add_prefix_space=False, trim_offsets=False)
        return tok
    if kind in ("llama_digits", "gemma", "mistral"):
        data = json.loads(_build("llama_zh", lines).to_str())
        data["pre_tokenizer"] = {
            "llama_digits": {"type": "Digits", "individual_digits": True}, "gemma": None,
            "mistral": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
        }[kind]
        if kind != "llama_digits":
            data["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "▁"} if kind == "gemma" else None
        return tokenizers.Tokenizer.from_str(json.dumps(data))
    if kind in ("falcon", "bloom"):
        tok = tokenizers.Tokenizer(models.BPE())
        if kind == "falcon":
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(add_prefix_space=False), pre_tokenizers.Digits()])
        else:
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(BLOOM_SPLIT), behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.train_from_iterator(lines, trainers.BpeTrainer(
            vocab_size=1500, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        return tok
    if kind == "deberta":
        tok = tokenizers.Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.Precompiled(_charsmap(lines)), normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.train_from_iterator(lines, trainers.UnigramTrainer(
            vocab_size=1500, special_tokens=["[PAD]", "[CLS]", "[SEP]", "[UNK]"], unk_token="[UNK]", show_progress=False))
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
        return tok
    if kind == "bert_strip":
        tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=1500, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
        tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))
        return tok
    if kind == "wordlevel_char":
        tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.CharDelimiterSplit(" ")
        tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=2000, special_tokens=["[UNK]"], show_progress=False))
        return tok
    if kind == "llama_zh":
        tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        tok.train_from_iterator(lines + chinese_lines(400, 0), trainers.BpeTrainer(
            vocab_size=2500, special_tokens=specials, limit_alphabet=300, show_progress=False))
        data = json.loads(tok.to_str())
        data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
        data["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
        data["pre_tokenizer"] = None
        tok = tokenizers.Tokenizer.from_str(json.dumps(data))
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
        return tok
    if kind == "wordlevel":
        tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=2000, special_tokens=["[UNK]"], show_progress=False))
        return tok
    if kind == "split_added":
        tok = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
        tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=1500, special_tokens=["[UNK]", "[BOS]", "[EOS]"], show_progress=False))
        tok.add_special_tokens(["<|user|>", "<|assistant|>"])
        tok.add_tokens([AddedToken(word, single_word=i % 3 == 0, lstrip=i % 4 == 1, rstrip=i % 5 == 2, normalized=i % 2 == 0)
                        for i, word in enumerate(["King", "thee", "said", "Gretel", "::", "ﬁsh", "the game", "🤗"])])
        tok.post_processor = processors.TemplateProcessing(
            single="[BOS] $A [EOS]", special_tokens=[("[BOS]", tok.token_to_id("[BOS]")), ("[EOS]", tok.token_to_id("[EOS]"))])
        return tok
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=20))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("merged_with_next"), pre_tokenizers.Digits(True)])
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=1500, special_tokens=["[UNK]"], show_progress=False))
    return tok


@pytest.fixture(scope="module")
def pairs(read_shared_corpus):
    lines = read_shared_corpus("grimm_tales.txt").splitlines()[:3000]
    built = {}
    for kind in UNTUNED_KINDS:
        hf = tokenizers.Tokenizer.from_str(_build(kind, lines).to_str())
        built[kind] = (hf, Tokenizer.from_str(hf.to_str()))
    return built


@pytest.fixture(scope="module")
def test_lines(read_shared_corpus, hard_strings) -> list[str]:
    lines = read_shared_corpus("wikitext2_valid.txt").splitlines()[::40]
    return list(hard_strings) + lines + chinese_lines(40, 7) + [
        "King said: the game is on <|user|> thee Gretel:: ﬁsh 🤗 and the  game", "ＫＩＮＧ said<|assistant|>said thee",
    ]


def _hf_fields(encoding) -> tuple:
    return encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids


@pytest.mark.parametrize("kind", UNTUNED_KINDS)
def test_every_line_encodes_as_in_hf(kind, pairs, test_lines) -> None:
    hf, ours = pairs[kind]
    differences = [line for line in test_lines if _hf_fields(ours.encode(line)) != _hf_fields(hf.encode(line))]
    assert not differences, f"{kind}: {len(differences)} lines differ, first {differences[0]!r:.80}"


# (ü and ½: UTF-8 bytes whose byte-level symbols are numbers, '¼' and '½', which Falcon's Digits cuts)
MIXED = "aZ 9,.!?'-:;<>|\t\n\u00e9\u0301\ufb01\uff21\u4e00\u4e01\u4e03\u4e09\u4e0a\uac00\u0431\u05d0\u0627\U0001F917\u200dü½"
FUZZED = st.text(alphabet=st.sampled_from(MIXED), max_size=40) | st.sampled_from(["King", "thee said", "<|user|>", "the game", "ﬁsh"]).flatmap(
    lambda word: st.tuples(st.text(alphabet=st.sampled_from(MIXED), max_size=8), st.text(alphabet=st.sampled_from(MIXED), max_size=8)).map(
        lambda ends: ends[0] + word + ends[1]))


@pytest.mark.parametrize("kind", UNTUNED_KINDS)
def test_fuzzed_text_encodes_as_in_hf(kind, pairs) -> None:
    hf, ours = pairs[kind]

    @settings(max_examples=250, deadline=None, derandomize=True)
    @given(FUZZED)
    def check(text: str) -> None:
        assert _hf_fields(ours.encode(text)) == _hf_fields(hf.encode(text))
        assert _hf_fields(ours.encode(text, add_special_tokens=False)) == _hf_fields(hf.encode(text, add_special_tokens=False))

    check()


def test_the_untuned_kinds_take_the_engine_and_it_agrees_with_the_general_path(pairs, test_lines) -> None:
    for kind in ("wordlevel", "split_added", "wordpiece_punct", "llama_digits", "falcon", "bloom", "gemma", "mistral", "wordlevel_char"):
        _, ours = pairs[kind]
        plan = ours._engine().cut()
        assert plan is not None, kind
        assert all(encode_cut(ours._added, plan, line, 0, None) is not None for line in test_lines), kind
        general = Tokenizer.from_str(ours.to_str())
        general.use_fast_path = False
        for line in test_lines:
            assert _hf_fields(ours.encode(line)) == _hf_fields(general.encode(line)), (kind, line)
    assert pairs["llama_digits"][1]._engine().cut().pieces  # (its long words went piece by piece)
    assert pairs["falcon"][1]._engine().cut().sub_words  # (a word cut inside a char's byte symbols: ü, ½)


def test_a_worked_example_with_added_tokens() -> None:
    model = BPE({"k": 0, "i": 1, "n": 2, "g": 3, "ki": 4, "ng": 5, "king": 6, "[UNK]": 7}, [("k", "i"), ("n", "g"), ("ki", "ng")], unk_token="[UNK]")
    plan = build_plan(Sequence([NFKC(), Lowercase()]), Split(" ", "removed"), model)
    added = AddedVocabulary()
    encoding = encode_cut(added, plan, "king kin  g", 0, None)
    assert (encoding.ids, encoding.offsets, encoding.word_ids) == ([6, 4, 2, 3], [(0, 4), (5, 7), (7, 8), (10, 11)], [0, 1, 1, 2])
    # An added token is cut out first and is a word of its own.
    added.add_tokens([AddedToken("<x>", special=True)], model, None)
    encoding = encode_cut(added, plan, "king<x>kin", 0, None)
    assert (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids) == (
        [6, 8, 4, 2], ["king", "<x>", "ki", "n"], [(0, 4), (4, 7), (7, 9), (9, 10)], [0, 1, 2, 2])
    # A normalizer that changes the text: that segment is normalized with its alignments.
    encoding = encode_cut(added, plan, "KING<x>ＫＩ", 0, None)
    assert (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids) == (
        [6, 8, 4], ["king", "<x>", "ki"], [(0, 4), (4, 7), (7, 9)], [0, 1, 2])


def test_the_engine_word_cache_empties_with_the_model_cache() -> None:
    from tokviz.engine.plans import EnginePlans

    model = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
    splitter = Whitespace()
    plans = EnginePlans()
    plan = plans.current(None, splitter, model).cut()
    encode_cut(AddedVocabulary(), plan, "ab ab", 0, None)
    assert list(plan.words) == ["ab"]
    model.clear_cache()
    assert plans.current(None, splitter, model).cut() is plan  # the plan is kept, its words go
    encode_cut(AddedVocabulary(), plan, "a", 0, None)
    assert list(plan.words) == ["a"]
    model.dropout = 0.5
    assert build_plan(None, Whitespace(), model) is None  # sampling: nothing kept


def test_only_the_segments_a_line_local_normalizer_changes_are_aligned() -> None:
    from tokviz.normalizers import Strip

    model = WordLevel({"fi": 0, "x": 1, "[UNK]": 2}, unk_token="[UNK]")
    plan = build_plan(NFKC(), Whitespace(), model)
    assert plan.by_segments and not build_plan(Sequence([NFKC(), Strip()]), Whitespace(), model).by_segments
    encoding = encode_cut(AddedVocabulary(), plan, "x x\nﬁ x\nx", 0, None)
    assert (encoding.tokens, encoding.offsets, encoding.word_ids) == (
        ["x", "x", "fi", "x", "x"], [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)], [0, 1, 2, 3, 4])
    # Strip is not local to lines: the segment is normalized whole (its ends only).
    stripped = encode_cut(AddedVocabulary(), build_plan(Sequence([NFKC(), Strip()]), Whitespace(), model), " ﬁ\nx ", 0, None)
    assert (stripped.tokens, stripped.offsets) == (["fi", "x"], [(1, 2), (3, 4)])


def test_byte_level_words_are_encoded_once_and_agree_with_the_general_path() -> None:
    symbols = [chr(c) for c in range(33, 127)] + ["Ġ"]
    vocab = {symbol: index for index, symbol in enumerate(symbols)}
    vocab.update({"he": len(vocab), "Ġhe": len(vocab) + 1, "llo": len(vocab) + 2, "ll": len(vocab) + 3})
    tok = Tokenizer(BPE(vocab, [("h", "e"), ("Ġ", "he"), ("l", "l"), ("ll", "o")]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    general = Tokenizer.from_str(tok.to_str())
    general.use_fast_path = False
    for text in ("hello hello", "he said hello!", "  hello  ", ""):
        assert _fields(tok.encode(text)) == _fields(general.encode(text)), text
    assert tok.encode("hello hello").tokens == ["he", "llo", "Ġhe", "llo"]
    assert set(tok._engine().cut().words) >= {"hello", " hello"}  # (keys are the text's words, before the byte mapping)
