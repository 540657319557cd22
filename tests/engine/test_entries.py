"""tokviz.engine.entries: a word's entry, its tokens and their offsets in the word (a byte-level
word's also trimmed as the ByteLevel post-processor trims them); worked examples."""

from __future__ import annotations

from tokviz import models, pre_tokenizers
from tokviz.engine.entries import _byte_entry, _model_word_entry, _word_entry
from tokviz.engine.plan import build_plan

VOCAB = {"a": 0, "b": 1, "Ġ": 2, "Ġa": 3, "Ã": 4, "©": 5, "Ã©": 6}


def test_a_byte_level_entry_holds_offsets_in_chars_and_trimmed() -> None:
    plan = build_plan(None, pre_tokenizers.ByteLevel(False), models.BPE(VOCAB, [("Ġ", "a"), ("Ã", "©")]))
    # ids, tokens, starts, ends; trimmed starts and ends; lengths; trimmed offsets from each token's start; tiles
    assert _byte_entry(plan, " ab") == ((3, 1), ("Ġa", "b"), (0, 2), (2, 3), (1, 2), (2, 3), (2, 1), (1, 0), (2, 1), True)
    assert _byte_entry(plan, "é") == ((6,), ("Ã©",), (0,), (1,), (0,), (1,), (1,), (0,), (1,), True)  # (two bytes, one char)
    assert _byte_entry(plan, " ") == ((2,), ("Ġ",), (0,), (1,), (1,), (1,), (1,), (1,), (1,), True)  # (a space trimmed to nothing)


def test_a_word_entry_is_the_models_tokens_and_is_cached() -> None:
    model = models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2})
    plan = build_plan(None, pre_tokenizers.Whitespace(), model)
    assert _word_entry(plan, "hugs") == ((1, 2), ("hug", "##s"), (0, 3), (3, 4)) == _model_word_entry(model, "hugs")
    assert plan.words["hugs"] == ((1, 2), ("hug", "##s"), (0, 3), (3, 4))
    assert _word_entry(plan, "xyz") == ((0,), ("[UNK]",), (0,), (3,))
