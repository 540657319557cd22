"""Train: corpus and pipeline (folded away once trained) → vocab slider → token spans → result tabs."""

import streamlit as st

from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.limits import LIVE_TRAINING_MAX_CHARS, MAX_TEST_TEXT_CHARS, MAX_VOCAB_SIZE, check_test_text, check_training_request
from tokviz.patterns import time_budget
from tokviz.pipeline_config import build_tokenizer
from tokviz.presets import algorithm_label, vocab_target_hint
from tokviz.ui import catalog_choice, train_views, widgets
from tokviz.ui.corpus_input import corpus_input, session_corpus
from tokviz.ui.shell import md_escape, metrics_row, page_setup, run_marker, show_error
from tokviz.ui.tokenizer_files import training_opener
from tokviz.ui.training import counted_words, is_opened, opened_name, origins_at, request_for, tokenizer_at, train_with_progress, trained_size, training_lines, training_of, word_counts_cached
from tokviz.ui.workspace import bind, copy_link, reseed, sync_link

workspace = page_setup("pages/train.py")
train = workspace.train
title, link = st.columns([5, 1], vertical_alignment="bottom")
title.title("Train a tokenizer")
if train.trained is None:  # with results, the results fragment draws Copy link: its runs change the slider and the test text
    with link:
        copy_link(workspace, "pages/train.py")

corpus = session_corpus(workspace)
trained = train.trained
panel = f"Corpus and pipeline · {md_escape(corpus.source)} · {md_escape(widgets.pipeline_name(train))} · vocab {train.target_vocab:,}"
with st.expander(panel, expanded=trained is None, icon=":material/tune:"):
    left, right = st.columns([3, 2])
    form_area = st.container()  # Custom's form, under the corpus and across the page: Train stays in the first screen
    with left:
        corpus = corpus_input(workspace)
    config, words = None, None
    problem_shown = False  # one message per problem: the "settings changed" warning is not added under an error
    with right:
        try:
            config = widgets.pipeline_choice(train, form_area)
        except TokvizError as error:
            show_error(error)
            problem_shown = True
        sync_link(workspace)  # the Custom form updates the pipeline during the run: the link follows now
        vocab_column, button_column = st.columns([2, 1], vertical_alignment="bottom")

        def vocab_changed(value: int) -> None:
            train.target_vocab = int(value)

        target_vocab = vocab_column.number_input("Target vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, step=100, key="target_vocab",
                                                 on_change=bind("target_vocab", lambda: train.target_vocab, vocab_changed))
        clicked = button_column.button("Train", key="train", type="primary", width="stretch")
        with st.popover("Open a training (history.json)", icon=":material/folder_open:", width="content",
                        help="A training saved as history.json (Export tab, or `python -m tokviz train`)"):
            training_opener(workspace)
    if config is not None:
        try:
            widgets.pipeline_summary(config)
            with time_budget():  # a user pattern slow on every line stops here, not hours later
                widgets.pipeline_preview(build_tokenizer(config), corpus.split.train_lines[0] if corpus.split.train_lines else "",
                                         train_views.is_byte_level(config))
                if len(corpus.text) <= LIVE_TRAINING_MAX_CHARS:
                    words = word_counts_cached(corpus.key, config.normalizers, config.pre_tokenizers, corpus.split.train_lines)
                else:  # a large corpus's words are counted where it trains (a Dask worker), not in this page's thread
                    words = counted_words(corpus.key, config.normalizers, config.pre_tokenizers)
        except TokvizError as error:
            show_error(error)
            config, problem_shown = None, True
    metrics_row({
        "characters": corpus.stats.characters, "lines": corpus.stats.lines,
        # SentencePiece has no pre-tokenizer: its words are the raw text's pieces between spaces (▁ marks them).
        ("words (between spaces)" if config is not None and config.model == "SentencePiece" else "words (pre-tokenized)"):
            sum(words.values()) if words is not None else "—",
        "unique words": len(words) if words is not None else "—", "distinct characters": corpus.stats.distinct_characters,
    })
    st.caption(f"Source: {md_escape(corpus.source)}; {len(corpus.split.test_lines)} held-out lines are kept for testing. "
               f"Corpora up to {LIVE_TRAINING_MAX_CHARS:,} characters train as you change them; larger ones wait for **Train**.")

request = request_for(corpus.key, config, int(target_vocab)) if config is not None else None
opened = train.trained is not None and is_opened(train.trained)  # an opened training stays until Train is pressed
if request is not None and (clicked or (len(corpus.text) <= LIVE_TRAINING_MAX_CHARS and not opened)):
    try:
        if not corpus.split.train_lines:
            raise EmptyCorpusError("The corpus is empty: paste some text or upload a file, then train.")
        check_training_request(len(corpus.text), words)
        train_with_progress(request, corpus.split.train_lines)
        if request != train.trained:  # a new training: the slider returns to its trained size
            # (The first training of a session opened from a link keeps the link's slider and test text.)
            if train.trained is not None:
                if train.trained.corpus_key != request.corpus_key:
                    train.test_text = None  # a new corpus: its own held-out lines
                train.slider = None
            train.trained = request
            sync_link(workspace)
            st.rerun()  # fold the inputs away and draw the results from the top
    except TokvizError as error:
        show_error(error)
        problem_shown = True

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
stale = not is_opened(request) and (config is None or request_for(corpus.key, config, int(target_vocab)) != request)
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
    # Copy link lives here, beside the slider, not beside the title: a fragment's run redraws only the fragment, and
    # the link must follow the slider, the test text and the tab (drawing into the title row from here breaks the page).
    with link_column:
        copy_link(workspace, "pages/train.py")
    run_marker()
    tokenizer = tokenizer_at(request, size, history)
    view = train_views.TrainedView(request, history, training_lines(request), size, tokenizer, workspace.presentation)

    # The default test text: the corpus's held-out lines, within the limit for text tokenized on every change.
    held_out = "\n".join(corpus.split.test_lines)[:MAX_TEST_TEXT_CHARS]
    if train.test_text is not None and len(train.test_text) > MAX_TEST_TEXT_CHARS:
        try:
            check_test_text(len(train.test_text))
        except TokvizError as error:  # cut before the text area is drawn, so the cut text is what it shows
            show_error(error)
        train.test_text = train.test_text[:MAX_TEST_TEXT_CHARS]
        reseed("test_text", train.test_text)

    def test_text_changed(value: str) -> None:
        train.test_text = None if value == held_out else value

    text_column, options_column = st.columns([3.4, 1.6] if workspace.presentation else [4, 1.3])  # the controls fit at 1280 px
    text = text_column.text_area("Test text (held-out lines of the corpus by default)", key="test_text", height=90,
                                 on_change=bind("test_text", lambda: held_out if train.test_text is None else train.test_text, test_text_changed))
    show_ids = options_column.toggle("Show ids", key="show_ids")
    show_all = options_column.toggle("Show all lines", key="show_all_lines")
    try:
        encoding = widgets.spans_block(tokenizer, text, view.byte_level, show_ids=show_ids, first_lines=None if show_all else 4,
                                       origins=origins_at(request, size, history), presentation=workspace.presentation)
        with options_column:  # drawn in its column above the spans; the text is encoded once per run
            widgets.copy_ids(tokenizer, text, encoding)
    except TokvizError as error:
        show_error(error)

    # Only the open tab is built (a slider move must not rebuild four tabs nobody sees); the widgets of
    # the closed ones keep their values for when their tab opens again.
    for key in TAB_WIDGET_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    views = train_views.result_views(view, held_out if request.corpus_key == corpus.key else "")

    def tab_changed(label: str) -> None:
        train.tab = label

    # The open tab lives in the workspace (a page switch or a link keeps it); one another model lacks opens the first.
    chosen_tab = train.tab if train.tab in views else next(iter(views))
    tabs = st.tabs(list(views), key="result_tab", on_change=bind("result_tab", lambda: chosen_tab, tab_changed))
    for place, draw in zip(tabs, views.values()):
        if not place.open:
            continue
        with place:
            try:
                draw()
            except TokvizError as error:  # one view failing leaves the others working
                show_error(error)


#: Widgets inside result tabs: Streamlit would forget their values while their tab is closed.
TAB_WIDGET_KEYS = ("merge_step", "lattice_word", "sample_alpha", "trace_word")

if stale:  # results that no longer match the inputs are greyed, not passed off as current
    st.html("<style>.st-key-train_results_stale { opacity: 0.45; filter: grayscale(0.8); }</style>")
results()
