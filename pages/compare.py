"""Compare: 2 to 4 pipelines trained on one corpus; one text cut by each; metrics and curves on held-out text."""

import streamlit as st

from tokviz import ui
from tokviz.corpus import corpus_hash
from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.limits import LIVE_TRAINING_MAX_CHARS, MAX_RENDERED_TOKENS
from tokviz.metrics import compression_metrics, pairwise_jaccard, segmentation_differences
from tokviz.pipeline_config import tokenizer_with_model
from tokviz.samples import load_sample
from tokviz.viz.compare import compression_curves_figure, compression_table, overlap_table
from tokviz.viz.spans import render_token_spans, spans_from_encoding

ui.require_app_navigation()
st.title("Compare tokenizers")
st.caption("Several pipelines trained on the same corpus, side by side. Training is cached: revisiting or changing one configuration retrains only that one.")

st.header("1 · Corpus")
try:
    corpus = ui.corpus_input(load_sample())
except TokvizError as error:
    ui.show_error(error)
    corpus = ui.CorpusChoice("", "unreadable upload")
corpus_key = corpus_hash(corpus.text)
split, stats = ui.corpus_overview(corpus_key, _text=corpus.text)
st.caption(f"Source: {ui.md_escape(corpus.source)}; {stats.characters:,} characters; {len(split.test_lines)} held-out lines are kept for the metrics.")

st.header("2 · Configurations")
count = st.radio("How many configurations", [2, 3, 4], index=1, horizontal=True, key="compare_count")
configurations = []
for position, column in enumerate(st.columns(count)):
    with column:
        try:
            configurations.append(ui.compare_configuration_form(position, ("gpt2", "bert", "t5", "char_bpe")[position]))
        except TokvizError as error:
            ui.show_error(error)

st.header("3 · Train")
clicked = st.button("Train all", key="compare_train", type="primary")
requests = [(corpus_key, configuration.config, configuration.vocab_size) for configuration in configurations]
if not clicked and len(corpus.text) > LIVE_TRAINING_MAX_CHARS and not all(map(ui.is_trained, requests)):
    st.info("This corpus is large: press **Train all** to train (trainings done before come from the cache).")
    st.stop()
trained = []  # (configuration, tokenizer at its trained size, request, history)
for configuration, request in zip(configurations, requests):
    try:
        if not split.train_lines:
            raise EmptyCorpusError("The corpus is empty: paste some text or upload a file to compare tokenizers on it.")
        history = ui.train_with_progress(request, split.train_lines)
        # The trained model, not model_at(max_vocab_size): a Unigram history reaches above its target (earlier snapshots).
        trained.append((configuration, tokenizer_with_model(configuration.config, history.model), request, history))
    except TokvizError as error:  # one configuration failing leaves the others compared
        st.error(f"{configuration.name}: {ui.md_escape(str(error))}")
if len(trained) < 2:
    st.info("At least two configurations must train to compare them.")
    st.stop()
st.caption(" · ".join(f"{item[0].name}: {item[1].get_vocab_size():,} tokens in {item[3].seconds:.2f} s" for item in trained))

st.header("4 · One text, every segmentation")
if "compare_text" not in st.session_state:
    st.session_state["compare_text"] = "\n".join(split.test_lines[:3])
text = ui.capped_text(st.text_area("Text to tokenize", key="compare_text", height=100), "text")
encodings = [tokenizer.encode(text) for _, tokenizer, _, _ in trained]
diff = segmentation_differences(text, encodings)
st.caption(f"Dashed outlines mark tokens some other configuration cuts differently: {len(diff.ranges)} places in this text.")
for (configuration, _, _, _), encoding, outlined in zip(trained, encodings, diff.differing):
    spans = spans_from_encoding(encoding, configuration.config.unk_token)
    st.markdown(f"**{ui.md_escape(configuration.name)}** — {len(spans):,} tokens, {len(outlined):,} cut differently")
    st.html(render_token_spans(text, spans, byte_level=configuration.byte_level, max_tokens=MAX_RENDERED_TOKENS, outlined=outlined).html)

st.header("5 · Metrics on the evaluation text")
source = st.radio("Evaluate on", ["held-out lines of the corpus", "a text I paste"], horizontal=True, key="compare_eval_source")
eval_text = "\n".join(split.test_lines) if source.startswith("held-out") else st.text_area("Evaluation text", key="compare_eval_text", height=120)
eval_text = ui.capped_text(eval_text, "evaluation text")  # encoded for every configuration and curve point
if not eval_text.strip():
    st.info("The evaluation text is empty: paste some text to measure the tokenizers on it.")
    st.stop()
rows = {configuration.name: compression_metrics(tokenizer, eval_text, configuration.config.unk_token) for configuration, tokenizer, _, _ in trained}
st.dataframe(compression_table(rows), hide_index=True, width="stretch", key="compare_metrics")
st.caption("Words are whitespace-separated words, the same for every configuration; special tokens added by a post-processor are not counted.")
specials = {token for configuration, _, _, _ in trained for token in configuration.config.special_tokens}
vocabs = {configuration.name: tokenizer.get_vocab(with_added_tokens=True) for configuration, tokenizer, _, _ in trained}
pairs = pairwise_jaccard(vocabs, {configuration.name: configuration.byte_level for configuration, _, _, _ in trained}, exclude=specials)
st.dataframe(overlap_table(pairs), hide_index=True, width="stretch", key="compare_overlap")
st.caption("Vocabularies are compared as text: markers (Ġ, ##, ▁, </w>) removed and byte-level tokens decoded, special tokens left out.")

st.header("6 · Compression over vocab size")
eval_key = corpus_hash(eval_text)
curves = {configuration.name: ui.compression_curve_cached(request, eval_key, _history=history, _text=eval_text) for configuration, _, request, history in trained}
st.plotly_chart(compression_curves_figure(curves), width="stretch", key="compare_curves")
