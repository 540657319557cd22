"""AppTest checks of the Inspect page (issue 5): tokenizer.json files trained by HF for BERT-,
GPT-2- and T5-like pipelines load and show HF's tokens; bad files show a message, never an
exception; the vocab browser filters; BPE shows its merges and merge trees."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokenizers import Regex, Tokenizer as HfTokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

TEST_TEXT = "Tokenizers split unbelievably long words, naïve café a가 2024!"


def hf_tokenizer(kind: str, lines: list[str]) -> HfTokenizer:
    """A BERT-, GPT-2- or T5-like tokenizer trained by HF on ``lines``."""
    if kind == "bert":
        tokenizer = HfTokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=500, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tokenizer.token_to_id("[CLS]")), ("[SEP]", tokenizer.token_to_id("[SEP]"))]
        )
        tokenizer.decoder = decoders.WordPiece()
    elif kind == "gpt2":
        tokenizer = HfTokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=500, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        tokenizer.decoder = decoders.ByteLevel()
    else:
        tokenizer = HfTokenizer(models.Unigram())
        tokenizer.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=500, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False))
        tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", tokenizer.token_to_id("</s>"))])
        tokenizer.decoder = decoders.Metaspace()
    return tokenizer


def open_inspect() -> AppTest:
    return open_page("pages/inspect.py")


def upload(app: AppTest, name: str, data: bytes) -> AppTest:
    app.selectbox(key="inspect_tokenizer").set_value("upload").run()
    app.file_uploader(key="inspect_tokenizer_file").set_value((name, data, "application/json")).run()
    return app


def assert_no_exception(app: AppTest) -> None:
    assert not app.exception, [str(error.value) for error in app.exception]


def span_ids(app: AppTest) -> list[int]:
    """The ids of the span view, read back from each token's pinned card (``<span class="k">id</span><span class="v">1,234</span>``)."""
    body = next(block.proto.body for block in app.html if "tokviz-spans" in block.proto.body)
    return [int(value.replace(",", "")) for value in re.findall(r'<span class="k">id</span><span class="v">([^<]*)</span>', body)]


def test_page_opens_on_a_preset_with_every_section() -> None:
    app = open_inspect()
    assert_no_exception(app)
    assert not app.error
    assert app.title[0].value == "Inspect a tokenizer"
    assert [header.value for header in app.header] == ["Summary", "Try it", "Vocabulary", "Merges"]
    for key in ("vocab_search", "merge_tree_token"):
        app.text_input(key=key)
    app.multiselect(key="vocab_kinds")
    app.selectbox(key="vocab_sort")
    assert "merge #" in app.code[0].value  # the merge tree of the default token


@pytest.mark.parametrize(("kind", "model"), [("bert", "WordPiece"), ("gpt2", "BPE"), ("t5", "Unigram")])
def test_hf_tokenizer_json_shows_the_same_tokens_as_hf(shared_corpus_lines: list[str], kind: str, model: str) -> None:
    hf = hf_tokenizer(kind, shared_corpus_lines[:120])
    app = upload(open_inspect(), f"{kind}.json", hf.to_str().encode())
    app.text_area(key="inspect_text").set_value(TEST_TEXT).run()
    assert_no_exception(app)
    assert not app.error, [error.value for error in app.error]
    assert app.metric[0].value == model
    assert app.metric[1].value == f"{hf.get_vocab_size():,}"
    assert span_ids(app) == hf.encode(TEST_TEXT).ids
    vocab = next(frame.value for frame in app.dataframe if "kind" in frame.value.columns)
    assert len(vocab) == hf.get_vocab_size()
    assert ("score" in vocab.columns) is (model == "Unigram")


def test_vocab_browser_search_and_kind_filter(shared_corpus_lines: list[str]) -> None:
    app = upload(open_inspect(), "bert.json", hf_tokenizer("bert", shared_corpus_lines[:120]).to_str().encode())
    app.multiselect(key="vocab_kinds").set_value(["## continuation"]).run()
    vocab = next(frame.value for frame in app.dataframe if "kind" in frame.value.columns)
    assert len(vocab) > 10 and all(token.startswith("##") for token in vocab["token"])
    app.text_input(key="vocab_search").set_value("ing").run()
    vocab = next(frame.value for frame in app.dataframe if "kind" in frame.value.columns)
    assert len(vocab) >= 1 and all("ing" in token for token in vocab["token"])
    assert_no_exception(app)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("broken.json", b'{"version": "1.0", "model": {', "broken.json: This is not a valid tokenizer.json: the JSON is malformed at line 1"),
        ("foo.json", b'{"version": "1.0", "model": {"type": "Foo", "vocab": {}}}', "cannot represent the model 'Foo'"),
        ("norm.json", b'{"version": "1.0", "normalizer": {"type": "Fancy"}, "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}', "Fancy"),
        ("binary.json", b"\xff\xd8\xff\xe0 not json", "binary.json is not UTF-8 text"),
    ],
)
def test_bad_files_show_an_error_naming_the_problem(name: str, data: bytes, message: str) -> None:
    app = upload(open_inspect(), name, data)
    assert_no_exception(app)
    assert any(message in error.value.replace("\\", "") for error in app.error), [error.value for error in app.error]


def test_truncated_hf_file_shows_an_error(shared_corpus_lines: list[str]) -> None:
    text = hf_tokenizer("gpt2", shared_corpus_lines[:60]).to_str()
    app = upload(open_inspect(), "cut.json", text[: len(text) * 2 // 3].encode())
    assert_no_exception(app)
    assert any("malformed at line 1" in error.value for error in app.error)


def test_oversized_upload_is_refused(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_UPLOAD_BYTES", 1_000)
    app = upload(open_inspect(), "big.json", b"{" + b" " * 5_000 + b"}")
    assert_no_exception(app)
    assert any("up to 1,000 bytes" in error.value.replace("\\", "") for error in app.error)


def test_merge_tree_for_a_typed_token() -> None:
    app = open_inspect()
    app.text_input(key="merge_tree_token").set_value("Ġthe").run()
    assert_no_exception(app)
    tree = app.code[0].value.splitlines()
    assert tree[0].startswith("Ġthe  ← merge #")
    app.text_input(key="merge_tree_token").set_value("not a token at all").run()
    assert any("Type a token from the vocabulary" in message.value for message in app.info)


def test_the_train_pages_run_can_be_inspected() -> None:
    app = open_page("pages/train.py")
    app.selectbox(key="preset").set_value("char_bpe").run()
    app.switch_page("pages/inspect.py")
    app.run()
    assert_no_exception(app)
    assert app.selectbox(key="inspect_tokenizer").value == "session"
    assert app.metric[0].value == "BPE"
    tree = app.code[0].value.splitlines()
    assert tree[0].endswith("'") and "</w>" in tree[0]  # the longest word, built up to its end-of-word suffix


def test_the_upload_box_is_there_at_once_and_an_upload_is_shown(shared_corpus_lines: list[str]) -> None:
    """The page says "Upload a tokenizer": the box is on the page from the start, and a file dropped in it is inspected."""
    app = open_inspect()
    assert app.selectbox(key="inspect_tokenizer").value != "upload"
    data = hf_tokenizer("bpe", shared_corpus_lines[:100]).to_str().encode("utf-8")
    app.file_uploader(key="inspect_tokenizer_file").set_value(("mine.json", data, "application/json")).run()
    assert_no_exception(app)
    assert app.selectbox(key="inspect_tokenizer").value == "upload"
