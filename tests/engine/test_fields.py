"""tokviz.engine.fields: a piece's ids, tokens, offsets and word ids assembled from its words'
entries (worked examples; tests/engine/test_cut.py compares whole pipelines with HF)."""

from __future__ import annotations

from tokviz import models, normalizers, pre_tokenizers
from tokviz.engine.fields import _line_fields
from tokviz.engine.plan import build_plan


def test_long_words_cut_into_pieces_keep_their_word_ids() -> None:
    # A Llama normalizer with Digits: a line is one word but for its digits; its long words merge
    # piece by piece where the model never merges across, each piece's tokens in its word.
    vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "▁ab": 5, "1": 6}
    model = models.BPE(vocab, [("▁", "a"), ("▁a", "b")], unk_token="<unk>")
    normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    plan = build_plan(normalizer, pre_tokenizers.Digits(True), model)
    text = "ab " * 12 + "1 ab"
    ids, tokens, offsets, word_ids, n_words = _line_fields(plan, text, True)
    assert ids == (5,) * 12 + (1, 6, 5) and word_ids == (0,) * 13 + (1, 2) and n_words == 3
    assert offsets[:2] == ((0, 2), (2, 5)) and offsets[-3:] == ((35, 36), (36, 37), (37, 40))
    assert plan.pieces  # (the words were cut: the model's pieces)
    # Met again, the long word's whole entry is cached, and the next time it is looked up whole.
    assert _line_fields(plan, text, True) == (ids, tokens, offsets, word_ids, n_words)
    assert plan.words["▁ab" * 12 + "▁"] == ((5,) * 12 + (1,), ("▁ab",) * 12 + ("▁",), tuple(range(0, 37, 3)), (*range(3, 37, 3), 37))
    assert _line_fields(plan, text, True) == (ids, tokens, offsets, word_ids, n_words)


def test_whole_piece_fields_literal():
    vocab = {"[UNK]": 0, "hi": 1, "!": 2, "▁": 3, "▁a": 4, "b": 5, "a": 6}
    plan = build_plan(normalizers.Lowercase(), pre_tokenizers.Whitespace(), models.WordLevel(vocab, unk_token="[UNK]"))
    assert _line_fields(plan, "Hi!\t you", True) == ((1, 2, 0), ("hi", "!", "[UNK]"), ((0, 2), (2, 3), (5, 8)), (0, 1, 2), 3)
    plan = build_plan(None, pre_tokenizers.Metaspace(prepend_scheme="always"), models.BPE(vocab, [("▁", "a")], unk_token="[UNK]"))
    # "▁a▁▁b": words '▁a', '▁', '▁b'; the prepended '▁' shares the first char's offsets.
    assert _line_fields(plan, "a  b", True) == (
        (4, 3, 3, 5), ("▁a", "▁", "▁", "b"), ((0, 1), (1, 2), (2, 3), (3, 4)), (0, 1, 2, 2), 3
    )
    # A char a stage makes two of (NFKC of 'ﬁ'), each aligned to it: offsets mapped back to it.
    # One that composes with the char before (a combining acute): the chunks do it.
    plan = build_plan(normalizers.NFKC(), pre_tokenizers.Whitespace(), models.WordLevel(vocab, unk_token="[UNK]"))
    assert _line_fields(plan, "ﬁ hi", True) == ((0, 1), ("[UNK]", "hi"), ((0, 1), (2, 4)), (0, 1), 2)
    assert _line_fields(plan, "e\u0301 hi", True) is None
