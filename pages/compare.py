"""Compare: 2 to 4 pipelines trained on the session's corpus beside pretrained tokenizers from files (8 in all);
one text cut by each; compression and the literature's metrics on held-out text; curves over vocab size."""

import streamlit as st

from tokviz.corpus import corpus_hash
from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.limits import LIVE_TRAINING_MAX_CHARS, MAX_RENDERED_TOKENS
from tokviz.metrics import pairwise_jaccard, segmentation_differences
from tokviz.ui import catalog_choice, compare_views, downloads
from tokviz.ui.corpus_input import corpus_input
from tokviz.compare import MAX_COMPARED
from tokviz.ui.shell import capped_text, counted, md_escape, page_setup, page_title, show_error
from tokviz.ui.tokenizer_files import tokenizer_files
from tokviz.ui.training import is_trained, request_for, tokenizer_at, train_with_progress, trained_size
from tokviz.ui.workspace import bind
from tokviz.viz.charts import tokenizer_colors
from tokviz.viz.compare import better_caption, compression_curves_figure, overlap_table, styled_compression_table
from tokviz.viz.spans import render_token_spans, spans_from_encoding

workspace = page_setup("pages/compare.py")
compare = workspace.compare
page_title(workspace, "pages/compare.py", "Compare tokenizers",
           "Several pipelines trained on the session's corpus (the Train page's), side by side. Training is cached: "
           "revisiting or changing one configuration retrains only that one.")

with st.expander("Corpus (shared with the Train page)", expanded=False, icon=":material/description:"):
    corpus = corpus_input(workspace, key_prefix="compare_")
st.caption(f"Corpus: {md_escape(corpus.source)}; {corpus.stats.characters:,} characters; "
           f"{len(corpus.split.test_lines)} held-out lines are kept for the metrics.")

st.header("1 · Configurations")
count = compare_views.configuration_count(compare)
configurations = []
for position, column in enumerate(st.columns(count)):
    with column:
        try:
            configurations.append(compare_views.configuration_form(compare, position))
        except TokvizError as error:
            show_error(error)

with st.expander(f"Pretrained tokenizers from files ({len(compare.files)} uploaded)", expanded=bool(compare.files), icon=":material/upload_file:"):
    st.caption("Compare tokenizers you might reuse (GPT-2, cl100k, Llama, T5, BERT…) with the ones trained here, "
               f"{MAX_COMPARED} tokenizers in all. Each is named by its file.")
    files = tokenizer_files(compare.files, "compare_files", limit=MAX_COMPARED - len(configurations))
with st.expander(f"The session's tokenizer and the built-in catalog ({len(compare.catalog)} chosen)", expanded=bool(compare.catalog),
                 icon=":material/library_books:"):
    files += catalog_choice.compare_picker(workspace, limit=MAX_COMPARED - len(configurations) - len(files))

st.header("2 · Train")
clicked = st.button("Train all", key="compare_train", type="primary")
requests = [request_for(corpus.key, configuration.config, configuration.vocab_size) for configuration in configurations]
if not clicked and len(corpus.text) > LIVE_TRAINING_MAX_CHARS and not all(map(is_trained, requests)):
    st.info("This corpus is large: press **Train all** to train (trainings done before come from the cache).")
    st.stop()
trained = []  # (configuration, tokenizer at its trained size, request, history)
for configuration, request in zip(configurations, requests):
    try:
        if not corpus.split.train_lines:
            raise EmptyCorpusError("The corpus is empty: paste some text or upload a file to compare tokenizers on it.")
        history = train_with_progress(request, corpus.split.train_lines)
        # The trained model, not the top of the range: a Unigram history reaches above its target (earlier snapshots).
        trained.append((configuration, tokenizer_at(request, trained_size(history), history), request, history))
    except TokvizError as error:  # one configuration failing leaves the others compared
        st.error(f"{configuration.name}: {md_escape(str(error))}")
if trained:
    st.caption(" · ".join(f"{item[0].name}: {item[1].get_vocab_size():,} tokens in {item[3].seconds:.2f} s" for item in trained))
compared = compare_views.compared(trained, files)
if len(compared) < 2:
    st.info("At least two tokenizers (trained configurations or uploaded files) are needed to compare them.")
    st.stop()

st.header("3 · One text, every segmentation")
default_text = "\n".join(corpus.split.test_lines[:3])


def text_changed(value: str) -> None:
    compare.text = None if value == default_text else value


text = capped_text(st.text_area("Text to tokenize", key="compare_text", height=100,
                                on_change=bind("compare_text", lambda: default_text if compare.text is None else compare.text, text_changed)), "text")
encodings, segmented = [], []
for entry in compared:  # a tokenizer whose pattern times out on this text is named with the reason; the others are drawn
    try:
        encodings.append(entry.tokenizer.encode(text))
        segmented.append(entry)
    except TokvizError as error:
        st.error(f"{md_escape(entry.name)}: {md_escape(str(error))}")
diff = segmentation_differences(text, encodings)
st.caption(f"Outlined: tokens that cut where no other tokenizer cuts, or join across a cut every other one makes "
           f"({counted(len(diff.ranges), 'place')} in this text).")
for entry, encoding, outlined in zip(segmented, encodings, diff.differing):
    spans = spans_from_encoding(encoding, entry.unk_id)
    st.markdown(f"**{md_escape(entry.name)}** — {counted(len(spans), 'token')}, {len(outlined):,} outlined")
    st.html(render_token_spans(text, spans, byte_level=entry.byte_level, max_tokens=MAX_RENDERED_TOKENS, outlined=outlined).html)

st.header("4 · Metrics on the evaluation text")
sources = {"held-out": "held-out lines of the corpus", "paste": "a text I paste"}


def source_changed(value: str) -> None:
    compare.eval_source = value


def eval_text_changed(value: str) -> None:
    compare.eval_text = value


source = st.radio("Evaluate on", list(sources), format_func=sources.get, horizontal=True, key="compare_eval_source",
                  on_change=bind("compare_eval_source", lambda: compare.eval_source, source_changed))
if source == "held-out":
    eval_text = "\n".join(corpus.split.test_lines)
else:
    eval_text = st.text_area("Evaluation text", key="compare_eval_text", height=120,
                             on_change=bind("compare_eval_text", lambda: compare.eval_text, eval_text_changed))
eval_text = capped_text(eval_text, "evaluation text")  # encoded for every configuration and curve point
if not eval_text.strip():
    st.info("The evaluation text is empty: paste some text to measure the tokenizers on it.")
    st.stop()
# Held-out lines are measured one by one, as the corpus's texts: a line break is not part of any of them.
eval_texts = tuple(line for line in eval_text.split("\n") if line) if source == "held-out" else (eval_text,)
eval_key = corpus_hash("\u0000".join(eval_texts))
measurement = compare_views.measurement_cached(tuple((entry.name, entry.key) for entry in compared), eval_key,
                                               _tokenizers={entry.name: entry.tokenizer for entry in compared}, _texts=eval_texts)
for name, sentence in measurement.failures.items():  # e.g. a pattern past its time limit: named, the others measured
    st.error(f"{md_escape(name)}: {md_escape(sentence)}")
if measurement.metrics:
    st.table(styled_compression_table(measurement.metrics), hide_index=True)  # cells wrap: 8 names whole at 1280 px
    st.caption(better_caption() + " Words are whitespace-separated words, the same for every tokenizer. "
               + md_escape(compare_views.measuring_caption(compared)))
    compare_views.literature_metrics(compared, measurement, workspace.presentation)
specials = {token for entry in compared for token in entry.special_tokens}
vocabs = {entry.name: entry.tokenizer.get_vocab(with_added_tokens=True) for entry in compared}
pairs = pairwise_jaccard(vocabs, {entry.name: entry.byte_level for entry in compared}, exclude=specials)
st.table(overlap_table(pairs).style.format(precision=2), hide_index=True)  # cells wrap: names whole at 1280 px
st.caption("Vocabularies are compared as text: markers (Ġ, ##, ▁, </w>) removed and byte-level tokens decoded, special tokens left out.")
compare_views.transformers_download(compared)
downloads.compare_downloads(compared)  # every other file kind tokviz reads

if not trained:
    st.stop()
st.header("5 · Compression over vocab size")
st.caption("The trained configurations at sizes across the range their Train slider offers (uploaded tokenizers have one size).")
curves = compare_views.compression_curves(trained, eval_key, eval_texts)  # one whose pattern times out is left out (named in 4)
markers = {configuration.name: trained_size(history) for configuration, _, _, history in trained}
st.plotly_chart(compression_curves_figure(curves, markers=markers, presentation=workspace.presentation,
                                          colors=tokenizer_colors(entry.name for entry in compared)),  # as in the charts above
                width="stretch", key="compare_curves")
