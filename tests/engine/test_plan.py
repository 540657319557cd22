"""tokviz.engine.plan: what the engine asks a pipeline's components once (build_plan), and what
it refuses (then the general path encodes); tests/engine/test_cut.py compares whole pipelines."""

from __future__ import annotations

from tokviz import models, normalizers, pre_tokenizers
from tokviz.engine.plan import _odd_values, build_plan
from tokviz.models import WordLevel
from tokviz.normalizers import Normalizer
from tokviz.pre_tokenizers import Whitespace


def test_each_pre_tokenizer_gets_the_splitter_its_steps_declare() -> None:
    model = WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
    splitters = {
        name: build_plan(None, pre_tokenizer, model).splitter for name, pre_tokenizer in [
            ("Whitespace", Whitespace()), ("Digits", pre_tokenizers.Digits(True)),
            ("WhitespaceSplit+Metaspace", pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])),
            ("WhitespaceSplit+Digits", pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits()])),
        ]
    }
    assert splitters == {"Whitespace": "words", "Digits": "tiles", "WhitespaceSplit+Metaspace": "ws_metaspace", "WhitespaceSplit+Digits": "cut"}


def test_token_values_that_are_not_slices_of_the_text() -> None:
    llama = models.BPE({"a": 0, "<unk>": 1, "<0x0A>": 2}, [], unk_token="<unk>", byte_fallback=True)
    assert {"<unk>", "<0x0A>", "<0xFF>"} <= _odd_values(llama)
    assert _odd_values(models.WordPiece({"a": 0})) is None  # ("##" pieces)
    assert build_plan(normalizers.Lowercase(), Whitespace(), llama).odd_values == _odd_values(llama)


def test_a_custom_normalizer_or_a_byte_level_prefixing_words_gets_no_plan() -> None:
    class Upper:
        def normalize(self, normalized) -> None:
            normalized.uppercase()

    model = WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
    assert build_plan(Normalizer.custom(Upper()), Whitespace(), model) is None
    from tokviz.pre_tokenizers import ByteLevel, Metaspace, Punctuation, Sequence

    assert build_plan(None, ByteLevel(), model).splitter == "bytes"  # (a prefix space to each piece)
    assert build_plan(None, Sequence([Punctuation(), ByteLevel()]), model) is None  # (... to every word of a step before)
    assert build_plan(None, Metaspace(), model).splitter == "metaspace"
    assert build_plan(None, Punctuation(), model).splitter == "tiles"  # (the words it declares)
    assert build_plan(None, Punctuation("removed"), model).splitter == "cut"  # (its cut_spans)
    assert build_plan(None, None, model).splitter == "cut"  # (the piece is one word)
