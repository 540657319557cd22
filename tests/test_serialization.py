"""tokenizer.json both ways: HF's format key for key, legacy files, and clear errors."""

from __future__ import annotations

import gc
import json

import pytest

from tokviz import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokviz.errors import SerializationError

tokenizers = pytest.importorskip("tokenizers")


def _full_tokenizer() -> Tokenizer:
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "h": 3, "e": 4, "l": 5, "o": 6, "he": 7, "ll": 8, "hell": 9, "hello": 10}
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o")]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tok.decoder = decoders.BPEDecoder()
    tok.add_special_tokens(["[CLS]", "[SEP]"])
    tok.add_tokens(["<new>"])
    tok.enable_truncation(8, stride=1, strategy="only_first", direction="left")
    tok.enable_padding(length=10, pad_id=0, pad_token="[UNK]", pad_to_multiple_of=2)
    return tok


def test_file_has_hf_keys_in_hf_order_and_hf_reads_it_back_identically():
    ours = _full_tokenizer()
    data = json.loads(ours.to_str())
    assert list(data) == [
        "version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "model", "post_processor", "decoder",
    ]
    assert data["truncation"] == {"direction": "Left", "max_length": 8, "strategy": "OnlyFirst", "stride": 1}
    assert data["padding"]["strategy"] == {"Fixed": 10}
    assert data["model"]["merges"][0] == ["h", "e"]  # pairs, not "h e"
    theirs = tokenizers.Tokenizer.from_str(ours.to_str())
    assert json.loads(theirs.to_str()) == data
    for text in ("Hello hello", "HELLO x <new>"):
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets, mine.attention_mask) == (
            reference.ids, reference.tokens, reference.offsets, reference.attention_mask,
        )


def test_round_trip_is_stable(tmp_path):
    ours = _full_tokenizer()
    path = tmp_path / "tokenizer.json"
    ours.save(path)
    again = Tokenizer.from_file(path)
    assert again.to_str() == ours.to_str()
    assert again.encode("hello").tokens == ours.encode("hello").tokens
    assert again.get_added_tokens_decoder() == ours.get_added_tokens_decoder()


def test_legacy_space_separated_merges_are_read():
    data = json.loads(_full_tokenizer().to_str())
    data["model"]["merges"] = [" ".join(pair) for pair in data["model"]["merges"]]
    tok = Tokenizer.from_str(json.dumps(data))
    assert tok.model.merges[0] == ("h", "e")
    assert tok.encode("hello").tokens[1] == "hello"


def test_model_type_is_inferred_when_missing():
    data = json.loads(_full_tokenizer().to_str())
    del data["model"]["type"]
    assert type(Tokenizer.from_str(json.dumps(data)).model).__name__ == "BPE"


@pytest.mark.parametrize(
    "text,message",
    [
        ("{not json", "malformed at line 1"),
        ('{"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}', "malformed"),
        ("[]", "top level"),
        ('{"version": "1.0"}', "no 'model'"),
        ('{"version": "2.0", "model": {"type": "WordLevel", "vocab": {}}}', "version"),
    ],
)
def test_malformed_files_raise_a_clear_error(text, message):
    with pytest.raises(SerializationError, match=message):
        Tokenizer.from_str(text)


@pytest.mark.parametrize(
    "section,component,name",
    [
        ("normalizer", {"type": "Precompiled", "precompiled_charsmap": "AAAA"}, "Precompiled"),
        ("pre_tokenizer", {"type": "FancySplitter"}, "FancySplitter"),
        ("post_processor", {"type": "Whatever"}, "Whatever"),
        ("decoder", {"type": "SpeechJoiner", "pad_token": "<pad>"}, "SpeechJoiner"),  # CTC is supported now
        ("model", {"type": "Mystery"}, "Mystery"),
    ],
)
def test_unrepresentable_components_are_named(section, component, name):
    data = json.loads(_full_tokenizer().to_str())
    data[section] = component
    with pytest.raises(SerializationError, match=name):
        Tokenizer.from_str(json.dumps(data))


def test_unreadable_file(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SerializationError):
        Tokenizer.from_file(path)


def test_hf_files_of_every_model_load():
    from tokenizers import models as hm

    for model in (
        hm.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], dropout=None, unk_token="a"),
        hm.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"),
        hm.WordLevel({"[UNK]": 0, "ab": 1}, unk_token="[UNK]"),
        hm.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.5), ("ab", -1.2)], unk_id=0),
    ):
        theirs = tokenizers.Tokenizer(model)
        ours = Tokenizer.from_str(theirs.to_str())
        assert ours.encode("ab").ids == theirs.encode("ab").ids
        assert json.loads(ours.to_str())["model"] == json.loads(theirs.to_str())["model"]


def test_loading_leaves_the_collector_no_pass_over_its_objects_for_the_first_encode() -> None:
    # A load makes an object per merge (the merge table's pairs) while the collector waits; it
    # looks at them before from_str returns, not at the caller's next allocation -- the first
    # encode, which paid 42-65 ms for Llama 3's 280k merges and 91 ms for Gemma's.
    vocab = {"a": 0, "b": 1}
    merges = []
    for index in range(1000):  # a + b, a + ab, a + aab, ... (tokens up to the 1,024-character limit)
        left, right = "a", "a" * index + "b"
        vocab[left + right] = len(vocab)
        merges.append([left, right])
    text = json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "vocab": vocab, "merges": merges, "unk_token": None},
    })
    gc.collect()
    tokenizer = Tokenizer.from_str(text)
    pending = gc.get_count()[0]
    assert pending < 700, pending  # (below the threshold that starts a collection)
    # The merge table is no longer tracked (a full collection of the load's objects only): the
    # process's first full collection walked Llama 3's 280k pairs in the first encode.
    assert not gc.is_tracked(tokenizer.model._merge_map)
    assert tokenizer.encode("aab").tokens == ["aab"]


def test_loading_sets_the_process_objects_aside_only_while_it_collects_its_own() -> None:
    # The load freezes what the process holds, collects its own objects and unfreezes: the
    # caller's garbage is still collected after it, and objects the caller froze stay frozen
    # (the load then collects its two younger generations instead).
    import weakref

    text = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])).to_str()

    class Node:
        pass

    def cycle() -> weakref.ref:
        node = Node()
        node.self = node
        return weakref.ref(node)

    gc.collect()
    garbage = cycle()
    Tokenizer.from_str(text)
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert garbage() is None
    kept = [Node() for _ in range(3)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        tokenizer = Tokenizer.from_str(text)
        assert gc.get_freeze_count() == frozen
        assert tokenizer.encode("ab").ids == [2]
    finally:
        gc.unfreeze()
    assert kept
