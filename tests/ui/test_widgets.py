"""tokviz.ui.widgets: the shared widgets -- the pipeline choice bound to the workspace, the vocab slider
over every size a training went through, token spans under their numbers, the ids and tokens to copy."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tokviz.ui.widgets import _line_cut, pipeline_name
from tokviz.workspace import TrainState


def test_line_cut_and_pipeline_names() -> None:
    assert (_line_cut("a\nb\nc", 2), _line_cut("a\nb", 5), _line_cut("", 1)) == (4, 3, 0)
    assert pipeline_name(TrainState(preset="bert")) == "BERT-like WordPiece"
    assert pipeline_name(TrainState(preset="custom")).startswith("custom ")


def _choice() -> None:
    import streamlit as st

    from tokviz.ui.widgets import pipeline_choice
    from tokviz.ui.workspace import current

    train = current().train
    config = pipeline_choice(train)
    st.session_state["picked"] = (train.preset, config.model, train.target_vocab)


def test_choosing_a_preset_takes_its_pipeline_and_starting_size() -> None:
    app = AppTest.from_function(_choice, default_timeout=60).run()
    assert not app.exception and app.session_state["picked"] == ("gpt2", "BPE", 1000)
    app.selectbox(key="preset").set_value("t5").run()
    assert app.session_state["picked"] == ("t5", "Unigram", 500)  # the size was gpt2's start: t5's now
    app.selectbox(key="preset").set_value("custom").run()
    assert not app.exception and app.session_state["picked"][0] == "custom"


def _spans() -> None:
    import streamlit as st

    from tokviz import Tokenizer, pre_tokenizers
    from tokviz.models import WordLevel
    from tokviz.ui.widgets import copy_ids, spans_block

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "low": 1, "new": 2, "<b>": 3}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    encoding = spans_block(tokenizer, "low new\nlowest <b>", byte_level=False, show_ids=True, first_lines=1)
    st.session_state["ids"] = encoding.ids
    copy_ids(tokenizer, "low new\nlowest <b>", encoding)


def test_spans_count_the_whole_text_and_draw_the_first_lines() -> None:
    app = AppTest.from_function(_spans, default_timeout=60).run()
    assert not app.exception
    assert app.session_state["ids"] == [1, 2, 0, 0, 0, 0]  # the numbers cover the whole text
    assert {metric.label: metric.value for metric in app.metric}["unknown tokens"] == "4"
    html = "".join(str(block.proto) for block in app.get("html"))
    assert "low" in html and "lowest" not in html  # only the first line's spans are drawn
    assert [code.value for code in app.code] == ["[1, 2, 0, 0, 0, 0]", '["low", "new", "[UNK]", "[UNK]", "[UNK]", "[UNK]"]']
