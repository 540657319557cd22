"""Post-processors: literal worked examples, and the same processor run by HF on the same input."""

from __future__ import annotations

import pytest

from tokviz import Encoding, processors
from tokviz.errors import SerializationError, SpecialTokenError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import processors as hf_processors  # noqa: E402

FIELDS = ("ids", "tokens", "offsets", "type_ids", "word_ids", "special_tokens_mask", "attention_mask", "sequence_ids")


def _tokens(words: list[str], start_id: int, type_id: int = 0) -> Encoding:
    triples, position = [], 0
    for index, word in enumerate(words):
        triples.append((start_id + index, word, (position, position + len(word))))
        position += len(word)
    return Encoding.from_tokens(triples, type_id=type_id, word_ids=list(range(len(words))))


def _hf_pair(words_a: list[str], words_b: list[str] | None, processor, add_special_tokens: bool = True):
    """Run an HF processor through a WordLevel tokenizer fed the same tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: 10 + i for i, w in enumerate(words_a)} | {w: 20 + i for i, w in enumerate(words_b or [])}
    vocab |= {"[UNK]": 0}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(tokenizers.Regex("\\|"), "removed")
    tok.post_processor = processor
    return tok.encode("|".join(words_a), "|".join(words_b) if words_b else None, add_special_tokens=add_special_tokens)


def _our_input(words_a, words_b):
    a = _tokens(words_a, 10, 0)
    b = None if words_b is None else _tokens(words_b, 20, 1)
    return a, b


def _with_bar_offsets(encoding: Encoding) -> Encoding:
    # Shift offsets as if the words were joined by '|' (what the HF side encodes).
    shifted = []
    for index, (start, end) in enumerate(encoding._offsets):
        shifted.append((start + index, end + index))
    encoding._offsets = tuple(shifted)
    return encoding


CASES = [
    (["hello", "world"], None),
    (["hello", "world"], ["how", "are", "you"]),
    (["Ġhi", "Ġthere", "Ġ"], ["Ġyou", "ĠĠ"]),
]

PROCESSORS = [
    (
        lambda: processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
        lambda: hf_processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
    ),
    (
        lambda: processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
        lambda: hf_processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
    ),
    (
        lambda: processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
        lambda: hf_processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
    ),
    (lambda: processors.ByteLevel(trim_offsets=True), lambda: hf_processors.ByteLevel(trim_offsets=True)),
    (
        lambda: processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
        ),
        lambda: hf_processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
        ),
    ),
    (
        lambda: processors.Sequence(
            [processors.ByteLevel(), processors.TemplateProcessing(single="$A <e>", pair="$A <e> $B:1 <e>:1", special_tokens=[("<e>", 3)])]
        ),
        lambda: hf_processors.Sequence(
            [hf_processors.ByteLevel(), hf_processors.TemplateProcessing(single="$A <e>", pair="$A <e> $B:1 <e>:1", special_tokens=[("<e>", 3)])]
        ),
    ),
]


@pytest.mark.parametrize("make_ours,make_theirs", PROCESSORS)
@pytest.mark.parametrize("words_a,words_b", CASES)
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_processors_match_hf(make_ours, make_theirs, words_a, words_b, add_special_tokens):
    theirs = _hf_pair(words_a, words_b, make_theirs(), add_special_tokens)
    a, b = _our_input(words_a, words_b)
    _with_bar_offsets(a)
    if b is not None:
        _with_bar_offsets(b)
    ours = make_ours().process(a, b, add_special_tokens)
    for field in FIELDS:
        assert getattr(ours, field) == getattr(theirs, field), field
    assert make_ours().num_special_tokens_to_add(words_b is not None) == make_theirs().num_special_tokens_to_add(
        words_b is not None
    )


def test_bert_worked_example():
    processor = processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))
    enc = processor.process(_tokens(["hello", ","], 7), _tokens(["you"], 9, 1))
    assert enc.tokens == ["[CLS]", "hello", ",", "[SEP]", "you", "[SEP]"]
    assert enc.type_ids == [0, 0, 0, 0, 1, 1]
    assert enc.special_tokens_mask == [1, 0, 0, 1, 0, 1]
    assert enc.sequence_ids == [None, 0, 0, None, 1, None]
    assert enc.offsets == [(0, 0), (0, 5), (5, 6), (0, 0), (0, 3), (0, 0)]


def test_trim_offsets_worked_example():
    enc = Encoding.from_tokens([(1, "Hello", (0, 5)), (2, "Ġworld", (5, 11)), (3, "ĠĠ", (11, 13))])
    processors.trim_offsets(enc, add_prefix_space=False)
    assert enc.offsets == [(0, 5), (6, 11), (13, 13)]
    first = Encoding.from_tokens([(2, "Ġworld", (0, 5))])
    processors.trim_offsets(first, add_prefix_space=True)
    assert first.offsets == [(0, 5)]  # the prefix space was added, nothing to trim


def test_template_parsing():
    assert processors.parse_piece("$B:1") == processors.Piece("Sequence", "B", 1)
    assert processors.parse_piece("$1") == processors.Piece("Sequence", "A", 1)
    assert processors.parse_piece("$") == processors.Piece("Sequence", "A", 0)
    assert processors.parse_piece("[SEP]:1") == processors.Piece("SpecialToken", "[SEP]", 1)
    with pytest.raises(SpecialTokenError):
        processors.parse_piece("$C")
    with pytest.raises(SpecialTokenError):
        processors.parse_piece("$A:")


def test_template_errors_name_the_problem():
    with pytest.raises(SpecialTokenError, match=r"\[CLS\]"):
        processors.TemplateProcessing(single="[CLS] $A", pair="$A $B", special_tokens=[])
    with pytest.raises(SpecialTokenError, match="both sequences"):
        processors.TemplateProcessing(single="$A", pair="$A $A", special_tokens=[])


def test_multi_token_special_token():
    template = processors.TemplateProcessing(
        single="[2FR] $A", pair="$A $B", special_tokens=[{"id": "[2FR]", "ids": [5, 6], "tokens": ["to", "FR"]}]
    )
    assert template.process(_tokens(["x"], 9)).tokens == ["to", "FR", "x"]
    assert template.num_special_tokens_to_add(False) == 2


@pytest.mark.parametrize("make_ours,make_theirs", PROCESSORS)
def test_serialization_matches_hf(make_ours, make_theirs):
    import json

    from tokenizers import Tokenizer, models

    tok = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    tok.post_processor = make_theirs()
    theirs = json.loads(tok.to_str())["post_processor"]
    assert make_ours().to_dict() == theirs
    assert processors.from_dict(theirs).to_dict() == theirs


def test_unknown_processor_is_named():
    with pytest.raises(SerializationError, match="Whatever"):
        processors.from_dict({"type": "Whatever"})
    with pytest.raises(SerializationError, match="malformed"):
        processors.from_dict({"type": "BertProcessing", "sep": ["[SEP]"]})


def test_a_subclass_with_its_own_processing_is_not_served_by_its_base_declarations():
    """The engine trims byte-level offsets in its own pass where the processor declares it may
    (``trims_offsets``): a subclass that processes its own way loses that, and runs."""
    from tokviz import Tokenizer, decoders, models, pre_tokenizers

    class Marked(processors.RobertaProcessing):
        def process_encodings(self, encodings, add_special_tokens):
            return [Encoding.from_tokens([(7, "!", (0, 0)), *zip(e.ids, e.tokens, e.offsets)]) for e in encodings]

    roberta = processors.RobertaProcessing(sep=("</s>", 2), cls=("<s>", 0))
    assert roberta.trims_offsets() == (True,) and Marked(sep=("</s>", 2), cls=("<s>", 0)).trims_offsets() is None
    assert processors.ByteLevel(trim_offsets=False).trims_offsets() == () and processors.TemplateProcessing(single="$A").trims_offsets() is None
    tokenizer = Tokenizer(models.BPE({"a": 3, "Ġ": 4}, []))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = roberta
    assert tokenizer.encode("a a").tokens == ["<s>", "a", "Ġ", "a", "</s>"]
    tokenizer.post_processor = Marked(sep=("</s>", 2), cls=("<s>", 0))
    assert tokenizer.encode("a a").tokens == ["!", "a", "Ġ", "a"]
