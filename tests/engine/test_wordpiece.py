"""tokviz.engine.wordpiece: the WordPiece word encoder equals the model, on worked examples."""

from __future__ import annotations

from tokviz.engine.wordpiece import wordpiece_word_encoder
from tokviz.models import BPE, WordPiece


def test_greedy_longest_match_with_prefix_and_unk() -> None:
    model = WordPiece({"[UNK]": 0, "hu": 1, "##g": 2, "##s": 3, "hug": 4, "un": 5, "##hug": 6}, max_input_chars_per_word=8)
    encode = wordpiece_word_encoder(model)
    for word in ("hugs", "hum", "unhug", "hug", "unhugs", "x" * 9):
        tokens = model.tokenize(word)
        ids, values, starts, ends = encode(word)
        assert (list(ids), list(values), list(zip(starts, ends))) == (
            [t.id for t in tokens], [t.value for t in tokens], [t.offsets for t in tokens]), word
    assert encode("unhugs") == ((5, 6, 3), ("un", "##hug", "##s"), (0, 2, 5), (2, 5, 6))


def test_other_models_have_no_wordpiece_encoder() -> None:
    assert wordpiece_word_encoder(BPE({"a": 0}, [])) is None
