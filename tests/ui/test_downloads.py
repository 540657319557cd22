"""AppTest of the downloads on Inspect and Compare: every file kind, what it loses, why one is impossible."""

from __future__ import annotations

from tests.app_pages import assert_clean, open_page


def test_inspect_writes_every_kind_and_names_what_is_lost() -> None:
    app = open_page("pages/inspect.py")
    app.selectbox(key="inspect_tokenizer").set_value("gpt2").run()  # its label names its trained size once trained
    assert_clean(app)
    box = app.selectbox(key="inspect_export_format")
    assert box.value is None and len(box.options) == 6  # nothing is written until a kind is chosen
    box.set_value("tiktoken").run()  # the GPT-2-like preset on the sample
    assert_clean(app)
    lost = next(item.value for item in app.markdown if item.value.startswith("**What this file kind does not keep"))
    assert "tiktoken merges any two adjacent pieces" in lost
    box.set_value("vocab.txt").run()
    assert [warning.value for warning in app.warning] == [
        "A vocab\\.txt holds a WordPiece vocabulary \\(one token per line\\); this tokenizer's model is BPE, "
        "whose merges a list of tokens cannot hold\\."]
    box.set_value("tokenizer.json").run()
    assert any("nothing is lost" in caption.value for caption in app.caption)


def test_compare_downloads_any_tokenizer_of_the_comparison() -> None:
    app = open_page("pages/compare.py")
    assert_clean(app)
    app.selectbox(key="compare_download_choice").set_value(app.selectbox(key="compare_download_choice").options[1]).run()
    app.selectbox(key="compare_export_format").set_value("vocab.txt").run()  # the BERT-like WordPiece
    assert_clean(app)
    assert any("nothing is lost" in caption.value and "vocab" in caption.value for caption in app.caption)
