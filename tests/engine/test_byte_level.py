"""tokviz.engine.byte_level: the byte-level lane's state and encodings, against the general path."""

from __future__ import annotations

import copy

from tokviz import Tokenizer, models, pre_tokenizers
from tokviz.engine.plans import EnginePlans

SYMBOLS = [chr(c) for c in range(33, 127)] + ["Ġ"]


def _gpt2_like() -> Tokenizer:
    vocab = {symbol: index for index, symbol in enumerate(SYMBOLS)}
    vocab.update({"he": len(vocab), "Ġhe": len(vocab) + 1, "llo": len(vocab) + 2, "ll": len(vocab) + 3})
    tok = Tokenizer(models.BPE(vocab, [("h", "e"), ("Ġ", "he"), ("l", "l"), ("ll", "o")]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tok


def test_the_lane_encodes_as_the_general_path_and_caches_each_word_once() -> None:
    tok = _gpt2_like()
    general = _gpt2_like()
    general.use_fast_path = False
    for text in ("hello hello", "he said hello!", "  hello  ", ""):
        mine, expected = tok.encode(text), general.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == (expected.ids, expected.tokens, expected.offsets, expected.word_ids)
    assert tok.encode("hello hello").tokens == ["he", "llo", "Ġhe", "llo"]
    assert set(tok._engine().byte_level().words) >= {"hello", " hello"}  # (keys are the text's words, before the byte mapping)


def test_a_copy_takes_its_own_state_and_the_model_cache_clear_empties_the_words() -> None:
    plans = EnginePlans()
    plans.made["byte_level"] = "the lane"
    twin = copy.copy(plans)
    assert twin is not plans and twin.made is plans.made  # shared until either's components change
    tok = _gpt2_like()
    tok.encode("hello")
    tok.model.clear_cache()
    tok.encode("he")
    assert list(tok._engine().byte_level().words) == ["he"]
