"""AppTest checks of the Pipeline page (issue 5): every stage shows for each preset, a second
sequence gets type ids 1, the Train page's run can be picked, user text never becomes markup."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import assert_clean, open_page

HEADERS = ["1 · Normalization", "2 · Pre-tokens", "3 · Model tokens", "4 · Post-processed encoding", "5 · Decoded", "6 · Bytes"]


def metric(app: AppTest, label: str) -> str:
    return next(item.value for item in app.metric if item.label == label)


def frame_with(app: AppTest, column: str):
    return next(frame.value for frame in app.dataframe if column in frame.value.columns)


def test_page_shows_every_stage_with_the_default_preset() -> None:
    app = open_page("pages/pipeline.py")
    assert_clean(app)
    assert app.title[0].value == "One text through the pipeline"
    assert [header.value for header in app.header] == HEADERS
    assert app.selectbox(key="pipeline_tokenizer").value == "gpt2"
    assert app.text_area(key="pipeline_text").value.startswith("Héllo")
    encoding = frame_with(app, "attention mask")
    assert len(encoding) > 10 and set(encoding["type id"]) == {0}
    assert any("Round trip" in message.value for message in app.success)


def test_bytes_view_counts_characters_and_bytes() -> None:
    app = open_page("pages/pipeline.py")
    app.text_area(key="pipeline_text").set_value("a가 짧").run()
    assert_clean(app)
    assert (metric(app, "characters"), metric(app, "UTF-8 bytes"), metric(app, "byte-level symbols")) == ("4", "8", "8")
    frame = frame_with(app, "code point")
    assert frame["UTF-8 bytes"].tolist() == ["61", "EA B0 80", "20", "EC A7 A7"]
    assert frame["byte-level"].tolist()[2] == "Ġ"


@pytest.mark.parametrize("preset", ["bert", "t5", "char_bpe"])
def test_each_preset_runs_through_every_stage(preset: str) -> None:
    app = open_page("pages/pipeline.py")
    app.selectbox(key="pipeline_tokenizer").set_value(preset).run()
    assert_clean(app)
    assert [header.value for header in app.header] == HEADERS
    assert len(frame_with(app, "pre-token")) > 5


def test_bert_normalization_highlights_changes_and_a_pair_gets_type_ids() -> None:
    app = open_page("pages/pipeline.py")
    app.selectbox(key="pipeline_tokenizer").set_value("bert").run()
    app.text_input(key="pipeline_pair").set_value("Second one").run()
    assert_clean(app)
    assert [header.value for header in app.header][:3] == [f"{stage} · first sequence" for stage in HEADERS[:3]]
    diff = next(block.proto.body for block in app.html if "tokviz-diff" in block.proto.body)
    assert 'class="col changed"' in diff  # lowercasing and accent stripping
    encoding = frame_with(app, "attention mask")
    assert encoding["token"].iloc[0] == "[CLS]" and set(encoding["type id"]) == {0, 1}
    assert encoding["special tokens mask"].sum() == 3


def test_user_text_is_never_markup() -> None:
    app = open_page("pages/pipeline.py")
    app.text_area(key="pipeline_text").set_value('<img src=x onerror=alert(1)> <script>alert("x")</script>').run()
    assert_clean(app)
    for block in app.html:
        assert "<img" not in block.proto.body and "<script>" not in block.proto.body


def test_the_train_pages_run_can_be_picked() -> None:
    app = open_page("pages/train.py")
    app.selectbox(key="preset").set_value("bert").run()
    app.switch_page("pages/pipeline.py")
    app.run()
    assert_clean(app)
    assert app.selectbox(key="pipeline_tokenizer").value == "session"
    assert "Trained on the Train page (WordPiece" in app.selectbox(key="pipeline_tokenizer").format_func("session")
    assert frame_with(app, "attention mask")["token"].iloc[0] == "[CLS]"
