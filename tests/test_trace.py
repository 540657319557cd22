"""tokviz.trace: every stage of one input, as Tokenizer.trace records it, on a worked example."""

from __future__ import annotations

from tokviz import Tokenizer, normalizers, pre_tokenizers
from tokviz.models import WordLevel
from tokviz.trace import SequenceTrace, TokenizerTrace


def test_a_trace_records_each_stage_with_original_offsets() -> None:
    tok = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1, "you": 2}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(["[SEP]"])
    trace = tok.trace("Hello [SEP] YOU!")
    assert isinstance(trace, TokenizerTrace) and isinstance(trace.sequences[0], SequenceTrace)
    sequence = trace.sequences[0]
    assert sequence.normalized == "hello [SEP] you!"
    assert [(p.text, p.offsets, p.added) for p in sequence.pre_tokens] == [
        ("hello", (0, 5), False), ("[SEP]", (6, 11), True), ("you", (12, 15), False), ("!", (15, 16), False),
    ]
    assert [(t.value, t.offsets) for t in sequence.tokens] == [("hello", (0, 5)), ("[SEP]", (6, 11)), ("you", (12, 15)), ("[UNK]", (15, 16))]
    assert sequence.changed[:2] == (True, False)  # 'H' lowercased, 'e' kept
    assert trace.encoding.ids == [1, 3, 2, 0]
    assert sequence.decoded == "hello [SEP] you [UNK]" and not trace.round_trip
