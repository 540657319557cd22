"""Train: corpus and pipeline (folded away once trained) → vocab slider → token spans → result tabs."""

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.limits import MAX_TEST_TEXT_CHARS
from tokviz.presets import algorithm_label, vocab_target_hint
from tokviz.ui import catalog_choice, train_views, widgets
from tokviz.ui.shell import md_escape, page_setup, page_title, run_marker, show_error
from tokviz.ui.train_inputs import inputs_panel, train_when_asked
from tokviz.ui.training import is_opened, opened_name, origins_at, request_for, tokenizer_at, train_with_progress, trained_size, training_lines, training_of
from tokviz.ui.workspace import copy_link, sync_link

workspace = page_setup("pages/train.py")
train = workspace.train
# With results, Copy link is drawn beside the slider: the slider's fragment reruns alone and the link must follow it.
page_title(workspace, "pages/train.py", "Train a tokenizer", with_link=train.trained is None)

inputs = inputs_panel(workspace)  # corpus, pipeline, target vocab and Train
corpus, config = inputs.corpus, inputs.config
problem_shown = train_when_asked(workspace, inputs)

if train.trained is None:
    st.info("Press **Train** to train a tokenizer on this corpus.")
    st.stop()
request = train.trained
history = training_of(request)
if history is None and request.corpus_key == corpus.key:  # the shared cache evicted it: train it again
    try:
        history = train_with_progress(request, corpus.split.train_lines)
    except TokvizError as error:
        show_error(error)
        st.stop()
if history is None:
    st.warning("The training you opened is no longer held by this server: open its history.json again." if is_opened(request) else
               "The corpus changed since the last training and this server no longer holds it: press **Train** to train on this corpus.")
    st.stop()
if is_opened(request):
    st.caption(f"Opened from {md_escape(opened_name(request) or 'history.json')}: a training made elsewhere (its corpus is not here; "
               "the test text below is this page's). **Train** trains this page's corpus instead.")
stale = not is_opened(request) and (config is None or request_for(corpus.key, config, inputs.target_vocab) != request)
if stale and not problem_shown:
    st.warning("The corpus or the settings changed since this tokenizer was trained: press **Train** to train again. "
               "The results below (greyed) are the last training's.")
size_now = trained_size(history)
status = f"Trained {algorithm_label(history.algorithm)} in {history.seconds:.2f} s (cached: revisiting is instant). Stopped because {history.stop_reason}."
status_column, shortcut_column = st.columns([3, 2], vertical_alignment="center")
status_column.caption(md_escape(status))
with shortcut_column:
    catalog_choice.compare_shortcut(workspace)
train_views.training_note(history, training_lines(request), len(corpus.split.test_lines) if request.corpus_key == corpus.key else None)
hint = vocab_target_hint(history, request.vocab_size)
if hint:
    st.info(md_escape(hint), icon=":material/lightbulb:")


@st.fragment
def results() -> None:
    """The slider and everything that follows it: a slider move (or a new test text) reruns only this,
    and only the open result tab is built."""
    with st.container(key="train_results_stale" if stale else "train_results"):
        result_views()


def result_views() -> None:
    slider_column, link_column = st.columns([4.6, 1] if workspace.presentation else [6, 1], vertical_alignment="center")  # "Copy link" whole
    with slider_column:
        size = widgets.vocab_slider(train, history, size_now)
    sync_link(workspace)  # the link follows the slider (a fragment's run does not reach page_setup)
    with link_column:  # here, not beside the title: a fragment's run redraws only the fragment
        copy_link(workspace, "pages/train.py")
    run_marker()
    tokenizer = tokenizer_at(request, size, history)
    view = train_views.TrainedView(request, history, training_lines(request), size, tokenizer, workspace.presentation)

    # The default test text: the corpus's held-out lines, within the limit for text tokenized on every change.
    held_out = "\n".join(corpus.split.test_lines)[:MAX_TEST_TEXT_CHARS]
    text_column, options_column = st.columns([3.4, 1.6] if workspace.presentation else [4, 1.3])  # the controls fit at 1280 px
    with text_column:
        text = train_views.test_text_box(workspace, held_out)
    show_ids = options_column.toggle("Show ids", key="show_ids")
    show_all = options_column.toggle("Show all lines", key="show_all_lines")
    try:
        encoding = widgets.spans_block(tokenizer, text, view.byte_level, show_ids=show_ids, first_lines=None if show_all else 4,
                                       origins=origins_at(request, size, history), presentation=workspace.presentation)
        with options_column:  # drawn in its column above the spans; the text is encoded once per run
            widgets.copy_ids(tokenizer, text, encoding)
    except TokvizError as error:
        show_error(error)
    train_views.result_tabs(workspace, view, held_out if request.corpus_key == corpus.key else "")


if stale:  # results that no longer match the inputs are greyed, not passed off as current
    st.html("<style>.st-key-train_results_stale { opacity: 0.45; filter: grayscale(0.8); }</style>")
results()
