"""Learn: guided lessons, one click per step, each step computed from a real training."""

import zlib

import streamlit as st

from tokviz import lessons, ui
from tokviz.errors import TokvizError

ui.require_app_navigation()
ui.learn_compact_layout()
st.title("Learn how tokenizers are trained")


def go_to(step: int) -> None:
    st.session_state["learn_position"] = step


def restart() -> None:
    st.session_state["learn_position"] = 1


def slider_moved() -> None:
    st.session_state["learn_position"] = st.session_state["learn_step"]


wide_input = st.session_state.get("learn_lesson") == "normalization"  # the sentence needs the room
picker, size_column, extra_column, corpus_column = st.columns([3, 6, 0.01, 0.01] if wide_input else [3, 2, 2, 2], vertical_alignment="bottom")
lesson_key = picker.selectbox(
    "Lesson", list(lessons.LESSONS), format_func=lessons.LESSONS.get, key="learn_lesson", on_change=restart
)
counts, predict, size = lessons.CLASSIC_WORD_COUNTS, False, None
if lesson_key in ("bpe", "wordpiece", "unigram"):
    if lesson_key == "unigram":
        size = size_column.number_input("Target vocab size", min_value=2, max_value=40, value=12, key="learn_unigram_vocab")
    else:
        default = 3 if lesson_key == "bpe" else 5
        size = size_column.number_input("Merges to learn", min_value=1, max_value=30, value=default, key=f"learn_merges_{lesson_key}")
        predict = extra_column.toggle("Predict mode", key="learn_predict", help="Guess each merge before it is shown.")
    with corpus_column.popover("Word counts", width="content"):  # floats over the lesson: the step keeps its screen
        counts = ui.learn_corpus_editor(lessons.CLASSIC_WORD_COUNTS)
elif lesson_key == "byte_level":
    text = size_column.text_input("Text", value="a가 짧", key="learn_byte_text", max_chars=40)
else:
    text = size_column.text_input("Sentence", value=lessons.DEFAULT_SENTENCE, key="learn_sentence", max_chars=120)

if counts is None:  # the editor (in its popover) says what is wrong with the table
    st.warning("The word-count table has a problem: open **Word counts** to fix it.")
    st.stop()
if lesson_key in lessons.DEFAULT_NEW_WORDS:  # typed in the last step's view, read here to build the lesson
    new_words = lessons.split_new_words(st.session_state.setdefault(f"learn_new_words_{lesson_key}", lessons.DEFAULT_NEW_WORDS[lesson_key]))
try:
    if lesson_key == "bpe":
        lesson = lessons.bpe_lesson(counts, n_merges=int(size), new_words=new_words)
    elif lesson_key == "wordpiece":
        lesson = lessons.wordpiece_lesson(counts, n_merges=int(size), new_words=new_words)
    elif lesson_key == "unigram":
        lesson = lessons.unigram_lesson(counts, vocab_size=int(size))
    elif lesson_key == "byte_level":
        lesson = lessons.byte_level_lesson(text, counts)
    else:
        lesson = lessons.normalization_lesson(text)
except TokvizError as error:
    ui.show_error(error)
    st.stop()

total = len(lesson.steps)
# The step lives in "learn_position", not in the slider: Streamlit resets a slider whose range
# changed (more merges, another lesson), and the class should stay on its step.
current = min(max(st.session_state.get("learn_position", 1), 1), total)
st.session_state["learn_position"] = st.session_state["learn_step"] = current

back, slider, forward = st.columns([1, 8, 1], vertical_alignment="bottom")
back.button("◀ Back", key="learn_back", on_click=go_to, args=(current - 1,), disabled=current <= 1, width="stretch")
forward.button("Next ▶", key="learn_next", on_click=go_to, args=(current + 1,), disabled=current >= total, width="stretch")
if total > 1:
    slider.slider("Step", 1, total, key="learn_step", on_change=slider_moved, label_visibility="collapsed")
else:
    slider.caption("This lesson has one step.")

step = lesson.steps[current - 1]
# The exercise remembers what was revealed per lesson, corpus, size and step.
step_key = f"{lesson.key}_{zlib.crc32(lessons.format_word_counts(counts).encode())}_{size}_{current}"
try:
    ui.learn_step_view(step, predict, step_key)
except TokvizError as error:
    ui.show_error(error)
