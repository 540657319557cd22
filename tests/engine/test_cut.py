"""The engine (``tokviz.engine``) on pipelines nobody tuned a lane for, against HF ``tokenizers``:
ids, tokens, offsets and word ids of every line, and of fuzzed text in many scripts.

The kinds: a CLIP-style BPE (``</w>``, a Split regex, then ByteLevel), a Llama-type BPE with
byte fallback trained on Chinese and English (no pre-tokenizer: a line is one word), a
WordLevel on Whitespace, a BPE behind a Split regex with NFKC and added tokens (single-word,
lstrip, normalized or not), a WordPiece behind Punctuation + Digits with Lowercase, and the
Llama-type one behind Digits (the engine merges its long words piece by piece).
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

from tokviz import Tokenizer  # noqa: E402
from tokviz.engine.cut import cut_plan, encode_cut  # noqa: E402
from tokviz.added_vocabulary import AddedToken, AddedVocabulary  # noqa: E402
from tokviz.models import BPE, WordLevel  # noqa: E402
from tokviz.pre_tokenizers import Split, Whitespace  # noqa: E402
from tokviz.normalizers import Lowercase, NFKC, Sequence  # noqa: E402
from tokviz.normalizers import Normalizer  # noqa: E402

CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
SPLIT_PATTERN = r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"
KINDS = ("clip", "llama_zh", "llama_digits", "wordlevel", "split_added", "wordpiece_punct")


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
    if kind == "llama_digits":
        data = json.loads(_build("llama_zh", lines).to_str())
        data["pre_tokenizer"] = {"type": "Digits", "individual_digits": True}
        return tokenizers.Tokenizer.from_str(json.dumps(data))
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
    for kind in KINDS:
        hf = tokenizers.Tokenizer.from_str(_build(kind, lines).to_str())
        built[kind] = (hf, Tokenizer.from_str(hf.to_str()))
    return built


@pytest.fixture(scope="module")
def test_lines(read_shared_corpus, hard_strings) -> list[str]:
    lines = read_shared_corpus("wikitext2_valid.txt").splitlines()[::40]
    return list(hard_strings) + lines + chinese_lines(40, 7) + [
        "King said: the game is on <|user|> thee Gretel:: ﬁsh 🤗 and the  game", "ＫＩＮＧ said<|assistant|>said thee",
    ]


def _fields(encoding) -> tuple:
    return encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids


@pytest.mark.parametrize("kind", KINDS)
def test_every_line_encodes_as_in_hf(kind, pairs, test_lines) -> None:
    hf, ours = pairs[kind]
    differences = [line for line in test_lines if _fields(ours.encode(line)) != _fields(hf.encode(line))]
    assert not differences, f"{kind}: {len(differences)} lines differ, first {differences[0]!r:.80}"


MIXED = "aZ 9,.!?'-:;<>|\t\n\u00e9\u0301\ufb01\uff21\u4e00\u4e01\u4e03\u4e09\u4e0a\uac00\u0431\u05d0\u0627\U0001F917\u200d"
FUZZED = st.text(alphabet=st.sampled_from(MIXED), max_size=40) | st.sampled_from(["King", "thee said", "<|user|>", "the game", "ﬁsh"]).flatmap(
    lambda word: st.tuples(st.text(alphabet=st.sampled_from(MIXED), max_size=8), st.text(alphabet=st.sampled_from(MIXED), max_size=8)).map(
        lambda ends: ends[0] + word + ends[1]))


@pytest.mark.parametrize("kind", KINDS)
def test_fuzzed_text_encodes_as_in_hf(kind, pairs) -> None:
    hf, ours = pairs[kind]

    @settings(max_examples=250, deadline=None, derandomize=True)
    @given(FUZZED)
    def check(text: str) -> None:
        assert _fields(ours.encode(text)) == _fields(hf.encode(text))
        assert _fields(ours.encode(text, add_special_tokens=False)) == _fields(hf.encode(text, add_special_tokens=False))

    check()


def test_the_untuned_kinds_take_the_engine_and_it_agrees_with_the_general_path(pairs, test_lines) -> None:
    for kind in ("wordlevel", "split_added", "wordpiece_punct", "llama_digits"):
        _, ours = pairs[kind]
        plan = ours._engine().cut()
        assert plan is not None, kind
        assert all(encode_cut(plan, ours._added, line, 0, None) is not None for line in test_lines), kind
        general = Tokenizer.from_str(ours.to_str())
        general.use_fast_path = False
        for line in test_lines:
            assert _fields(ours.encode(line)) == _fields(general.encode(line)), (kind, line)
    assert ours._engine().cut().pieces  # (llama_digits: its long words went piece by piece)


def test_a_worked_example_with_added_tokens() -> None:
    model = BPE({"k": 0, "i": 1, "n": 2, "g": 3, "ki": 4, "ng": 5, "king": 6, "[UNK]": 7}, [("k", "i"), ("n", "g"), ("ki", "ng")], unk_token="[UNK]")
    plan = cut_plan(Sequence([NFKC(), Lowercase()]), Split(" ", "removed"), model)
    added = AddedVocabulary()
    encoding = encode_cut(plan, added, "king kin  g", 0, None)
    assert (encoding.ids, encoding.offsets, encoding.word_ids) == ([6, 4, 2, 3], [(0, 4), (5, 7), (7, 8), (10, 11)], [0, 1, 1, 2])
    # An added token is cut out first and is a word of its own.
    added.add_tokens([AddedToken("<x>", special=True)], model, None)
    encoding = encode_cut(plan, added, "king<x>kin", 0, None)
    assert (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids) == (
        [6, 8, 4, 2], ["king", "<x>", "ki", "n"], [(0, 4), (4, 7), (7, 9), (9, 10)], [0, 1, 2, 2])
    # A normalizer that changes the text: that segment is normalized with its alignments.
    encoding = encode_cut(plan, added, "KING<x>ＫＩ", 0, None)
    assert (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids) == (
        [6, 8, 4], ["king", "<x>", "ki"], [(0, 4), (4, 7), (7, 9)], [0, 1, 2])


def test_a_custom_normalizer_or_a_text_changing_pre_tokenizer_gets_no_cut_plan() -> None:
    class Upper:
        def normalize(self, normalized) -> None:
            normalized.uppercase()

    model = WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
    assert cut_plan(Normalizer.custom(Upper()), Whitespace(), model) is None
    from tokviz.pre_tokenizers import ByteLevel, Metaspace

    assert cut_plan(None, ByteLevel(), model) is None
    assert cut_plan(None, Metaspace(), model) is None
    assert cut_plan(None, Whitespace(), model) is not None


def test_the_engine_word_cache_empties_with_the_model_cache() -> None:
    from tokviz.engine.plans import EnginePlans

    model = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
    splitter = Whitespace()
    plans = EnginePlans()
    plan = plans.current(None, splitter, model).cut()
    encode_cut(plan, AddedVocabulary(), "ab ab", 0, None)
    assert list(plan.words) == ["ab"]
    model.clear_cache()
    assert plans.current(None, splitter, model).cut() is plan  # the plan is kept, its words go
    encode_cut(plan, AddedVocabulary(), "a", 0, None)
    assert list(plan.words) == ["a"]
    model.dropout = 0.5
    assert cut_plan(None, Whitespace(), model).words is None  # sampling: nothing kept


def test_only_the_lines_a_line_local_normalizer_changes_are_aligned() -> None:
    from tokviz.normalizers import Strip

    model = WordLevel({"fi": 0, "x": 1, "[UNK]": 2}, unk_token="[UNK]")
    plan = cut_plan(NFKC(), Whitespace(), model)
    assert plan.by_lines and not cut_plan(Sequence([NFKC(), Strip()]), Whitespace(), model).by_lines
    encoding = encode_cut(plan, AddedVocabulary(), "x x\nﬁ x\nx", 0, None)
    assert (encoding.tokens, encoding.offsets, encoding.word_ids) == (
        ["x", "x", "fi", "x", "x"], [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)], [0, 1, 2, 3, 4])
    # Strip is not local to lines: the segment is normalized whole (its ends only).
    stripped = encode_cut(cut_plan(Sequence([NFKC(), Strip()]), Whitespace(), model), AddedVocabulary(), " ﬁ\nx ", 0, None)
    assert (stripped.tokens, stripped.offsets) == (["fi", "x"], [(1, 2), (3, 4)])
