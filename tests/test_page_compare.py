"""AppTest checks of the Compare page (issue 5): it runs on the sample, its widgets are there, BPE vs
WordPiece vs Unigram at vocab 2,000 on English prose give plausible metrics, errors show as messages."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page

PAGE = "pages/compare.py"
XSS = '<img src=x onerror=alert(1)> & <script>alert("x")</script>'


def open_compare() -> AppTest:
    return open_page(PAGE)


def assert_clean(app: AppTest) -> None:
    assert not app.exception, [str(error.value) for error in app.exception]


def span_views(app: AppTest) -> list[str]:
    return [block.proto.body for block in app.html if "tokviz-spans" in block.proto.body]


def metrics_frame(app: AppTest):
    return next(table.value for table in app.table if "tokens/word" in table.value.columns)


def overlap_frame(app: AppTest):
    return next(table.value for table in app.table if "vocab overlap (Jaccard) %" in table.value.columns)


def test_page_runs_on_the_sample_with_three_presets() -> None:
    app = open_compare()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert app.title[0].value == "Compare tokenizers"
    assert [header.value for header in app.header] == [
        "1 · Configurations", "2 · Train", "3 · One text, every segmentation",
        "4 · Metrics on the evaluation text", "5 · Compression over vocab size",
    ]
    assert app.radio(key="compare_count").value == 3
    assert [app.selectbox(key=f"compare_preset_{index}").value for index in range(3)] == ["gpt2", "bert", "t5"]
    assert [app.number_input(key=f"compare_vocab_{index}").value for index in range(3)] == [1000, 1000, 500]  # Unigram starts where it prunes
    assert app.text_area(key="compare_text").value and app.text_area(key="compare_corpus_text").value
    views = span_views(app)
    assert len(views) == 3 and all(view.count('class="tok') > 20 for view in views)
    outlined = [len(re.findall(r'class="tok[^"]* diff"', view)) for view in views]
    assert all(count > 0 for count in outlined)  # GPT-2, BERT and T5 cut the sample differently somewhere
    notes = [item.value for item in app.markdown if "outlined" in item.value]
    assert len(notes) == 3 and all(f"{count:,} outlined" in note for count, note in zip(outlined, notes))
    frame = metrics_frame(app)
    assert len(frame) == 3 and (frame["tokens"] > 0).all()
    assert len(overlap_frame(app)) == 3
    assert len(app.get("plotly_chart")) == 3  # every literature metric, tokens per language, compression over vocab size


@pytest.mark.parametrize("count", [2, 4])
def test_two_and_four_configurations(count: int) -> None:
    app = open_compare()
    app.radio(key="compare_count").set_value(count).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert len(span_views(app)) == count
    assert len(metrics_frame(app)) == count and len(overlap_frame(app)) == count * (count - 1) // 2


def test_bpe_wordpiece_unigram_at_2000_on_english_prose(read_shared_corpus) -> None:
    app = open_compare()
    app.text_area(key="compare_corpus_text").set_value(read_shared_corpus("grimm_tales.txt")[:90_000])
    app.selectbox(key="compare_preset_1").set_value("custom").run()
    app.selectbox(key="compare_model_1").set_value("WordPiece")
    app.selectbox(key="compare_pre_1").set_value("BertPreTokenizer")
    app.selectbox(key="compare_norm_1").set_value("BertNormalizer")
    for index in range(3):
        app.number_input(key=f"compare_vocab_{index}").set_value(2000)
    app.run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    frame = metrics_frame(app).set_index("configuration")
    assert list(frame.index) == ["1 · GPT-2-like byte-level BPE · 2,000", "2 · custom WordPiece · 2,000", "3 · T5 / SentencePiece-like Unigram · 2,000"]
    assert frame["tokens/word"].between(1.0, 3.0).all(), frame.to_dict()
    assert frame["bytes/token"].between(2.0, 6.0).all(), frame.to_dict()
    assert (frame["unknown %"] < 1.0).all() and frame["whole words %"].between(30, 100).all()
    assert list(frame["vocab"]) == [2000, 2000, 2000]  # the trained models (a Unigram history reaches above its target)
    overlaps = overlap_frame(app)["vocab overlap (Jaccard) %"]
    assert overlaps.between(1.0, 99.0).all()  # related vocabularies, never identical
    # The BERT-like preset (HF's WordPiece trainer) also lands in range on this text.
    app.selectbox(key="compare_preset_1").set_value("bert").run()
    assert_clean(app)
    assert metrics_frame(app)["tokens/word"].between(1.0, 3.0).all()


def test_pasted_evaluation_text_is_measured() -> None:
    app = open_compare()
    app.radio(key="compare_eval_source").set_value("paste").run()
    assert any("evaluation text is empty" in info.value for info in app.info)
    app.text_area(key="compare_eval_text").set_value("the tokenizer splits text into tokens").run()
    assert_clean(app)
    frame = metrics_frame(app)
    # Six whitespace words: every configuration needs at least one token per word.
    assert (frame["tokens/word"] >= 1.0).all() and (frame["tokens"] >= 6).all()


def test_empty_corpus_shows_an_error_per_configuration() -> None:
    app = open_compare()
    app.text_area(key="compare_corpus_text").set_value("").run()
    assert_clean(app)
    assert len(app.error) == 3 and all("The corpus is empty" in error.value for error in app.error)
    assert any("At least two tokenizers" in info.value for info in app.info)


def test_one_failing_configuration_leaves_the_others_compared() -> None:
    app = open_compare()
    app.selectbox(key="compare_preset_2").set_value("custom").run()
    app.selectbox(key="compare_model_2").set_value("Unigram")
    app.selectbox(key="compare_pre_2").set_value("ByteLevel")
    app.number_input(key="compare_vocab_2").set_value(100).run()  # below the 256 byte symbols
    assert_clean(app)
    assert len(app.error) == 1 and "3 · custom Unigram · 100" in app.error[0].value and "too small" in app.error[0].value
    assert len(span_views(app)) == 2 and len(metrics_frame(app)) == 2


def test_user_text_never_becomes_markup() -> None:
    app = open_compare()
    app.text_area(key="compare_text").set_value(XSS).run()
    assert_clean(app)
    for view in span_views(app):
        assert "<script" not in view and "<img" not in view
        assert "&lt;" in view and "&amp;" in view  # drawn as text, escaped


def test_revisiting_never_retrains(monkeypatch: pytest.MonkeyPatch) -> None:
    first = open_compare()
    table = metrics_frame(first)

    def no_training(*args, **kwargs):
        raise AssertionError("the Compare page retrained a cached configuration")

    monkeypatch.setattr("tokviz.pipeline_config.build_trainer", no_training)
    again = open_compare()  # a new session: everything comes from the server's cache
    assert_clean(again)
    assert not again.error, [error.value for error in again.error]
    assert metrics_frame(again).equals(table)


def test_a_large_corpus_waits_for_the_button_then_stays(read_shared_corpus) -> None:
    app = open_compare()
    app.text_area(key="compare_corpus_text").set_value(read_shared_corpus("grimm_tales.txt")[:120_000]).run()
    assert_clean(app)
    assert any("press **Train all**" in info.value for info in app.info) and not span_views(app)
    app.button(key="compare_train").click().run()
    assert_clean(app)
    assert len(span_views(app)) == 3
    app.text_area(key="compare_text").set_value("Once upon a time").run()  # no click: the trainings are cached
    assert_clean(app)
    visible_text = re.sub(r"<[^>]+>", "", span_views(app)[0].split('<div class="tokviz-spans">', 1)[1])
    assert len(span_views(app)) == 3 and "Once" in visible_text  # token labels, joined


def test_a_huge_evaluation_text_is_cut_to_the_limit_with_a_notice(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TEST_TEXT_CHARS", 200)
    app = open_compare()
    app.radio(key="compare_eval_source").set_value("paste").run()
    app.text_area(key="compare_eval_text").set_value("the quick brown fox jumps over the lazy dog. " * 50).run()
    assert_clean(app)
    notices = [caption.value for caption in app.caption]
    assert any("first 200 characters of the evaluation text (2,250 in all)" in notice for notice in notices), notices


# ---------------------------------------------------------------------------------------
# Pretrained tokenizers from files beside the trained ones (issue 16)


def _hf_files(lines: list[str]) -> dict[str, bytes]:
    """A tokenizer.json, a tiktoken rank file, a BERT vocab.txt and GPT-2's vocab.json + merges.txt, made by HF."""
    import base64
    import json

    import tokenizers as hf

    from tokviz.byte_level import UNICODE_TO_BYTES

    byte_bpe = hf.Tokenizer(hf.models.BPE())
    byte_bpe.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte_bpe.decoder = hf.decoders.ByteLevel()
    byte_bpe.train_from_iterator(lines, hf.trainers.BpeTrainer(vocab_size=600, initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    ranks = b"\n".join(
        base64.b64encode(bytes(UNICODE_TO_BYTES[char] for char in token)) + b" " + str(token_id).encode()
        for token, token_id in sorted(byte_bpe.get_vocab().items(), key=lambda item: item[1])
    ) + b"\n"
    model = json.loads(byte_bpe.to_str())["model"]
    merges = "#version: 0.2\n" + "\n".join(" ".join(pair) if isinstance(pair, list) else pair for pair in model["merges"]) + "\n"
    wordpiece = hf.Tokenizer(hf.models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = hf.normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = hf.pre_tokenizers.BertPreTokenizer()
    wordpiece.train_from_iterator(lines, hf.trainers.WordPieceTrainer(vocab_size=500, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    vocab_txt = "\n".join(token for token, _ in sorted(wordpiece.get_vocab().items(), key=lambda item: item[1])) + "\n"
    return {
        "gpt2-like.json": byte_bpe.to_str().encode(),
        "mine.tiktoken": ranks,
        "vocab.txt": vocab_txt.encode(),
        "vocab.json": json.dumps(model["vocab"]).encode(),
        "merges.txt": merges.encode(),
    }, byte_bpe


def test_uploaded_tokenizer_files_are_compared_beside_the_trained_ones(shared_corpus_lines) -> None:
    files, hf_bpe = _hf_files(list(shared_corpus_lines[:200]))
    app = open_compare()
    app.radio(key="compare_count").set_value(2).run()
    app.file_uploader(key="compare_files").set_value([(name, data, "application/octet-stream") for name, data in files.items()]).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    encoding = app.selectbox(key="compare_files_encoding_1")  # the rank file's encoding, guessed, changeable
    assert encoding.value in ("gpt2", "cl100k_base", "p50k_base", "o200k_base", "p50k_edit")
    app.selectbox(key="compare_files_encoding_1").set_value("gpt2").run()
    assert_clean(app)
    names = list(metrics_frame(app)["configuration"])
    assert names == ["1 · GPT-2-like byte-level BPE · 1,000", "2 · BERT-like WordPiece · 1,000", "gpt2-like.json", "mine.tiktoken", "vocab.txt", "vocab.json + merges.txt"]
    assert len(span_views(app)) == 6
    # The uploaded HF tokenizer counts tokens exactly as HF does on the evaluation text.
    # The held-out lines are measured one by one (a line break belongs to none of them).
    eval_lines = __import__("tokviz.corpus", fromlist=["held_out_split"]).held_out_split(__import__("tokviz.samples", fromlist=["load_sample"]).load_sample()).test_lines
    hf_tokens = sum(len(hf_bpe.encode(line).ids) for line in eval_lines)
    row = metrics_frame(app).set_index("configuration").loc["gpt2-like.json"]
    assert row["tokens"] == hf_tokens
    literature = next(table.value for table in app.table if "fertility (tokens/word)" in table.value.index)
    assert list(literature.columns) == names
    assert literature.loc["fertility (tokens/word)", "gpt2-like.json"] == pytest.approx(hf_tokens / sum(len(line.split()) for line in eval_lines))
    # The tiktoken file with GPT-2's pattern and the same ranks cuts like the HF byte-level BPE.
    assert literature.loc["fertility (tokens/word)", "mine.tiktoken"] == pytest.approx(literature.loc["fertility (tokens/word)", "gpt2-like.json"])
    assert len(app.get("plotly_chart")) == 3  # every metric, tokens per language, compression over vocab size
    # One download per tokenizer, labelled with its name (Markdown-escaped) and named for what it holds.
    buttons = app.get("download_button")
    assert len(buttons) == 6 and r"gpt2\-like\.json" in {button.proto.label for button in buttons}
    # Other file kinds: nothing is written until one is chosen.
    app.selectbox(key="compare_export_format").set_value("vocab.json+merges.txt").run()
    assert [button.proto.label for button in app.get("download_button")][6:] == ["Download"]
    # The files stay across a page switch (links do not carry them).
    app.switch_page("pages/learn.py")
    app.run()
    app.switch_page(PAGE)
    app.run()
    assert list(metrics_frame(app)["configuration"])[2:] == ["gpt2-like.json", "mine.tiktoken", "vocab.txt", "vocab.json + merges.txt"]


def test_an_uploaded_file_name_is_shown_as_text_not_markdown(shared_corpus_lines) -> None:
    files, _ = _hf_files(list(shared_corpus_lines[:100]))
    app = open_compare()
    name = "[x](e.co) **b**.tiktoken"  # a browser's file name has no '/'
    app.file_uploader(key="compare_files").set_value([(name, files["mine.tiktoken"], "application/octet-stream")]).run()
    assert_clean(app)
    label = app.selectbox(key="compare_files_encoding_0").label
    assert label.startswith("Encoding of \\[x\\]\\(e\\.co\\) \\*\\*b\\*\\*\\.tiktoken"), label  # Markdown escaped: no link, no bold
    assert name in list(metrics_frame(app)["configuration"])  # the table shows the name as typed


def test_an_uploaded_file_that_truncates_is_measured_whole_and_the_page_says_so() -> None:
    """T5-small's file truncates to 512 (some files to 32): measured with it on, a long text looked short and 'won'."""
    import tokenizers as hf

    from tokviz.corpus import held_out_split
    from tokviz.samples import load_sample

    peer = hf.Tokenizer(hf.models.WordLevel({"[UNK]": 0, "the": 1}, unk_token="[UNK]"))
    peer.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    lines = held_out_split(load_sample()).test_lines
    whole = sum(len(peer.encode(line).ids) for line in lines)
    peer.enable_truncation(max_length=8)
    app = open_compare()
    app.radio(key="compare_count").set_value(2).run()
    app.file_uploader(key="compare_files").set_value([("short.json", peer.to_str().encode("utf-8"), "application/json")]).run()
    assert_clean(app)
    row = metrics_frame(app).set_index("configuration").loc["short.json"]
    assert row["tokens"] == whole > 8 * len(lines)
    assert any(r"short\.json \(truncation to 8 tokens\)" in caption.value and "without truncation or padding" in caption.value
               for caption in app.caption)


def test_each_tokenizer_has_its_own_download_labelled_with_its_name() -> None:
    """One button per tokenizer: no chooser whose change a quick click could outrun (the previous zip, a deferred file gone)."""
    from tokviz.ui.shell import md_escape

    app = open_compare()
    assert_clean(app)
    names = list(metrics_frame(app)["configuration"])
    assert sorted(button.proto.label for button in app.get("download_button")) == sorted(md_escape(name) for name in names)
    app.selectbox(key="compare_preset_1").set_value("sp_bpe").run()  # every Train preset, SentencePiece's too
    assert_clean(app)
    names = list(metrics_frame(app)["configuration"])
    assert names[1].startswith("2 · SentencePiece BPE")
    assert sorted(button.proto.label for button in app.get("download_button")) == sorted(md_escape(name) for name in names)


def test_one_token_and_one_place_are_counted_in_the_singular() -> None:
    app = open_compare()
    app.text_area(key="compare_text").set_value("a").run()
    assert_clean(app)
    notes = [item.value.rsplit("** — ", 1)[1] for item in app.markdown if "outlined" in item.value]
    assert notes == ["1 token, 0 outlined", "3 tokens, 0 outlined", "2 tokens, 0 outlined"]  # BERT adds [CLS] [SEP], T5 </s>
    assert any("(0 places in this text)" in caption.value for caption in app.caption)
