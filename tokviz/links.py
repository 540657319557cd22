"""Links: the session workspace as a flat ``str -> str`` dict for the URL, and back.

A reload or a shared link must reopen what the user chose, so every page writes the whole
:class:`~tokviz.workspace.Workspace` into ``st.query_params``. Defaults are left out to keep
links short, and so are options that do not apply to the chosen model:

>>> from tokviz.workspace import Workspace
>>> to_link(Workspace())
{'preset': 'gpt2', 'vocab': '1000'}
>>> workspace = Workspace(); workspace.train.slider = 600; workspace.learn.lesson = "unigram"
>>> params = to_link(workspace); params["size"], params["lesson"]
('600', 'unigram')
>>> restored, notes = from_link(params); restored.train.slider, restored.learn.lesson, notes
(600, 'unigram', [])

What a link does not carry (:data:`NOT_CARRIED`): a pasted or uploaded corpus (the link says
one was used, and the page asks for it again), uploaded tokenizer files, and texts longer
than :data:`MAX_LINK_TEXT` characters. A broken or hostile link opens the defaults of the
part it could not read, with a note saying what was wrong (:func:`from_link`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from tokviz.errors import PipelineConfigError, TokvizError
from tokviz.limits import MAX_VOCAB_SIZE, check_vocab_request
from tokviz.pipeline_config import (
    fill_model_tokens,
    form_tokens_for_model,
    COMMON_FIELDS,
    MODEL_FIELDS,
    NORMALIZERS,
    PRE_TOKENIZERS,
    ComponentSpec,
    Param,
    PipelineConfig,
    check_vocab_size,
    component,
)
from tokviz.presets import PRESETS, TRAIN_PRESETS, preset_key, preset_vocab
from tokviz.workspace import (
    CompareEntry,
    LearnState,
    TrainState,
    Workspace,
    default_compare_entries,
)

#: Longest text (test text, page texts) a link carries; longer ones stay out of the URL.
MAX_LINK_TEXT = 2000

#: One line for the pages: what a link leaves out.
NOT_CARRIED = (
    f"A link carries every choice on every page except a pasted or uploaded corpus, uploaded tokenizer files "
    f"and texts over {MAX_LINK_TEXT:,} characters."
)

# ---------------------------------------------------------------------------------------
# One pipeline config (the Train page's, and each custom Compare configuration's)

#: Trainer-side fields written to links, with how their text is read back.
_FIELD_KINDS: dict[str, str] = {
    "model": "str",
    "special_tokens": "list",
    "unk_token": "optional_str",
    "min_frequency": "int",
    "limit_alphabet": "optional_int",
    "byte_alphabet": "bool",
    "continuing_subword_prefix": "optional_str",
    "end_of_word_suffix": "optional_str",
    "max_token_length": "optional_int",
    "tie_break": "str",
    "scoring": "str",
    "unigram_method": "str",
    "shrinking_factor": "float",
    "max_piece_length": "int",
    "n_sub_iterations": "int",
    "post_processor": "str",
    "sp_model_type": "str",
    "character_coverage": "float",
    "byte_fallback": "bool",
    "normalization_rule": "str",
    "unk_id": "int",
    "bos_id": "int",
    "eos_id": "int",
    "pad_id": "int",
    "user_defined_symbols": "list",
    "max_sentence_length": "int",
}


def _encode(kind: str, value: Any) -> str:
    if kind in ("bool", "optional_bool"):
        return {True: "true", False: "false", None: "none"}[value]
    if kind == "list":
        return json.dumps(list(value), ensure_ascii=False)
    if value is None:
        return "none"
    return str(value)


#: Most components a link's normalizer or pre-tokenizer sequence may hold (real pipelines use up to ~6).
MAX_LINK_COMPONENTS = 32


def _decode(kind: str, text: str, where: str) -> Any:
    if len(text) > MAX_LINK_TEXT:  # bounds what one value can hold: a list of special tokens, a pattern, …
        raise PipelineConfigError(f"The link's value for {where} is {len(text):,} characters long; links carry at most {MAX_LINK_TEXT:,}.")
    from tokviz import limits
    from tokviz.errors import LimitExceededError

    try:  # the checks every file goes through: valid Unicode, and for JSON lists their numbers and escapes
        (limits.check_json_text if kind == "list" else limits.check_unicode)(text, f"The link's value for {where}")
    except LimitExceededError as error:
        raise PipelineConfigError(str(error)) from None
    try:
        if kind in ("bool", "optional_bool"):
            value = {"true": True, "false": False, "none": None}[text.lower()]
            if value is None and kind == "bool":
                raise KeyError(text)
            return value
        if kind.startswith("optional_") and text.lower() == "none":
            return None
        if kind in ("int", "optional_int"):
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "list":
            value = json.loads(text)
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ValueError(text)
            return tuple(value)
        return text
    except (KeyError, ValueError) as error:
        raise PipelineConfigError(f"The link's value {text!r} for {where} cannot be read as {kind.replace('_', ' ')}.") from error


def _component_params(prefix: str, index: int, spec: ComponentSpec) -> dict[str, str]:
    schema = {**NORMALIZERS, **PRE_TOKENIZERS}[spec.type]
    out = {f"{prefix}{index}": spec.type}
    for param in schema:
        value = spec.param(param.name)
        if value != param.default:
            out[f"{prefix}{index}.{param.name}"] = _encode(param.kind, value)
    return out


def to_query_params(config: PipelineConfig, vocab_size: int, preset: str | None = None, prefix: str = "") -> dict[str, str]:
    """A flat ``str -> str`` dict describing ``config`` and ``vocab_size``.

    Defaults are left out, and so are trainer options the config's model does not use. With
    ``preset`` (a key of ``PRESETS`` whose config equals ``config``) the link stays short:

    >>> to_query_params(PRESETS["gpt2"].build(), 500, preset="gpt2")
    {'preset': 'gpt2', 'vocab': '500'}
    >>> to_query_params(PipelineConfig(model="Unigram", end_of_word_suffix="</w>"), 300)
    {'vocab': '300', 'p0': 'Whitespace', 'model': 'Unigram'}

    A SentencePiece pipeline carries only sentencepiece's options that differ from its defaults:

    >>> from tokviz.pipeline_config import sentencepiece_config
    >>> to_query_params(sentencepiece_config(sp_model_type="bpe", byte_fallback=True), 5000)
    {'vocab': '5000', 'model': 'SentencePiece', 'sp_model_type': 'bpe', 'byte_fallback': 'true'}
    """
    if preset is not None:
        return {f"{prefix}preset": preset, f"{prefix}vocab": str(vocab_size)}
    out: dict[str, str] = {"vocab": str(vocab_size)}
    if config.model == "SentencePiece":  # its text side and special pieces follow from its own options
        defaults = PipelineConfig()
        out["model"] = config.model
        for name in MODEL_FIELDS["SentencePiece"]:
            if getattr(config, name) != getattr(defaults, name):
                out[name] = _encode(_FIELD_KINDS[name], getattr(config, name))
        return {f"{prefix}{key}": value for key, value in out.items()}
    for index, spec in enumerate(config.normalizers):
        out.update(_component_params("n", index, spec))
    for index, spec in enumerate(config.pre_tokenizers):
        out.update(_component_params("p", index, spec))
    if not config.pre_tokenizers:
        out["p"] = "none"
    defaults = PipelineConfig()
    used = set(COMMON_FIELDS) | set(MODEL_FIELDS[config.model])
    for field_info in fields(PipelineConfig):
        name = field_info.name
        if name in _FIELD_KINDS and name in used and (name == "model" or getattr(config, name) != getattr(defaults, name)):
            out[name] = _encode(_FIELD_KINDS[name], getattr(config, name))
    return {f"{prefix}{key}": value for key, value in out.items()}


def _first(value: str | list[str]) -> str:
    return value[-1] if isinstance(value, list) else value


def _read_components(params: Mapping[str, Any], prefix: str, schema_map: dict[str, tuple[Param, ...]]) -> tuple[ComponentSpec, ...]:
    specs: list[ComponentSpec] = []
    index = 0
    while f"{prefix}{index}" in params:
        if index >= MAX_LINK_COMPONENTS:
            raise PipelineConfigError(f"The link lists more than {MAX_LINK_COMPONENTS} components in one sequence; a pipeline holds at most that many.")
        type_name = _first(params[f"{prefix}{index}"])
        schema = schema_map.get(type_name)
        if schema is None:
            raise PipelineConfigError(f"The link names {type_name!r}, which is not one of: {', '.join(schema_map)}.")
        options = {
            param.name: _decode(param.kind if param.kind != "choice" else "str", _first(params[key]), f"{type_name}.{param.name}")
            for param in schema
            if (key := f"{prefix}{index}.{param.name}") in params
        }
        specs.append(component(type_name, **options))
        index += 1
    return tuple(specs)


def from_query_params(params: Mapping[str, Any], default_vocab: int = 500, prefix: str = "") -> tuple[PipelineConfig, int]:
    """Read back what :func:`to_query_params` wrote; unknown keys are ignored.

    A bad value raises :class:`PipelineConfigError` naming it, so the page can say which
    part of a link it could not use.

    >>> from_query_params({"preset": "bert", "vocab": "800"})[1]
    800
    """
    if prefix:
        params = {key[len(prefix):]: value for key, value in params.items() if key.startswith(prefix)}
    preset = params.get("preset")
    if "vocab" not in params and preset is not None and _first(preset) in TRAIN_PRESETS:
        default_vocab = TRAIN_PRESETS[_first(preset)].default_vocab  # where the pages start that preset
    vocab_text = _first(params.get("vocab", str(default_vocab)))
    vocab_size = check_vocab_size(_decode("int", vocab_text, "vocab"))
    if preset is not None and _first(preset) != "custom":
        key = _first(preset)
        if key not in TRAIN_PRESETS:
            raise PipelineConfigError(f"The link names the preset {key!r}; presets are: {', '.join(TRAIN_PRESETS)}.")
        return TRAIN_PRESETS[key].build(), vocab_size
    options: dict[str, Any] = {}
    for name, kind in _FIELD_KINDS.items():
        if name in params:
            options[name] = _decode(kind, _first(params[name]), name)
    if options.get("model") == "SentencePiece":
        from tokviz.pipeline_config import sentencepiece_config

        return sentencepiece_config(**{name: options[name] for name in MODEL_FIELDS["SentencePiece"] if name in options}), vocab_size
    options["normalizers"] = _read_components(params, "n", NORMALIZERS)
    pre_tokenizers = _read_components(params, "p", PRE_TOKENIZERS)
    if pre_tokenizers or _first(params.get("p", "")) == "none":
        options["pre_tokenizers"] = pre_tokenizers
    # A model that cannot work without an unknown token gets the one the Custom form fills in (from_link says so).
    return fill_model_tokens(PipelineConfig(**options))[0], vocab_size


# ---------------------------------------------------------------------------------------
# The whole workspace


def _text_param(text: str | None) -> str | None:
    """A page text for the link, or None when it is the default or too long to carry."""
    if text is None or len(text) > MAX_LINK_TEXT:
        return None
    return text


def _format_counts(counts: Mapping[str, int]) -> str:
    """``{'hug': 10, 'pug': 5}`` -> ``'hug:10 pug:5'`` (the Learn word table in a link)."""
    return " ".join(f"{word}:{count}" for word, count in counts.items())


def _parse_counts(text: str) -> dict[str, int]:
    from tokviz.lessons import check_word_counts

    counts: dict[str, int] = {}
    for item in text.split():
        word, sep, count = item.rpartition(":")
        if not sep or not word:
            raise PipelineConfigError(f"The link's word table entry {item!r} is not word:count.")
        counts[word] = _decode("int", count, f"the count of {word!r}")
    return check_word_counts(counts)


def _compare_params(entries: list[CompareEntry]) -> dict[str, str]:
    if entries == default_compare_entries():
        return {}
    out = {"cmp": str(len(entries))}
    for index, entry in enumerate(entries):
        key = f"c{index}"
        out[key] = entry.choice
        if entry.choice == "custom":
            out[f"{key}.model"] = entry.model
            out[f"{key}.pre"] = entry.pre_tokenizer
            out[f"{key}.norm"] = entry.normalizer
            if entry.model == "WordPiece" and entry.scoring != "frequency":
                out[f"{key}.scoring"] = entry.scoring
            if entry.model in ("BPE", "WordPiece", "WordLevel") and entry.min_frequency:
                out[f"{key}.min_frequency"] = str(entry.min_frequency)
        if entry.vocab != preset_vocab(entry.choice):
            out[f"{key}.vocab"] = str(entry.vocab)
    return out


def _read_compare(params: Mapping[str, Any]) -> list[CompareEntry]:
    from tokviz.compare import NORMALIZER_CHOICES, PRE_TOKENIZER_CHOICES
    from tokviz.pipeline_config import MODELS, WORDPIECE_SCORINGS

    count = _decode("int", _first(params["cmp"]), "cmp")
    if not 2 <= count <= 4:
        raise PipelineConfigError(f"The link asks for {count} Compare configurations; the page compares 2 to 4.")
    defaults = default_compare_entries() + [CompareEntry("char_bpe")]
    entries = []
    for index in range(count):
        key = f"c{index}"
        entry = CompareEntry(defaults[index].choice)
        entry.choice = _first(params.get(key, entry.choice))
        if entry.choice != "custom" and entry.choice not in TRAIN_PRESETS:
            raise PipelineConfigError(f"The link names the preset {entry.choice!r}; presets are: {', '.join(TRAIN_PRESETS)}.")
        entry.vocab = preset_vocab(entry.choice)
        for attribute, name, allowed in (
            ("model", "model", MODELS),
            ("pre_tokenizer", "pre", tuple(PRE_TOKENIZER_CHOICES)),
            ("normalizer", "norm", tuple(NORMALIZER_CHOICES)),
            ("scoring", "scoring", WORDPIECE_SCORINGS),
        ):
            if f"{key}.{name}" in params:
                value = _first(params[f"{key}.{name}"])
                if value not in allowed:
                    raise PipelineConfigError(f"The link's {name} {value!r} is not one of: {', '.join(allowed)}.")
                setattr(entry, attribute, value)
        if f"{key}.min_frequency" in params:
            entry.min_frequency = max(0, _decode("int", _first(params[f"{key}.min_frequency"]), f"{key}.min_frequency"))
        if f"{key}.vocab" in params:
            entry.vocab = _checked_vocab(_decode("int", _first(params[f"{key}.vocab"]), f"{key}.vocab"))
        entries.append(entry)
    return entries


def _checked_vocab(vocab: int) -> int:
    check_vocab_size(vocab)
    check_vocab_request(vocab)
    return vocab


def _hub_name(name: str) -> bool:
    """Whether ``name`` is a Hub choice with a well-formed repository id (``hub:owner/name``)."""
    from tokviz.errors import TokvizError
    from tokviz.hub import parse_repo_id

    if not name.startswith("hub:"):
        return False
    try:
        parse_repo_id(name.removeprefix("hub:"))
    except TokvizError:
        return False
    return True


def _tokenizer_choice(choice: str) -> str:
    """A page's tokenizer choice from a link (Pipeline, Inspect, Audit): the session's, an upload, a preset or a catalog entry."""
    from tokviz.catalog import CHOICE_PREFIX, ENTRIES
    from tokviz.workspace import SESSION_TOKENIZER, UPLOADED_TOKENIZER

    if choice.startswith("hub:") and choice != "hub:":
        from tokviz.hub import parse_repo_id

        parse_repo_id(choice.removeprefix("hub:"))  # a HubError (a TokvizError) names a bad id
        return choice
    if choice not in (SESSION_TOKENIZER, UPLOADED_TOKENIZER, "hub:", *PRESETS, *(CHOICE_PREFIX + name for name in ENTRIES)):
        raise PipelineConfigError(f"The link names the tokenizer {choice!r}; it can name the session's, an upload, "
                                  "a preset, a catalog entry (catalog:Llama 3) or a Hub repository (hub:owner/name).")
    return choice


def to_link(workspace: Workspace) -> dict[str, str]:
    """The workspace as query parameters (see the module docstring)."""
    out: dict[str, str] = {}
    corpus = workspace.corpus
    if corpus.source != "sample":
        out["corpus"] = corpus.source
    train = workspace.train
    out.update(to_query_params(train.config, train.target_vocab, preset=train.preset if train.preset != "custom" else None))
    if train.slider is not None:
        out["size"] = str(train.slider)
    if (text := _text_param(train.test_text)) is not None:
        out["text"] = text
    if train.tab is not None:
        out["tab"] = train.tab
    compare = workspace.compare
    out.update(_compare_params(compare.entries))
    if (text := _text_param(compare.text)) is not None:
        out["ctext"] = text
    if compare.catalog:
        out["ccat"] = ",".join(compare.catalog)
    if compare.eval_source != "held-out":
        out["ceval"] = compare.eval_source
        if (text := _text_param(compare.eval_text)) is not None and text:
            out["cevaltext"] = text
    for prefix, state in (("p", workspace.pipeline), ("i", workspace.inspect)):
        if state.tokenizer != "session":
            out[f"{prefix}tok"] = state.tokenizer
        if (text := _text_param(state.text)) is not None:
            out[f"{prefix}text"] = text
    if workspace.pipeline.pair and (pair := _text_param(workspace.pipeline.pair)) is not None:
        out["ppair"] = pair
    learn, default_learn = workspace.learn, LearnState()
    for name, value, default in (
        ("lesson", learn.lesson, default_learn.lesson),
        ("lstep", learn.step, default_learn.step),
        ("lpredict", learn.predict, default_learn.predict),
        ("lvocab", learn.unigram_vocab, default_learn.unigram_vocab),
        ("lbytes", learn.byte_text, default_learn.byte_text),
    ):
        if value != default:
            out[name] = _encode("bool", value) if isinstance(value, bool) else str(value)
    for lesson, merges in learn.merges.items():
        if merges != default_learn.merges.get(lesson):
            out[f"lmerges.{lesson}"] = str(merges)
    if learn.word_counts is not None:
        out["lwords"] = _format_counts(learn.word_counts)
    if (sentence := _text_param(learn.sentence)) is not None:
        out["lsentence"] = sentence
    out.update(_audit_params(workspace.audit))
    if workspace.presentation:
        out["present"] = "true"
    return out


def _audit_params(audit: Any) -> dict[str, str]:
    """The Audit page's choices (``atok``, ``atexts``, ``asize``, ``athreshold``, ``asearch``); defaults left out."""
    from tokviz.workspace import AuditState

    default, out = AuditState(), {}
    if audit.tokenizer != default.tokenizer:
        out["atok"] = audit.tokenizer
    if audit.texts != default.texts:
        out["atexts"] = audit.texts
    if audit.size is not None:
        out["asize"] = str(audit.size)
    if audit.threshold != default.threshold:
        out["athreshold"] = repr(audit.threshold)
    if audit.search and (search := _text_param(audit.search)) is not None:
        out["asearch"] = search
    return out


#: Most parameters a link may hold. The codec writes far fewer (32 components of a few options each in
#: two sequences, ~30 trainer fields, 4 Compare slots, the page texts: under 400); a longer query is not a
#: tokviz link, and reading it would only cost the server time.
MAX_LINK_PARAMS = 500

#: How the note on a corpus the link cannot carry starts (information, not a part the link dropped).
_CORPUS_NOT_CARRIED = "Corpus: this link was made with a"

#: How many dropped parameter names the note lists before it counts the rest.
_NAMED_IN_NOTE = 12


class _ReadKeys(Mapping[str, Any]):
    """The link's parameters, remembering which ones were read: the rest were dropped, and the note names them."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._params = params
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        value = self._params[key]
        self.read.add(key)
        return value

    def __iter__(self) -> Any:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: object) -> bool:
        return key in self._params


def _named(names: list[str]) -> str:
    """``['a', 'b']`` -> ``"'a', 'b'"``; past :data:`_NAMED_IN_NOTE` names, the rest are counted.

    >>> _named([f"x{i}" for i in range(14)])
    "'x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9', 'x10', 'x11' and 2 more"
    """
    shown = ", ".join(repr(name[:40]) for name in names[:_NAMED_IN_NOTE])
    return shown + (f" and {len(names) - _NAMED_IN_NOTE:,} more" if len(names) > _NAMED_IN_NOTE else "")


def from_link(params: Mapping[str, Any]) -> tuple[Workspace, list[str]]:
    """The workspace a link describes, and its notes: what the link could not carry (the corpus), and ONE note
    naming everything it dropped -- each part it could not read (that part opens at its default) and every
    parameter it does not know.

    >>> workspace, notes = from_link({"preset": "nope", "lesson": "wordpiece", "colour": "red"})
    >>> workspace.train.preset, workspace.learn.lesson
    ('gpt2', 'wordpiece')
    >>> notes
    ["This link was not used in full. Train settings: The link names the preset 'nope'; presets are: gpt2, bert, t5, char_bpe, sp_unigram, sp_bpe. Parameters left out (not part of a tokviz link, or of a part above): 'colour'."]
    >>> from_link({f"k{i}": "1" for i in range(MAX_LINK_PARAMS + 1)})[1]
    ['This link has 501 parameters; a tokviz link holds at most 500, so none of it was used: the defaults are shown.']
    """
    if len(params) > MAX_LINK_PARAMS:
        return Workspace(), [f"This link has {len(params):,} parameters; a tokviz link holds at most {MAX_LINK_PARAMS:,}, "
                             "so none of it was used: the defaults are shown."]
    raw_params = params
    params = _ReadKeys(params)
    workspace, notes = _read_link(params)
    information = (_CORPUS_NOT_CARRIED, "Filled in")  # notes that report, not drops
    carried = [note for note in notes if note.startswith(information)]
    dropped = [note for note in notes if not note.startswith(information)]
    notes = carried
    unread = [key for key in raw_params if key not in params.read]
    if unread:
        dropped.append(f"Parameters left out (not part of a tokviz link, or of a part above): {_named(unread)}.")
    if dropped:
        notes.append("This link was not used in full. " + " ".join(dropped))
    return workspace, notes


def _read_link(params: Mapping[str, Any]) -> tuple[Workspace, list[str]]:
    """:func:`from_link`'s reading, one section at a time; a section that fails keeps its defaults and adds a note."""
    from tokviz.lessons import LESSONS

    workspace, notes = Workspace(), []

    def section(name: str, read: Any) -> None:
        try:
            read()
        except TokvizError as error:
            notes.append(f"{name}: {error}")

    def read_corpus() -> None:
        source = _first(params.get("corpus", "sample"))
        if source not in ("sample", "pasted", "upload"):
            raise PipelineConfigError(f"The link names the corpus {source!r}; it can name only the built-in sample.")
        if source != "sample":
            notes.append(
                _CORPUS_NOT_CARRIED + " "
                + ("pasted" if source == "pasted" else "uploaded")
                + " corpus, which links do not carry; the built-in sample is shown until you paste or upload it again."
            )

    def read_train() -> None:
        if not any(key in params for key in ("preset", "vocab", "model", "p", "p0", "n0")):
            return  # the link says nothing of Train: its defaults
        config, vocab = from_query_params(params, default_vocab=workspace.train.target_vocab)
        if config.model == "Unigram" and "unk_token" not in params and _first(params.get("preset", "custom")) == "custom":
            notes.append(form_tokens_for_model("Unigram", "", "")[2].replace("(change them below)", "(the link named none; change them in Custom)"))
        try:
            check_vocab_request(vocab)
        except TokvizError as error:  # above the server's limit: open at the limit, and say so
            notes.append(f"Train settings: {error}")
            vocab = MAX_VOCAB_SIZE
        state = TrainState(preset=preset_key(config) or "custom", config=config, target_vocab=vocab)
        if "size" in params:
            state.slider = max(1, _decode("int", _first(params["size"]), "size"))
        if "text" in params:
            state.test_text = _first(params["text"])[:MAX_LINK_TEXT]
        workspace.train = state

    def read_train_tab() -> None:  # apart from the pipeline: a tab alone (no preset in the link) is still a choice
        if "tab" in params:
            tab = _first(params["tab"])
            if len(tab) > 60:
                raise PipelineConfigError(f"The link's result tab {tab[:60]!r}… is not a tab of the Train page.")
            workspace.train.tab = tab

    def read_compare() -> None:
        if "cmp" in params:
            workspace.compare.entries = _read_compare(params)
        if "ctext" in params:
            workspace.compare.text = _first(params["ctext"])[:MAX_LINK_TEXT]
        if "ccat" in params:
            from tokviz.catalog import ENTRIES

            names = [name for name in _first(params["ccat"]).split(",") if name]
            unknown = [name for name in names if name not in ENTRIES and name != "session" and not _hub_name(name)]
            workspace.compare.catalog = [name for name in names if name not in unknown][:8]
            if unknown:
                notes.append(f"Compare settings: the catalog has no {', '.join(map(repr, unknown))}; it has {', '.join(ENTRIES)}.")
        source = _first(params.get("ceval", "held-out"))
        if source not in ("held-out", "paste"):
            raise PipelineConfigError(f"The link's evaluation source {source!r} is not 'held-out' or 'paste'.")
        workspace.compare.eval_source = source
        workspace.compare.eval_text = _first(params.get("cevaltext", ""))[:MAX_LINK_TEXT]

    def read_page(prefix: str, state: Any) -> None:
        from tokviz.workspace import SESSION_TOKENIZER

        state.tokenizer = _tokenizer_choice(_first(params.get(f"{prefix}tok", SESSION_TOKENIZER)))
        if f"{prefix}text" in params:
            state.text = _first(params[f"{prefix}text"])[:MAX_LINK_TEXT]
        if prefix == "p" and "ppair" in params:
            state.pair = _first(params["ppair"])[:MAX_LINK_TEXT]

    def read_learn() -> None:
        learn = LearnState()
        lesson = _first(params.get("lesson", learn.lesson))
        if lesson not in LESSONS:
            raise PipelineConfigError(f"The link names the lesson {lesson!r}; lessons are: {', '.join(LESSONS)}.")
        learn.lesson = lesson
        learn.step = max(1, _decode("int", _first(params.get("lstep", "1")), "lstep"))
        learn.predict = _decode("bool", _first(params.get("lpredict", "false")), "lpredict")
        learn.unigram_vocab = min(max(_decode("int", _first(params.get("lvocab", str(learn.unigram_vocab))), "lvocab"), 2), 40)
        learn.byte_text = _first(params.get("lbytes", learn.byte_text))[:40]
        for name in learn.merges:
            if f"lmerges.{name}" in params:
                learn.merges[name] = min(max(_decode("int", _first(params[f"lmerges.{name}"]), f"lmerges.{name}"), 1), 30)
        if "lwords" in params:
            learn.word_counts = _parse_counts(_first(params["lwords"]))
        if "lsentence" in params:
            learn.sentence = _first(params["lsentence"])[:120]
        workspace.learn = learn

    def read_audit() -> None:
        from tokviz.workspace import AUDIT_TEXTS, SESSION_TOKENIZER

        workspace.audit.tokenizer = _tokenizer_choice(_first(params.get("atok", SESSION_TOKENIZER)))
        texts = _first(params.get("atexts", "corpus"))
        if texts not in AUDIT_TEXTS:
            raise PipelineConfigError(f"The link names the texts {texts!r}; they can be: {', '.join(AUDIT_TEXTS)}.")
        workspace.audit.texts = texts
        if "asize" in params:
            workspace.audit.size = max(1, _decode("int", _first(params["asize"]), "asize"))
        if "athreshold" in params:
            threshold = _decode("float", _first(params["athreshold"]), "athreshold")
            if not 0.0 <= threshold <= 1.0:
                raise PipelineConfigError(f"The link's residue threshold {threshold} is not between 0 and 1.")
            workspace.audit.threshold = threshold
        workspace.audit.search = _first(params.get("asearch", ""))[:MAX_LINK_TEXT]

    section("Corpus", read_corpus)
    section("Train settings", read_train)
    section("Train settings", read_train_tab)
    section("Compare settings", read_compare)
    section("Pipeline settings", lambda: read_page("p", workspace.pipeline))
    section("Inspect settings", lambda: read_page("i", workspace.inspect))
    section("Learn settings", read_learn)
    section("Audit settings", read_audit)
    workspace.presentation = _first(params.get("present", "false")) == "true"
    return workspace, notes


__all__ = ["MAX_LINK_COMPONENTS", "MAX_LINK_PARAMS", "MAX_LINK_TEXT", "NOT_CARRIED", "from_link", "from_query_params", "to_link", "to_query_params"]
