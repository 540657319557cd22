"""Learn: guided lessons, one click per step, each step computed from a real training."""

import zlib

import streamlit as st

from tokviz import lessons
from tokviz.errors import TokvizError
from tokviz.ui import learn_views
from tokviz.ui.shell import page_setup, page_title, show_error
from tokviz.ui.workspace import bind

workspace = page_setup("pages/learn.py")
learn = workspace.learn
learn_views.learn_compact_layout(workspace.presentation)
page_title(workspace, "pages/learn.py", "Learn how tokenizers are trained")


def setter(name: str):
    def write(value) -> None:
        setattr(learn, name, value)
        if name == "lesson":
            learn.step = 1  # a new lesson starts at its first step

    return write


def go_to(step: int) -> None:
    learn.step = step


wide_input = learn.lesson == "normalization"  # the sentence needs the room
picker, size_column, extra_column, corpus_column = st.columns([3, 6, 0.01, 0.01] if wide_input else [3, 2, 2, 2], vertical_alignment="bottom")
lesson_key = picker.selectbox("Lesson", list(lessons.LESSONS), format_func=lessons.LESSONS.get, key="learn_lesson",
                              on_change=bind("learn_lesson", lambda: learn.lesson, setter("lesson")))
counts, predict, size = lessons.CLASSIC_WORD_COUNTS, False, None
if lesson_key in ("bpe", "wordpiece", "unigram"):
    if lesson_key == "unigram":
        size = size_column.number_input("Target vocab size", min_value=2, max_value=40, key="learn_unigram_vocab",
                                        on_change=bind("learn_unigram_vocab", lambda: learn.unigram_vocab, setter("unigram_vocab")))
    else:
        def merges_changed(value: int, lesson: str = lesson_key) -> None:
            learn.merges[lesson] = int(value)

        key = f"learn_merges_{lesson_key}"
        size = size_column.number_input("Merges to learn", min_value=1, max_value=30, key=key,
                                        on_change=bind(key, lambda: learn.merges[lesson_key], merges_changed))
        predict = extra_column.toggle("Predict mode", key="learn_predict", help="Guess each merge before it is shown.",
                                      on_change=bind("learn_predict", lambda: learn.predict, setter("predict")))
    with corpus_column.popover("Word counts", width="content"):  # floats over the lesson: the step keeps its screen
        counts = learn_views.learn_corpus_editor(learn, lessons.CLASSIC_WORD_COUNTS)
elif lesson_key == "byte_level":
    text = size_column.text_input("Text", key="learn_byte_text", max_chars=40,
                                  on_change=bind("learn_byte_text", lambda: learn.byte_text, setter("byte_text")))
else:
    def sentence_changed(value: str) -> None:
        learn.sentence = None if value == lessons.DEFAULT_SENTENCE else value

    text = size_column.text_input("Sentence", key="learn_sentence", max_chars=120,
                                  on_change=bind("learn_sentence", lambda: learn.sentence or lessons.DEFAULT_SENTENCE, sentence_changed))

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
    show_error(error)
    st.stop()

total = len(lesson.steps)
# The step lives in the workspace, not in the slider: Streamlit resets a slider whose range
# changed (more merges, another lesson), and the class should stay on its step.
current = learn.step = min(max(learn.step, 1), total)
st.session_state["learn_step"] = current

back, slider, forward = st.columns([1.4, 7.2, 1.4], vertical_alignment="bottom")  # "◀ Back" whole at presentation size
back.button("◀ Back", key="learn_back", on_click=go_to, args=(current - 1,), disabled=current <= 1, width="stretch")
forward.button("Next ▶", key="learn_next", on_click=go_to, args=(current + 1,), disabled=current >= total, width="stretch")
if total > 1:
    slider.slider("Step", 1, total, key="learn_step", on_change=lambda: go_to(st.session_state["learn_step"]), label_visibility="collapsed")
else:
    slider.caption("This lesson has one step.")

step = lesson.steps[current - 1]
# The exercise remembers what was revealed per lesson, corpus, size and step.
step_key = f"{lesson.key}_{zlib.crc32(lessons.format_word_counts(counts).encode())}_{size}_{current}"
try:
    learn_views.learn_step_view(step, predict, step_key)
except TokvizError as error:
    show_error(error)
