"""AppTest checks of the Audit page: it opens on a preset with the summary, charts and tables; the texts can be
changed; an uploaded tokenizer.json is audited with its proofs; the search filters; the session's training gets a
vocab slider whose findings follow it; a link restores the page's choices; hostile token text stays text."""

from __future__ import annotations


from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz import Tokenizer, models, pre_tokenizers


def open_audit(params: dict[str, str] | None = None) -> AppTest:
    app = open_page("pages/audit.py", query=params)
    assert not app.exception, [str(error.value) for error in app.exception]
    return app


def metrics(app: AppTest) -> dict[str, str]:
    return {metric.label: metric.value for metric in app.metric}


def toy_tokenizer_json(extra_token: str = "") -> bytes:
    """'b c' merges before 'a b', so 'abc' (from 'ab' + 'c') is unreachable."""
    vocab = ["a", "b", "c", "bc", "ab", "abc"] + ([extra_token] if extra_token else [])
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, [("b", "c"), ("a", "b"), ("ab", "c")]))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer.to_str().encode("utf-8")


def upload(app: AppTest, data: bytes) -> AppTest:
    app.selectbox(key="audit_tokenizer").set_value("upload").run()
    app.file_uploader(key="audit_tokenizer_file").set_value(("toy.json", data, "application/json")).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    return app


def test_opens_on_the_gpt2_preset_with_every_section() -> None:
    app = open_audit()
    assert app.title[0].value == "Audit a vocabulary"
    assert [header.value for header in app.header] == ["Summary", "Findings"]
    values = metrics(app)
    assert values["vocab size"] == "1,000"
    assert values["unreachable"] == "13"  # the byte tokens C0, C1, F5..FF: no UTF-8 text holds them
    assert values["unused"].endswith("%")
    summary = app.dataframe[0].value
    assert list(summary["finding"])[:3] == ["Unreachable from its own text", "Unreachable at all", "Cannot decide"]
    assert app.slider(key="audit_threshold").value == 0.05
    assert len(app.get("plotly_chart")) == 2  # R(t) and unused by length


def test_texts_choice_none_and_multilingual() -> None:
    app = open_audit()
    app.radio(key="audit_texts").set_value("none").run()
    assert metrics(app)["unused"] == "no texts"
    assert len(app.get("plotly_chart")) == 0
    app.radio(key="audit_texts").set_value("multilingual").run()
    assert not app.exception
    assert metrics(app)["unused"].endswith("%")


def test_uploaded_tokenizer_shows_the_merge_order_proof_and_the_search_filters() -> None:
    app = upload(open_audit({"atexts": "none"}), toy_tokenizer_json())
    assert metrics(app)["unreachable"] == "1"
    frames = [frame.value for frame in app.dataframe]
    unreachable = next(frame for frame in frames if "reason" in frame.columns and list(frame["tokens"]) == ["abc"]
                       and frame["reason"].iloc[0].startswith("unreachable"))
    assert "merge #0 ('b' + 'c' → 'bc') takes a part first" in unreachable["reason"].iloc[0]
    app.text_input(key="audit_search").set_value("zzz").run()
    assert all(len(frame.value) == 0 for frame in app.dataframe if "reason" in frame.value.columns)
    app.text_input(key="audit_search").set_value("ab").run()
    assert any(list(frame.value["tokens"]) == ["ab"] for frame in app.dataframe if "reason" in frame.value.columns)


def test_hostile_token_text_stays_text() -> None:
    app = upload(open_audit({"atexts": "none"}), toy_tokenizer_json("<img src=x onerror=alert(1)>"))
    for block in app.get("html"):
        assert "onerror" not in block.proto.body
    for markdown in app.markdown:
        assert "<img" not in markdown.value


def test_the_session_training_gets_a_slider_and_the_findings_follow_it() -> None:
    app = open_page("pages/train.py")
    assert not app.exception, [str(error.value) for error in app.exception]
    app.switch_page("pages/audit.py")
    app.run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert app.selectbox(key="audit_tokenizer").value == "session"
    slider = app.slider(key="audit_vocab")
    assert metrics(app)["vocab size"] == f"{slider.value:,}"
    slider.set_value(500).run()
    assert not app.exception
    assert metrics(app)["vocab size"] == "500"


def test_a_link_restores_the_choices() -> None:
    app = open_audit({"atok": "bert", "atexts": "multilingual", "athreshold": "0.2", "asearch": "##"})
    assert app.selectbox(key="audit_tokenizer").value == "bert"
    assert app.radio(key="audit_texts").value == "multilingual"
    assert app.text_input(key="audit_search").value == "##"
    assert app.query_params["atok"] == ["bert"] or app.query_params["atok"] == "bert"


def test_json_download_is_the_report() -> None:
    app = upload(open_audit({"atexts": "none"}), toy_tokenizer_json())
    button = next(button for button in app.get("download_button") if "JSON" in button.proto.label)
    assert button.proto.label == "Download the report (JSON)"
