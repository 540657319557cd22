"""Widgets the pages share, each bound to the session workspace: the pipeline choice and its Custom
form, the pipeline preview, the vocab slider, and a text as token spans with its numbers."""

from __future__ import annotations

from typing import Any

import streamlit as st

from tokviz.pipeline_config import (
    NORMALIZERS,
    PRE_TOKENIZERS,
    SP_MODEL_TYPES,
    SP_NORMALIZATION_RULES,
    Param,
    PipelineConfig,
    component_choices,
    component_type,
    from_form_state,
    to_form_state,
)
from tokviz.presets import SCORING_LABELS, model_label
from tokviz.ui.shell import md_escape, metrics_row
from tokviz.ui.workspace import bind, reseed
from tokviz.workspace import TrainState

#: One line of help per trainer option, in plain words (the HF name in brackets for those who know it).
OPTION_HELP: dict[str, tuple[str, str]] = {
    "min_frequency": ("Minimum count", "Pairs (or words) seen fewer times than this are never merged or kept; 0 keeps everything. (min_frequency)"),
    "limit_alphabet": ("Largest alphabet", "Keep only this many of the most frequent characters as the starting alphabet; the rest become unknown. 0 = no limit. (limit_alphabet)"),
    "continuing_subword_prefix": ("Mark for word continuations", "Put before every piece that continues a word, as BERT's ## in 'token ##izer'. Empty for none. (continuing_subword_prefix)"),
    "end_of_word_suffix": ("Mark for word ends", "Put after the last piece of every word, as </w> in the original BPE paper. Empty for none. (end_of_word_suffix)"),
    "max_token_length": ("Longest token", "Never build a token longer than this many characters; 0 = no limit. (max_token_length)"),
    "shrinking_factor": ("Share kept per pruning round", "Each Unigram pruning round keeps this share of the vocabulary (0.75 keeps three quarters). (shrinking_factor)"),
    "max_piece_length": ("Longest seed piece", "The longest piece, in characters, the Unigram seed vocabulary may hold. (max_piece_length)"),
    "n_sub_iterations": ("EM steps per round", "How many EM re-estimations run between two pruning rounds. (n_sub_iterations)"),
    "sp_model_type": ("SentencePiece model type", "unigram: prune a large vocabulary by likelihood (T5, ALBERT); bpe: merge the most frequent pair "
                      "(Llama); char: one piece per character; word: one piece per whitespace-led word. (model_type)"),
    "character_coverage": ("Character coverage", "Share of the corpus's characters the alphabet must cover, most frequent first; rarer ones "
                           "become <unk> (or bytes with byte fallback). 0.98 to 1.0. (character_coverage)"),
    "byte_fallback": ("Byte fallback", "Add the 256 pieces <0x00>…<0xFF>: a character outside the vocabulary is spelled as its UTF-8 bytes "
                      "instead of <unk>, as Llama does. (byte_fallback)"),
    "normalization_rule": ("Normalization rule", "nmt_nfkc: NFKC plus cleanup of control characters and odd spaces (the default); nfkc: NFKC "
                           "only; _cf: also case-folded; identity: the text as it is. (normalization_rule_name)"),
    "unk_id": ("<unk> id", "Id of the unknown piece; it must exist. (unk_id)"),
    "bos_id": ("<s> id", "Id of the begin-of-sentence piece; -1 for none. (bos_id)"),
    "eos_id": ("</s> id", "Id of the end-of-sentence piece; -1 for none. (eos_id)"),
    "pad_id": ("<pad> id", "Id of the padding piece; -1 for none (the default). (pad_id)"),
    "user_defined_symbols": ("User-defined symbols (separated by spaces)", "Pieces kept whole wherever they appear in the text, "
                             "e.g. <mask> or an emoji; they take the ids after the special pieces. (user_defined_symbols)"),
    "max_sentence_length": ("Longest line (bytes)", "Lines longer than this many UTF-8 bytes are skipped, as sentencepiece does "
                            "(the tutorial uses 9999). (max_sentence_length)"),
}



def _form_keys() -> list[str]:
    return [key for key in to_form_state(PipelineConfig())]


def pipeline_choice(train: TrainState, form_area: Any = None) -> PipelineConfig:
    """The pipeline selectbox (key ``preset``: a preset or Custom…) and, for Custom, the full form (drawn in
    ``form_area`` when given: the page puts it under the corpus, across the page's width).

    Raises ``TokvizError`` for a Custom form that does not make a valid pipeline.
    """
    from tokviz.presets import TRAIN_PRESETS as PRESETS

    def chose(value: str) -> None:
        from tokviz.presets import preset_vocab

        if value in PRESETS and train.target_vocab == preset_vocab(train.preset):  # the size was the old preset's start: take the new one's
            train.target_vocab = preset_vocab(value)
        train.preset = value
        if value in PRESETS:
            train.config = PRESETS[value].build()
        for key in _form_keys():  # Custom starts from the pipeline shown last
            st.session_state.pop(key, None)
        st.session_state.pop(_FILLED_NOTE_KEY, None)

    choice = st.selectbox(
        "Pipeline", [*PRESETS, "custom"], key="preset", on_change=bind("preset", lambda: train.preset, chose),
        format_func=lambda key: PRESETS[key].label if key in PRESETS else "Custom…",
    )
    if choice != "custom":
        st.caption(PRESETS[choice].summary)
        return PRESETS[choice].build()
    with form_area if form_area is not None else st.container():
        train.config = custom_pipeline_form(train.config)
    return train.config


def _param_widget(key: str, param: Param, label: str) -> None:
    help_text = param.help or None
    if param.kind == "bool":
        st.checkbox(label, key=key, help=help_text)
    elif param.kind == "choice":
        st.selectbox(label, param.choices, key=key, help=help_text)
    elif param.kind == "optional_bool":
        st.selectbox(label, [None, True, False], key=key, format_func=lambda value: "auto" if value is None else str(value), help=help_text)
    else:
        st.text_input(label, key=key, help=help_text)


_FILLED_NOTE_KEY = "_cfg_filled_note"


def _model_changed() -> None:
    """A new model in the Custom form: fill in the unknown and special tokens it needs, as HF's examples do."""
    from tokviz.pipeline_config import form_tokens_for_model

    state = st.session_state
    specials, unk, note = form_tokens_for_model(state.get("cfg_model", ""), state.get("cfg_special_tokens") or "",
                                                state.get("cfg_unk_token") or "", bool(state.get("cfg_byte_alphabet")))
    state["cfg_special_tokens"], state["cfg_unk_token"], state[_FILLED_NOTE_KEY] = specials, unk, note


def custom_pipeline_form(config: PipelineConfig) -> PipelineConfig:
    """The Custom mode: ordered normalizers and pre-tokenizers with options, model and trainer options.

    Widget keys are ``cfg_*`` (``tokviz.pipeline_config.to_form_state``), seeded from
    ``config`` whenever Streamlit does not hold them.
    """
    from tokviz.pipeline_config import MODELS, POST_PROCESSORS

    for key, value in to_form_state(config).items():
        if key not in st.session_state:
            st.session_state[key] = value
    # Four columns across the page: text side | pre-tokenizers | model and its tokens | trainer options.
    normalizer_column, pre_column, right, options = st.columns(4)
    if st.session_state.get("cfg_model") == "SentencePiece":
        with normalizer_column:
            st.selectbox("Model", MODELS, key="cfg_model", help="The algorithm that learns the vocabulary.")
        sentencepiece_form(pre_column, right)
        return from_form_state(st.session_state)
    left = normalizer_column
    with left:
        # A type may be used twice (a Strip before and after): its second use is "Strip #2", with widgets of its own.
        chosen_normalizers = st.multiselect(
            "Normalizers, in the order you pick them", component_choices(NORMALIZERS, st.session_state.get("cfg_normalizers") or []),
            key="cfg_normalizers", select_all=False,
            help="Applied one after another to the text before anything else (Unicode forms, lowercasing, replacing). "
                 "Pick 'Replace #2' for a second Replace.",
        )
        for label in chosen_normalizers:
            for param in NORMALIZERS[component_type(label)]:
                _param_widget(f"cfg_n_{label}_{param.name}", param, f"{label} · {param.name}")
    with pre_column:
        chosen_pre = st.multiselect(
            "Pre-tokenizers, in order", component_choices(PRE_TOKENIZERS, st.session_state.get("cfg_pre_tokenizers") or []),
            key="cfg_pre_tokenizers", select_all=False,
            help="Cut the text into words; the model never merges across their boundaries.",
        )
        for label in chosen_pre:
            for param in PRE_TOKENIZERS[component_type(label)]:
                _param_widget(f"cfg_p_{label}_{param.name}", param, f"{label} · {param.name}")
    with right:
        model = st.selectbox("Model", MODELS, key="cfg_model", help="The algorithm that learns the vocabulary.", on_change=_model_changed)
        if note := st.session_state.get(_FILLED_NOTE_KEY):
            st.caption(note)
        st.text_input("Special tokens (separated by spaces)", key="cfg_special_tokens", help="Tokens added whole, never split, e.g. [CLS] [SEP].")
        st.text_input("Unknown token", key="cfg_unk_token", help="One of the special tokens, used for what the vocabulary cannot spell; empty for none.")
        st.selectbox("Post-processor", POST_PROCESSORS, key="cfg_post_processor",
                     help="What is added around each encoded text: BERT's [CLS] … [SEP], T5's … </s>, or byte-level offsets.")
    with options:
        if model != "Unigram":
            st.number_input(OPTION_HELP["min_frequency"][0], min_value=0, step=1, key="cfg_min_frequency", help=OPTION_HELP["min_frequency"][1])
        if model in ("BPE", "WordPiece"):
            for name in ("limit_alphabet", "continuing_subword_prefix", "end_of_word_suffix"):
                label, help_text = OPTION_HELP[name]
                if name == "limit_alphabet":
                    st.number_input(label, min_value=0, step=1, key=f"cfg_{name}", help=help_text)
                else:
                    st.text_input(label, key=f"cfg_{name}", help=help_text)
            st.radio(
                "When two pairs tie", ["hf", "first_seen"], key="cfg_tie_break", horizontal=True,
                format_func={"hf": "as HF tokenizers", "first_seen": "first seen (HF course)"}.get,
                help="HF tokenizers: the highest count, then the smallest (left id, right id). First seen: the first pair met "
                "scanning words in first-seen order, as the HF course notebooks do.",
            )
        if model == "BPE":
            st.number_input(OPTION_HELP["max_token_length"][0], min_value=0, step=1, key="cfg_max_token_length", help=OPTION_HELP["max_token_length"][1])
        if model == "WordPiece":
            st.radio(
                "Scoring", ["frequency", "likelihood"], key="cfg_scoring", format_func=SCORING_LABELS.get,
                help="HF scoring: the pair count, what HF tokenizers' WordPieceTrainer does. Course scoring: "
                "count(ab) / (count(a) · count(b)), the HF course's WordPiece, which at small sizes cuts words into more pieces.",
            )
        if model in ("BPE", "WordPiece", "Unigram"):
            st.checkbox("Start from all 256 byte symbols", key="cfg_byte_alphabet",
                        help="The byte-level alphabet (GPT-2): every text can be spelled, so nothing is unknown.")
        if model == "Unigram":
            st.radio("Unigram training", ["em", "course"], key="cfg_unigram_method", horizontal=True,
                     format_func={"em": "EM (SentencePiece, HF)", "course": "HF course"}.get,
                     help="EM: SentencePiece's and HF's algorithm. HF course: its simplified version.")
            for name, low, high, step in (("shrinking_factor", 0.05, 0.95, 0.05), ("max_piece_length", 1, None, 1), ("n_sub_iterations", 1, None, 1)):
                label, help_text = OPTION_HELP[name]
                st.number_input(label, min_value=low, max_value=high, step=step, key=f"cfg_{name}", help=help_text)
    return from_form_state(st.session_state)


def sentencepiece_form(left: Any, right: Any) -> None:
    """The SentencePiece options (widget keys ``cfg_<option>``), each with one line of help."""
    # A caption, not an info box: a box in this half-width column stood 13 lines tall at 1280 px.
    left.caption("SentencePiece trains on the corpus's raw lines: no pre-tokenizer, spaces kept as ▁. "
                 "Its normalizer is the rule chosen here, as the sentencepiece package applies it.")
    with left:
        st.selectbox(OPTION_HELP["sp_model_type"][0], SP_MODEL_TYPES, key="cfg_sp_model_type", help=OPTION_HELP["sp_model_type"][1])
        st.selectbox(OPTION_HELP["normalization_rule"][0], SP_NORMALIZATION_RULES, key="cfg_normalization_rule",
                     help=OPTION_HELP["normalization_rule"][1])
        st.number_input(OPTION_HELP["character_coverage"][0], min_value=0.98, max_value=1.0, step=0.0001, format="%.5f",
                        key="cfg_character_coverage", help=OPTION_HELP["character_coverage"][1])
    with right:
        st.checkbox(OPTION_HELP["byte_fallback"][0], key="cfg_byte_fallback", help=OPTION_HELP["byte_fallback"][1])
        # Two by two: four to a row squeezed each label to a letter per line in this half-width column.
        for column, name in zip([*st.columns(2), *st.columns(2)], ("unk_id", "bos_id", "eos_id", "pad_id")):
            column.number_input(OPTION_HELP[name][0], min_value=-1, step=1, key=f"cfg_{name}", help=OPTION_HELP[name][1])
        st.text_input(OPTION_HELP["user_defined_symbols"][0], key="cfg_user_defined_symbols", help=OPTION_HELP["user_defined_symbols"][1])
        st.number_input(OPTION_HELP["max_sentence_length"][0], min_value=10, step=1000, key="cfg_max_sentence_length",
                        help=OPTION_HELP["max_sentence_length"][1])


def pipeline_summary(config: PipelineConfig) -> None:
    """The pipeline in one code block (code blocks show user text as text, never as markup)."""
    from tokviz.presets import algorithm_label, model_label

    if config.model == "SentencePiece":
        lines = [
            f"normalizer:    {config.normalization_rule} (sentencepiece's rule), spaces → ▁",
            "pre-tokenizer: none (raw lines; pieces never cross a ▁ word start)",
            f"model:         {model_label(config)}, character_coverage {config.character_coverage:g}"
            + (", byte fallback" if config.byte_fallback else ""),
            "special:       " + " ".join(f"{piece}={getattr(config, name)}" for name, piece in
                                         (("unk_id", "<unk>"), ("bos_id", "<s>"), ("eos_id", "</s>"), ("pad_id", "<pad>"))
                                         if getattr(config, name) >= 0)
            + ("  user-defined: " + " ".join(config.user_defined_symbols) if config.user_defined_symbols else ""),
        ]
        st.code("\n".join(lines), language=None)
        return
    lines = [
        "normalizer:    " + (" → ".join(spec.label() for spec in config.normalizers) or "none"),
        "pre-tokenizer: " + (" → ".join(spec.label() for spec in config.pre_tokenizers) or "none"),
        f"model:         {algorithm_label(config.model)}" + (f" (unk {config.unk_token})" if config.unk_token else "")
        + (f", {SCORING_LABELS[config.scoring].split(' — ')[1]}" if config.model == "WordPiece" else ""),
        "special:       " + (" ".join(config.special_tokens) or "none"),
    ]
    st.code("\n".join(lines), language=None)


def pipeline_preview(tokenizer: Any, line: str, byte_level: bool = False) -> None:
    """Live preview: the first corpus line normalized, then cut into pre-tokens."""
    from tokviz.viz.spans import TokenSpan, render_token_spans

    normalized = tokenizer.normalizer.normalize_str(line) if tokenizer.normalizer is not None else line
    pre_tokens = tokenizer.pre_tokenizer.pre_tokenize_str(normalized) if tokenizer.pre_tokenizer is not None else [(normalized, (0, len(normalized)))]
    st.caption("Preview on the first line: normalized text, then its pre-tokens")
    st.code(normalized or " ", language=None)
    spans = [TokenSpan(word, index, start, end) for index, (word, (start, end)) in enumerate(pre_tokens)]
    st.html(render_token_spans(normalized, spans, byte_level=byte_level).html)


def vocab_slider(train: TrainState, history: Any, trained: int) -> int:
    """The vocab slider (key ``vocab_slider``) over every size the training went through, bound to the workspace.

    It starts at the trained size; Unigram prunes downwards, so its range also holds the
    larger vocabularies of the seed and earlier pruning rounds, above the trained size.
    """
    from tokviz.inspect import training_size_range

    low, high, _trained = training_size_range(history)
    if high <= low:
        st.info(f"The vocabulary has {high:,} tokens and nothing to slide: {md_escape(history.stop_reason)}.")
        return high
    current = train.slider if train.slider is not None else trained
    if not low <= current <= high:
        current = trained
    # Another training is another slider (its range differs): Streamlit would start it at its
    # minimum unless the value is set anew, even when it equals the last one.
    if st.session_state.get("vocab_slider") != current or st.session_state.get("_vocab_slider_for") != train.trained:
        reseed("vocab_slider", current)
        st.session_state["_vocab_slider_for"] = train.trained

    def moved() -> None:
        train.slider = int(st.session_state["vocab_slider"])

    size = st.slider(
        "Vocab size (drag: the tokenizer at any size the training went through, no retraining)",
        min_value=low, max_value=high, key="vocab_slider", on_change=moved,
    )
    caption = f"{low:,} = special tokens and alphabet; {trained:,} = trained size."
    if high > trained:
        caption += f" Up to {high:,}: the larger vocabularies of the seed and earlier pruning rounds."
    st.caption(caption)
    return int(size)


def spans_block(tokenizer: Any, text: str, byte_level: bool, *, show_ids: bool = False,
                first_lines: int | None = None, origins: Any = None, presentation: bool = False) -> Any:
    """``text`` encoded as token spans under its numbers (tokens, chars per token, ...); returns the encoding.

    Clicking a token pins a card with its id, offsets, bytes and, given ``origins``
    (``tokviz.viz.spans.token_origins``), the merge or score that made it. With
    ``first_lines``, only the spans of that many first lines are drawn (the numbers still
    cover the whole text). A "Copy ids / tokens" control follows.
    """
    from tokviz.limits import MAX_RENDERED_TOKENS
    from tokviz.metrics import measure_encodings, unknown_token_id
    from tokviz.viz.spans import render_token_spans, spans_from_encoding
    from tokviz.viz.tables import token_stats

    encoding = tokenizer.encode(text)
    unk_id = unknown_token_id(tokenizer)
    metrics_row(token_stats(measure_encodings([text], [encoding], tokenizer.get_vocab_size(with_added_tokens=True), unk_id)), helps=TOKEN_STAT_HELP)
    spans = spans_from_encoding(encoding, unk_id)
    shown_text = text
    if first_lines is not None:
        cut = _line_cut(text, first_lines)
        if cut < len(text):
            shown_text = text[:cut]
            spans = [span for span in spans if span.start < cut]
    rendered = render_token_spans(shown_text, spans, show_ids=show_ids, byte_level=byte_level, max_tokens=MAX_RENDERED_TOKENS,
                                  pinned=True, origins=origins, presentation=presentation)
    if rendered.truncated:
        st.info(f"Showing the first {rendered.rendered_tokens:,} of {rendered.total_tokens:,} tokens; the counts above cover all of them.")
    st.html(rendered.html)
    return encoding


#: What each number over the spans measures.
TOKEN_STAT_HELP = {
    "tokens": "Tokens the model produced for the text, without special tokens a post-processor adds.",
    "characters per token": "Characters of the text divided by its tokens: higher means more compression.",
    "tokens per word": "Tokens divided by whitespace-separated words (fertility): 1.0 means every word is one token.",
    "unknown tokens": "Tokens that are the unknown token: text this vocabulary cannot spell.",
}


def _line_cut(text: str, lines: int) -> int:
    """The index just past the first ``lines`` lines of ``text``.

    >>> _line_cut("a\\nb\\nc", 2), _line_cut("a\\nb", 5)
    (4, 3)
    """
    position = 0
    for _ in range(lines):
        position = text.find("\n", position)
        if position < 0:
            return len(text)
        position += 1
    return position


def pipeline_name(train: TrainState) -> str:
    """The pipeline's name for the folded inputs panel: the preset's label, or the custom model."""
    from tokviz.presets import TRAIN_PRESETS as PRESETS, algorithm_label

    if train.preset in PRESETS:
        return PRESETS[train.preset].label
    return f"custom {model_label(train.config)}"


def copy_ids(tokenizer: Any, text: str, encoding: Any = None) -> None:
    """A "Copy ids / tokens" control: the text's ids and tokens in code blocks, each with a copy button."""
    from tokviz.viz.spans import copyable_ids, copyable_tokens, spans_from_encoding

    spans = spans_from_encoding(encoding if encoding is not None else tokenizer.encode(text))
    with st.popover("Copy ids / tokens", icon=":material/content_copy:"):
        st.caption("Ids")
        st.code(copyable_ids(spans), language=None, wrap_lines=True)
        st.caption("Tokens")
        st.code(copyable_tokens(spans), language=None, wrap_lines=True)
