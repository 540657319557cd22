"""AppTest checks of the Learn page (issue 6): each lesson driven from its first step to its last
with Next (and back with Back / the slider), the exercise mode, the editable word counts."""

from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import assert_clean, open_page
from tokviz import lessons

PAGE = "pages/learn.py"


def open_learn() -> AppTest:
    return open_page(PAGE)


def frame_with(app: AppTest, column: str):
    """The first table on the page with that column (the word-count editor is a table too)."""
    return next(frame.value for frame in app.dataframe if column in frame.value.columns)


def step_title(app: AppTest) -> str:
    """The step's heading as the reader sees it (the page escapes Markdown: the title quotes the user's words)."""
    import re

    return re.sub(r"\\(.)", r"\1", app.subheader[0].value)


EXPECTED_TITLES = {
    "bpe": [
        "Start: every word split into characters",
        "Merge #1: 'u' + 'g' → 'ug'",
        "Merge #2: 'u' + 'n' → 'un'",
        "Merge #3: 'h' + 'ug' → 'hug'",
        "New words: apply the merges in the order they were learned",
    ],
    "wordpiece": [
        "Start: the ## alphabet",
        "Merge #1: '##g' + '##s' → '##gs'",
        "Merge #2: '##u' + '##g' → '##ug'",
        "Merge #3: '##u' + '##n' → '##un'",
        "Merge #4: '##u' + '##gs' → '##ugs'",
        "Merge #5: 'h' + '##ugs' → 'hugs'",
        "Encoding: greedy longest match",
    ],
    "unigram": [step.title for step in lessons.unigram_lesson(lessons.CLASSIC_WORD_COUNTS).steps],
    "byte_level": [step.title for step in lessons.byte_level_lesson().steps],
    "normalization": [step.title for step in lessons.normalization_lesson().steps],
}


@pytest.mark.parametrize("lesson_key", list(lessons.LESSONS))
def test_next_walks_each_lesson_from_the_first_step_to_the_last(lesson_key: str) -> None:
    app = open_learn()
    app.selectbox(key="learn_lesson").set_value(lesson_key).run()
    assert_clean(app)
    expected = EXPECTED_TITLES[lesson_key]
    assert app.slider(key="learn_step").value == 1 and app.slider(key="learn_step").max == len(expected)
    assert app.button(key="learn_back").disabled
    seen = [step_title(app)]
    for _ in range(len(expected) - 1):
        app.button(key="learn_next").click().run()
        assert_clean(app)
        seen.append(step_title(app))
    assert seen == expected
    assert app.button(key="learn_next").disabled  # the last step
    app.button(key="learn_back").click().run()
    assert step_title(app) == expected[-2]
    app.slider(key="learn_step").set_value(1).run()
    assert step_title(app) == expected[0]


def test_bpe_steps_show_the_pairs_and_the_new_words() -> None:
    app = open_learn()
    app.button(key="learn_next").click().run()
    pairs = frame_with(app, "pair")
    assert list(pairs["pair"])[:3] == ["u + g", "p + u", "u + n"] and list(pairs["count"])[:3] == [20, 17, 16]
    assert any(notice.value == "New vocabulary entry: 'ug' \\(\\= 'u' \\+ 'g'\\)" for notice in app.success)
    app.slider(key="learn_step").set_value(5).run()
    new_words = frame_with(app, "tokens")
    assert dict(zip(new_words["word"], new_words["tokens"])) == {
        "bug": "['b', 'ug']", "mug": "['[UNK]', 'ug']", "hugs": "['hug', 's']", "bum": "['b', 'u', '[UNK]']",
    }


def test_more_merges_make_a_longer_lesson_and_the_step_follows() -> None:
    app = open_learn()
    app.slider(key="learn_step").set_value(5).run()
    app.number_input(key="learn_merges_bpe").set_value(5).run()
    assert_clean(app)
    assert app.slider(key="learn_step").max == 7
    app.number_input(key="learn_merges_bpe").set_value(1).run()
    assert app.slider(key="learn_step").max == 3 and app.slider(key="learn_step").value == 3  # clamped to the new last step


def test_predict_mode_hides_the_merge_until_the_student_checks() -> None:
    app = open_learn()
    app.toggle(key="learn_predict").set_value(True).run()
    app.button(key="learn_next").click().run()
    assert step_title(app) == "Merge #1: which pair is merged next?"
    assert not any("pair" in frame.value.columns for frame in app.dataframe)  # the pair table would give it away
    guess = next(box for box in app.selectbox if box.key and box.key.startswith("learn_guess_"))
    assert guess.options == sorted(guess.options) and "u + g" in guess.options
    guess.set_value("p + u").run()
    next(button for button in app.button if button.key and button.key.startswith("learn_check_")).click().run()
    assert_clean(app)
    assert step_title(app) == "Merge #1: 'u' + 'g' → 'ug'"
    assert [notice.value for notice in app.warning] == ["Not this time: 'u' \\+ 'g' was merged\\."]  # the verdict
    assert list(frame_with(app, "pair")["pair"])[0] == "u + g"
    # The next step is hidden again.
    app.button(key="learn_next").click().run()
    assert step_title(app) == "Merge #2: which pair is merged next?"


def test_word_counts_edited_as_text_retrain_the_lesson() -> None:
    app = open_learn()
    app.radio(key="learn_counts_mode").set_value("text").run()
    assert app.text_area(key="learn_counts_text").value == "hug 10\npug 5\npun 12\nbun 4\nhugs 5"
    app.text_area(key="learn_counts_text").set_value("low 5\nlower 2\nnewest 6\nwidest 3").run()
    assert_clean(app)
    app.button(key="learn_next").click().run()
    assert step_title(app) == "Merge #1: 'e' + 's' → 'es'"  # Sennrich et al.'s example: 'es' (9) first
    app.text_area(key="learn_counts_text").set_value("hug ten").run()
    assert any("not a whole number" in error.value for error in app.error)
    assert any("Word counts" in warning.value for warning in app.warning)
    assert not app.exception


def test_the_sentence_and_the_text_are_editable() -> None:
    app = open_learn()
    app.selectbox(key="learn_lesson").set_value("byte_level").run()
    app.text_input(key="learn_byte_text").set_value("<b>é</b>").run()
    assert_clean(app)
    assert step_title(app) == "8 characters, 9 bytes"
    app.selectbox(key="learn_lesson").set_value("normalization").run()
    app.text_input(key="learn_sentence").set_value('<script>alert("x")</script> Ünïcode').run()
    assert_clean(app)
    assert step_title(app) == "BERT-like: normalize, then pre-tokenize"
    for block in app.get("html"):
        assert "<script>" not in block.proto.body  # user text is escaped by the span renderer


def test_new_words_typed_on_the_last_step_are_tokenized() -> None:
    app = open_learn()
    app.slider(key="learn_step").set_value(5).run()
    app.text_input(key="learn_new_words_bpe").set_value("pugs <b>hum</b>").run()
    assert_clean(app)
    new_words = frame_with(app, "tokens")
    assert dict(zip(new_words["word"], new_words["tokens"])) == {
        "pugs": "['p', 'ug', 's']", "<b>hum</b>": "['[UNK]', 'b', '[UNK]', 'h', 'u', '[UNK]', '[UNK]', '[UNK]', 'b', '[UNK]']",
    }
    app.selectbox(key="learn_lesson").set_value("wordpiece").run()
    app.slider(key="learn_step").set_value(7).run()
    app.text_input(key="learn_new_words_wordpiece").set_value("hugs pugs").run()
    assert_clean(app)
    assert app.selectbox(key="learn_trace_word").options == ["hugs", "pugs"]
    app.text_input(key="learn_new_words_wordpiece").set_value("").run()
    assert_clean(app)


MARKDOWN_PAYLOADS = "[x](//e.co) 5\n![](//e.co) 4\n<b>bold</b> 3\n**x** 6\n`code` 2\n$math$ 3"


@pytest.mark.parametrize("lesson_key", ["bpe", "wordpiece", "unigram"])
def test_markdown_in_the_word_table_stays_text_on_every_step(lesson_key: str) -> None:
    """Issue 18: a word ``[x](//e.co)`` became a link and ``![](//e.co)`` an image inside the step headings."""
    import re

    app = open_learn()
    app.selectbox(key="learn_lesson").set_value(lesson_key).run()
    app.radio(key="learn_counts_mode").set_value("text").run()
    app.text_area(key="learn_counts_text").set_value(MARKDOWN_PAYLOADS).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    steps = int(app.slider(key="learn_step").max)
    for step in range(1, steps + 1):
        app.slider(key="learn_step").set_value(step).run()
        assert not app.exception, [str(error.value) for error in app.exception]
        shown = [element.value for kind in ("subheader", "caption", "markdown", "success", "warning", "info", "error")
                 for element in app.get(kind) if isinstance(getattr(element, "value", None), str)]
        for text in shown:
            # Every Markdown special of the payloads is escaped: no link, image, emphasis, code or math can form.
            assert not re.search(r"(?<!\\)\]\(//e\.co|(?<!\\)\*\*x|(?<!\\)`code|(?<!\\)\$math|<b>", text), (step, text)
