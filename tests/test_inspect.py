"""tokviz.inspect: loading tokenizer.json files (HF's included), the summary, the vocab browser
and BPE merge trees, with literal worked examples and parity against HF `tokenizers`."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tokenizers import Regex, Tokenizer as HfTokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from tokviz.errors import LimitExceededError, SerializationError
from tokviz.inspect import (
    KINDS,
    describe_component,
    example_word_token,
    filter_vocab,
    is_byte_level,
    load_tokenizer_json,
    merge_recipes,
    merge_tree,
    merges_frame,
    render_merge_tree,
    summarize,
    token_kind,
    vocab_frame,
)
from tokviz.models import BPE

TEST_TEXT = "Tokenizers split unbelievably long words, naïve café 東京 a가 2024!"


def hf_pipelines(lines: list[str]) -> dict[str, str]:
    """BERT-, GPT-2- and T5-like tokenizers trained by HF on ``lines``, as tokenizer.json text."""
    bert = HfTokenizer(models.WordPiece(unk_token="[UNK]"))
    bert.normalizer = normalizers.BertNormalizer(lowercase=True)
    bert.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    bert.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    bert.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", bert.token_to_id("[CLS]")), ("[SEP]", bert.token_to_id("[SEP]"))],
    )
    bert.decoder = decoders.WordPiece()

    gpt2 = HfTokenizer(models.BPE())
    gpt2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    gpt2.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    gpt2.post_processor = processors.ByteLevel(trim_offsets=False)
    gpt2.decoder = decoders.ByteLevel()

    t5 = HfTokenizer(models.Unigram())
    t5.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    t5.pre_tokenizer = pre_tokenizers.Metaspace()
    t5.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=600, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False))
    t5.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", t5.token_to_id("</s>"))])
    t5.decoder = decoders.Metaspace()
    return {"bert": bert.to_str(), "gpt2": gpt2.to_str(), "t5": t5.to_str()}


@pytest.fixture(scope="module")
def hf_jsons(shared_corpus_lines: list[str]) -> dict[str, str]:
    return hf_pipelines(shared_corpus_lines[:150])


# ---------------------------------------------------------------------- loading HF's files


@pytest.mark.parametrize(("name", "model_type", "byte_level"), [("bert", "WordPiece", False), ("gpt2", "BPE", True), ("t5", "Unigram", False)])
def test_hf_tokenizer_json_loads_and_tokenizes_like_hf(hf_jsons, name: str, model_type: str, byte_level: bool) -> None:
    text = hf_jsons[name]
    ours = load_tokenizer_json(text.encode("utf-8"), f"{name}.json")
    theirs = HfTokenizer.from_str(text)
    for sample in (TEST_TEXT, "Hello world", "  two  spaces\tand a tab\n"):
        hf_encoding = theirs.encode(sample)
        encoding = ours.encode(sample)
        assert encoding.tokens == hf_encoding.tokens
        assert encoding.ids == hf_encoding.ids
        assert encoding.offsets == hf_encoding.offsets
    summary = summarize(ours)
    assert summary.model_type == model_type
    assert summary.vocab_size == theirs.get_vocab_size(with_added_tokens=True)
    assert [row.content for row in summary.added_tokens] == [token.content for _, token in sorted(theirs.get_added_tokens_decoder().items())]
    assert is_byte_level(ours) is byte_level
    frame = vocab_frame(ours)
    assert dict(zip(frame["token"], frame["id"])) == theirs.get_vocab(with_added_tokens=True)


def test_bert_summary_names_every_component(hf_jsons) -> None:
    summary = summarize(load_tokenizer_json(hf_jsons["bert"].encode()))
    stages = dict(summary.rows())
    assert stages["normalizer"] == "BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)"
    assert stages["pre-tokenizer"] == "BertPreTokenizer"
    assert stages["post-processor"] == "TemplateProcessing(single='[CLS] $A [SEP]', pair='[CLS] $A [SEP] $B:1 [SEP]:1')"
    assert stages["decoder"] == "WordPiece(prefix='##', cleanup=True)"
    assert stages["added tokens"] == "'[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'"
    assert stages["model"].startswith("WordPiece (")


def test_t5_vocab_frame_has_hf_scores(hf_jsons) -> None:
    # The scores HF holds once it has read the file (its JSON reader is not always the
    # nearest float to the literal: see tokviz.json_floats), as HF writes them back.
    held = json.loads(HfTokenizer.from_str(hf_jsons["t5"]).to_str())
    frame = vocab_frame(load_tokenizer_json(hf_jsons["t5"].encode()))
    assert frame["score"].tolist() == [score for _, score in held["model"]["vocab"]]
    assert frame["score"].tolist() != [score for _, score in json.loads(hf_jsons["t5"])["model"]["vocab"]]
    assert summarize(load_tokenizer_json(hf_jsons["t5"].encode())).normalizer == (
        "Sequence(Nmt → NFKC → Replace(pattern={'Regex': ' {2,}'}, content=' '))"
    )


# ---------------------------------------------------------------------- bad files


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"version": "1.0", "model": {"type": "BPE", ', "the JSON is malformed at line 1"),
        (b"[1, 2, 3]", "the top level must be a JSON object"),
        (b'{"version": "1.0", "model": {"type": "Foo"}}', "cannot represent the model 'Foo'"),
        (b'{"version": "1.0", "normalizer": {"type": "Fancy"}, "model": {"type": "WordLevel", "vocab": {}, "unk_token": "x"}}', "Fancy"),
        (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    ],
)
def test_bad_files_raise_a_sentence_naming_the_problem(data: bytes, expected: str) -> None:
    with pytest.raises(SerializationError) as caught:
        load_tokenizer_json(data, "upload.json")
    assert expected in str(caught.value)
    assert str(caught.value).startswith("upload.json")


def test_truncated_hf_file_names_where_it_breaks(hf_jsons) -> None:
    text = hf_jsons["gpt2"]
    with pytest.raises(SerializationError, match=r"upload.json: .*malformed at line 1, column \d+"):
        load_tokenizer_json(text[: len(text) // 2].encode(), "upload.json")


def test_too_large_a_file_is_refused() -> None:
    with pytest.raises(LimitExceededError, match="big.json has 2,002 bytes; this server reads tokenizer files up to 1,000 bytes"):
        load_tokenizer_json(b"{" + b" " * 2000 + b"}", "big.json", max_bytes=1000)


# ---------------------------------------------------------------------- vocab browser


def test_token_kinds() -> None:
    assert [token_kind(token) for token in ["##ing", "##", "Ġthe", "▁the", "<0x0A>", "<0xZZ>", "the"]] == [
        "## continuation", "plain", "Ġ word start", "▁ word start", "byte <0xNN>", "plain", "plain",
    ]
    assert token_kind("[CLS]", special=True) == "special"
    assert token_kind("<0x0A>") in KINDS


def browser_frame() -> pd.DataFrame:
    from tokviz.models import WordPiece
    from tokviz.tokenizer import Tokenizer

    tokenizer = Tokenizer(WordPiece({"[UNK]": 0, "hug": 1, "##s": 2, "Hugging": 3, "##ging": 4, "a": 5}, unk_token="[UNK]"))
    tokenizer.add_special_tokens(["[UNK]"])
    return vocab_frame(tokenizer)


def test_vocab_frame_literal() -> None:
    frame = browser_frame()
    assert frame[["id", "token", "length", "kind"]].values.tolist() == [
        [0, "[UNK]", 5, "special"], [1, "hug", 3, "plain"], [2, "##s", 3, "## continuation"],
        [3, "Hugging", 7, "plain"], [4, "##ging", 6, "## continuation"], [5, "a", 1, "plain"],
    ]
    assert frame["score"].isna().all()  # only Unigram has scores


def test_filter_search_kinds_and_sort() -> None:
    frame = browser_frame()
    assert filter_vocab(frame, search="HUG")["token"].tolist() == ["hug", "Hugging"]  # case-insensitive
    assert filter_vocab(frame, search="(")["token"].tolist() == []  # plain text, never a regex
    assert filter_vocab(frame, kinds=["## continuation"])["token"].tolist() == ["##s", "##ging"]
    assert filter_vocab(frame, sort_by="length", descending=True)["token"].tolist() == ["Hugging", "##ging", "[UNK]", "hug", "##s", "a"]
    assert filter_vocab(frame, sort_by="length")["token"].tolist() == ["a", "hug", "##s", "[UNK]", "##ging", "Hugging"]
    assert filter_vocab(frame, kinds=[]).empty


def test_byte_level_tokens_shown_decoded(hf_jsons) -> None:
    frame = vocab_frame(load_tokenizer_json(hf_jsons["gpt2"].encode()))
    shown = dict(zip(frame["token"], frame["shown as"]))
    assert shown["Ã"] == "⟨C3⟩"  # half of a character's bytes: hex
    assert shown["Ċ"] == "Ċ" and shown["Ġ"] == "Ġ"
    assert shown["<|endoftext|>"] == "<|endoftext|>"  # special tokens are never decoded as bytes
    assert frame[frame["token"] == "Ġ"].iloc[0]["kind"] == "plain"  # the bare marker is a byte, not a word start
    assert example_word_token(frame).lstrip("Ġ").isalpha()


def test_describe_component_elides_long_values() -> None:
    text = describe_component({"type": "Replace", "pattern": {"String": "x" * 500}, "content": ""})
    assert text.startswith("Replace(pattern={'String': 'xxx") and text.endswith("…, content='')") and len(text) < 80
    # A charsmap is base64 of a binary table: its decoded size is shown, not the first characters of the base64.
    assert describe_component({"type": "Precompiled", "precompiled_charsmap": "A" * 500}) == "Precompiled(charsmap of 375 bytes)"
    assert describe_component(None) == "none"


# ---------------------------------------------------------------------- BPE merges and trees


def test_merge_tree_worked_example() -> None:
    model = BPE({"h": 0, "u": 1, "g": 2, "s": 3, "hu": 4, "hug": 5, "hugs": 6}, [("h", "u"), ("hu", "g"), ("hug", "s")])
    tree = merge_tree(model, "hugs")
    assert tree.as_dict() == {
        "token": "hugs", "rank": 2,
        "left": {"token": "hug", "rank": 1, "left": {"token": "hu", "rank": 0, "left": {"token": "h"}, "right": {"token": "u"}}, "right": {"token": "g"}},
        "right": {"token": "s"},
    }
    assert tree.leaves() == ["h", "u", "g", "s"]
    assert render_merge_tree(tree).splitlines() == [
        "hugs  ← merge #3: 'hug' + 's'",  # the one numbering: rank 2 is merge #3
        "├── hug  ← merge #2: 'hu' + 'g'",
        "│   ├── hu  ← merge #1: 'h' + 'u'",
        "│   │   ├── h",
        "│   │   └── u",
        "│   └── g",
        "└── s",
    ]
    assert merge_tree(model, "h").as_dict() == {"token": "h"}
    assert merge_tree(model, "zzz") is None
    assert merges_frame(model).values.tolist() == [[1, "h", "u", "hu", 4], [2, "hu", "g", "hug", 5], [3, "hug", "s", "hugs", 6]]  # merge #1 first


def test_merge_tree_with_continuing_prefix() -> None:
    model = BPE({"h": 0, "##u": 1, "##g": 2, "hu": 3, "##ug": 4, "hug": 5}, [("h", "##u"), ("##u", "##g"), ("hu", "##g")], continuing_subword_prefix="##")
    assert merge_recipes(model) == {"hu": (0, "h", "##u"), "##ug": (1, "##u", "##g"), "hug": (2, "hu", "##g")}
    assert merge_tree(model, "hug").leaves() == ["h", "##u", "##g"]


def test_every_hf_bpe_token_is_the_join_of_its_leaves(hf_jsons) -> None:
    tokenizer = load_tokenizer_json(hf_jsons["gpt2"].encode())
    model = tokenizer.model
    recipes = merge_recipes(model)
    merged = [merge[0] + merge[1] for merge in json.loads(hf_jsons["gpt2"])["model"]["merges"]]
    assert merged == [model.id_to_token(model.token_to_id(token)) for token in merged]
    for token in merged:
        tree = merge_tree(model, token, recipes)
        assert "".join(tree.leaves()) == token
        assert all(len(leaf) == 1 for leaf in tree.leaves())  # down to single byte symbols


def test_merge_tree_of_a_1024_byte_tiktoken_chain() -> None:
    """A tiktoken file at the token limit (1,024 bytes) whose longest token is a chain of 1,023 merges: the tree,
    its leaves, its dict and its drawing are built without recursion (this raised RecursionError)."""
    import base64

    from tokviz.limits import MAX_TOKEN_CHARS
    from tokviz.loaders import load_bytes

    # "#" then ABC...ZAB...: 1,024 bytes, and no part after the first byte is a prefix, so each token is the one
    # before it plus a byte.
    chain = b"#" + bytes(65 + index % 26 for index in range(MAX_TOKEN_CHARS - 1))
    tokens = [bytes([value]) for value in range(256)] + [chain[:length] for length in range(2, len(chain) + 1)]
    data = b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in enumerate(tokens))
    model = load_bytes("chain.tiktoken", data, tiktoken_encoding="gpt2").model
    tree = merge_tree(model, model.id_to_token(len(tokens) - 1))
    assert tree.rank is not None and len(tree.leaves()) == MAX_TOKEN_CHARS
    assert "".join(tree.leaves()) == "#" + "".join(model.id_to_token(65 + index % 26) for index in range(MAX_TOKEN_CHARS - 1))
    deepest, stack = 0, [(tree.as_dict(), 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((node[side], depth + 1) for side in ("left", "right") if side in node)
    assert deepest == MAX_TOKEN_CHARS - 1  # each token is the one before it plus a byte
    drawing = render_merge_tree(tree).splitlines()
    assert len(drawing) == 2 * MAX_TOKEN_CHARS - 1 and drawing[-1].endswith("└── " + model.id_to_token(65 + 1022 % 26))


def test_describe_component_walks_nested_sequences_without_recursion() -> None:
    nested = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Sequence", "normalizers": [
        {"type": "Lowercase"}, {"type": "Strip", "left": True}]}, {"type": "Sequence", "normalizers": []}]}
    assert describe_component(nested) == "Sequence(NFD → Sequence(Lowercase → Strip(left=True)) → Sequence())"
    deep: dict = {"type": "NFC"}
    for _ in range(5_000):  # past Python's recursion limit (1,000)
        deep = {"type": "Sequence", "normalizers": [deep]}
    assert describe_component(deep) == "Sequence(" * 5_000 + "NFC" + ")" * 5_000
