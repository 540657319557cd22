"""Issue 13's per-model fast encoders (tokviz.engine.cut) against the models themselves.

``unigram_word_encoder`` walks the piece dict directly instead of the model's prefix dict;
on random vocabularies (scores with ties, unk or not, byte fallback or not) and random
words (multilingual, emoji, combining marks, '▁') it must give exactly what
``Unigram.tokenize`` gives: ids, values and offsets, including fused unknown runs.
``bpe_word_encoder`` merges with the model's merge table but builds the tuples directly; on
random vocabularies and merges (prefix / suffix decorations, ignore_merges, byte fallback,
unk or not) it must give what ``BPE.tokenize`` gives, or None where it leaves the word to the
model. ``wordpiece_word_encoder`` (greedy longest match) likewise against ``WordPiece.tokenize``.
The chunk and word caches must encode a text repeated in one cold call once and give the
same encoding as a warm call.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_unigram import check_word
from tokviz import Tokenizer, models, normalizers, pre_tokenizers
from tokviz.errors import VocabularyError
from tokviz.engine.bpe import bpe_word_encoder, byte_symbol_tokens
from tokviz.engine.entries import _model_word_entry
from tokviz.engine.unigram import unigram_word_encoder
from tokviz.engine.wordpiece import wordpiece_word_encoder

CHARS = ["a", "b", "c", "▁", "é", "e\u0301", "中", "😀", "👍🏽", "ß"]
WORD = st.lists(st.sampled_from(CHARS), max_size=9).map("".join)


@st.composite
def unigram_models(draw):
    pieces = draw(st.lists(st.lists(st.sampled_from(CHARS[:6]), min_size=1, max_size=4).map("".join), min_size=1, max_size=25, unique=True))
    scores = draw(st.lists(st.sampled_from([-1.0, -2.0, -2.5, -4.0, -7.0]), min_size=len(pieces), max_size=len(pieces)))
    vocab = [("<unk>", 0.0), *zip(pieces, scores)]
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        vocab += [(f"<0x{byte:02X}>", -9.0) for byte in draw(st.lists(st.integers(0, 255), max_size=40))]
        vocab += [(f"<0x{byte:02X}>", -9.0) for byte in "中😀".encode() if draw(st.booleans())]
    unk_id = draw(st.sampled_from([0, None]))
    return models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(unigram_models(), st.lists(WORD, min_size=1, max_size=6))
def test_unigram_word_encoder_equals_the_model(model, words) -> None:
    encode = unigram_word_encoder(model)
    for word in words:
        check_word(model, encode, word)


def test_unigram_word_encoder_worked_example() -> None:
    model = models.Unigram([("<unk>", 0.0), ("▁hu", -1.0), ("g", -2.0), ("▁hug", -2.5), ("s", -3.0)], unk_id=0)
    encode = unigram_word_encoder(model)
    # '▁hug' (-2.5) beats '▁hu' + 'g' (-3.0); 'xy' is one fused unknown piece, its text kept.
    assert encode("▁hugs") == ((3, 4), ("▁hug", "s"), (0, 4), (4, 5))
    assert encode("x▁hugxy") == ((0, 3, 0), ("x", "▁hug", "xy"), (0, 1, 5), (1, 5, 7))
    assert unigram_word_encoder(models.WordLevel({"a": 0}, unk_token="a")) is None


def t5_like(vocab):
    tok = Tokenizer(models.Unigram(vocab, unk_id=0))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    return tok


def test_a_word_repeated_in_one_cold_text_is_encoded_once_and_warm_calls_agree() -> None:
    vocab = [("<unk>", 0.0), ("▁the", -1.0), ("▁", -2.0), ("t", -3.0), ("h", -3.0), ("e", -3.0), ("▁cat", -1.5)]
    text = "the cat the the cat, the"
    cold = t5_like(vocab)
    calls = []
    plan = cold._engine().cut()
    original = plan.unigram
    plan.unigram = lambda word: calls.append(word) or original(word)
    first = cold.encode(text)
    assert sorted(calls) == ["▁cat", "▁cat,", "▁the"]  # each distinct word once
    assert first.tokens == ["▁the", "▁cat", "▁the", "▁the", "▁cat", ",", "▁the"]
    assert first.ids == [1, 6, 1, 1, 6, 0, 1]
    again = cold.encode(text)
    general = t5_like(vocab)
    general.use_fast_path = False
    for encoding in (again, general.encode(text)):
        assert (encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids) == (first.ids, first.tokens, first.offsets, first.word_ids)


# Mostly chars a random BPE alphabet may have (so most words are merged, not left to the model).
BPE_WORD = st.lists(st.sampled_from(["a", "b", "c", "▁", "中", "😀", "a", "b", "é"]), max_size=9).map("".join)


@st.composite
def bpe_models(draw):
    prefix = draw(st.sampled_from([None, "##"]))
    suffix = draw(st.sampled_from([None, "</w>"]))
    alphabet = draw(st.lists(st.sampled_from(CHARS[:4] + ["中", "😀"]), min_size=1, max_size=6, unique=True))
    symbols = list(alphabet)
    if prefix:
        symbols += [prefix + char for char in alphabet]
    if suffix:
        symbols += [char + suffix for char in symbols]
    vocab = {"<unk>": 0}
    for symbol in symbols:
        vocab.setdefault(symbol, len(vocab))
    merges = []
    for left, right in draw(st.lists(st.tuples(st.sampled_from(symbols), st.sampled_from(symbols)), max_size=25)):
        if prefix:
            if not right.startswith(prefix):
                continue
            merged = left + right[len(prefix):]
        else:
            merged = left + right
        if (left, right) not in merges and (merged not in vocab or draw(st.booleans())):
            merges.append((left, right))
            vocab.setdefault(merged, len(vocab))
            symbols.append(merged)
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        for byte in "é中".encode():
            vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    return models.BPE(
        vocab, merges, unk_token=draw(st.sampled_from(["<unk>", None])), continuing_subword_prefix=prefix,
        end_of_word_suffix=suffix, byte_fallback=byte_fallback, ignore_merges=draw(st.booleans()),
        fuse_unk=draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(bpe_models(), st.lists(BPE_WORD, min_size=1, max_size=6))
def test_bpe_word_encoder_equals_the_model(model, words) -> None:
    encode = bpe_word_encoder(model)
    for word in words:
        fast = encode(word)
        if fast is not None:
            assert fast == _model_word_entry(model, word), (word, model.to_dict())
        # As the engine's byte-level words use it: the same as the model's own tokens.
        assert byte_symbol_tokens(word, model.tokenize, encode) == byte_symbol_tokens(word, model.tokenize)


def test_bpe_word_encoder_worked_example() -> None:
    vocab = {"<unk>": 0, "h": 1, "u": 2, "g": 3, "g</w>": 4, "ug</w>": 5, "hug</w>": 6, "s</w>": 7, "ug": 8}
    model = models.BPE(vocab, [("u", "g</w>"), ("h", "ug</w>"), ("u", "g")], unk_token="<unk>", end_of_word_suffix="</w>")
    encode = bpe_word_encoder(model)
    assert encode("hug") == ((6,), ("hug</w>",), (0,), (3,))
    assert encode("hugs") == ((1, 8, 7), ("h", "ug", "s</w>"), (0, 1, 3), (1, 3, 4))
    assert encode("hx") == ((1, 0), ("h", "<unk>"), (0, 1), (1, 2))  # "x</w>" is unknown
    assert bpe_word_encoder(models.BPE(vocab, [], dropout=0.5)) is None
    ignoring = bpe_word_encoder(models.BPE({"a": 0, "b": 1, "ab": 2, "abb": 3}, [("a", "b")], ignore_merges=True))
    assert ignoring("abb") == ((3,), ("abb",), (0,), (3,))
    assert ignoring("abab") == ((2, 2), ("ab", "ab"), (0, 2), (2, 4))


@st.composite
def wordpiece_models(draw):
    pieces = draw(st.lists(st.lists(st.sampled_from(CHARS[:6]), min_size=1, max_size=4).map("".join), max_size=25, unique=True))
    vocab = {}
    for piece in pieces:
        vocab.setdefault(draw(st.sampled_from(["", "##"])) + piece, len(vocab))
    if draw(st.booleans()):
        vocab.setdefault("[UNK]", len(vocab))
    return models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=draw(st.sampled_from([4, 100])))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(wordpiece_models(), st.lists(WORD, min_size=1, max_size=6))
def test_wordpiece_word_encoder_equals_the_model(model, words) -> None:
    encode = wordpiece_word_encoder(model)
    for word in words:
        fast = encode(word)
        if fast is None:  # left to the model: it raises for an unk without [UNK] in the vocabulary
            with pytest.raises(VocabularyError):
                model.tokenize(word)
        else:
            assert fast == _model_word_entry(model, word), word


def test_wordpiece_word_encoder_worked_example() -> None:
    encode = wordpiece_word_encoder(models.WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "##a": 4}))
    assert encode("unaffable") == ((1, 2, 3), ("un", "##aff", "##able"), (0, 2, 5), (2, 5, 9))
    assert encode("unx") == ((0,), ("[UNK]",), (0,), (3,))
    assert encode("") == ((), (), (), ())
    assert wordpiece_word_encoder(models.WordLevel({"a": 0}, unk_token="a")) is None


def test_the_cycle_collector_is_left_as_it_was_by_an_encode() -> None:
    import gc

    tok = t5_like([("<unk>", 0.0), ("▁the", -1.0), ("▁", -2.0), ("t", -3.0), ("h", -3.0), ("e", -3.0)])
    assert gc.isenabled()
    assert tok.encode("the the").ids == [1, 1]
    assert gc.isenabled()
    gc.disable()
    try:
        assert tok.encode("the eh").ids == [1, 2, 5, 4]
        assert not gc.isenabled()
    finally:
        gc.enable()
