"""A tokenizer pipeline described as data: what to build, before anything is built.

A :class:`PipelineConfig` names the normalizers (in order, with their options), the
pre-tokenizers, the model and every trainer option, using Hugging Face's names. It is a
frozen, hashable dataclass, so the app can cache a trained tokenizer on
``(corpus hash, config)``; ``tokviz.links`` writes it into a link and reads it back.

>>> config = PipelineConfig(normalizers=(component("NFD"), component("Lowercase")), model="WordPiece",
...                         special_tokens=("[UNK]",), unk_token="[UNK]", continuing_subword_prefix="##")
>>> [spec.label() for spec in config.normalizers], config.model
(['NFD', 'Lowercase'], 'WordPiece')

From a config, :func:`build_tokenizer` makes the untrained ``tokviz.Tokenizer`` (normalizer,
pre-tokenizer, model with its options, decoder), :func:`build_trainer` the matching trainer,
and :func:`tokenizer_with_model` the finished tokenizer around a trained model (special
tokens added and the post-processor wired to their ids, as HF's ``Tokenizer.train`` does).

``model="SentencePiece"`` is the other kind of pipeline: trained by :mod:`tokviz.sentencepiece`
straight from the corpus's raw lines (no pre-tokenization, whitespace kept as ``▁``) with
sentencepiece's own options (``sp_model_type``, ``character_coverage``, ``byte_fallback``,
``normalization_rule``, the special pieces' ids, ``user_defined_symbols``). Its text side is
fixed by those options, so :func:`applicable` fills it in (an approximation of the rule by HF
components, used only to count and show the corpus's words; the tokenizer itself uses the
rule's precompiled charsmap, as HF's ``SpmConverter`` builds it):

>>> config = sentencepiece_config(sp_model_type="bpe", byte_fallback=True)
>>> [spec.type for spec in config.normalizers], config.special_tokens, config.unk_token
(['Nmt', 'NFKC', 'Strip', 'Replace'], ('<unk>', '<s>', '</s>'), '<unk>')

What this leaves out: pair templates beyond the three post-processors BERT, T5 and GPT-2
use, ``Precompiled`` normalizers in the Custom form (they come from SentencePiece rules and
model files), dropout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from tokviz.errors import PipelineConfigError, SpecialTokenError, VocabSizeError


@dataclass(frozen=True, slots=True)
class Param:
    """One option of a component, as the Custom form shows it.

    ``kind`` is ``"bool"``, ``"str"``, ``"int"``, ``"choice"`` (one of ``choices``) or
    ``"optional_bool"`` (``None`` means "decide from the other options", as HF's
    ``BertNormalizer(strip_accents=None)`` does).
    """

    name: str
    kind: str
    default: Any
    choices: tuple[Any, ...] = ()
    help: str = ""


_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")

#: Every normalizer the Custom mode offers, with its options (HF's names and defaults).
NORMALIZERS: dict[str, tuple[Param, ...]] = {
    "NFC": (),
    "NFD": (),
    "NFKC": (),
    "NFKD": (),
    "Lowercase": (),
    "StripAccents": (),
    "Strip": (Param("left", "bool", True), Param("right", "bool", True)),
    "Replace": (
        Param("pattern", "str", "  ", help="text to find (a regular expression when 'regex' is on)"),
        Param("content", "str", " "),
        Param("regex", "bool", False, help="treat the pattern as a regular expression (tokviz.Regex)"),
    ),
    "Prepend": (Param("prepend", "str", "▁"),),
    "BertNormalizer": (
        Param("clean_text", "bool", True),
        Param("handle_chinese_chars", "bool", True),
        Param("strip_accents", "optional_bool", None, help="None: strip accents when lowercasing"),
        Param("lowercase", "bool", True),
    ),
    "Nmt": (),
}

#: Every pre-tokenizer the Custom mode offers, with its options (HF's names and defaults).
PRE_TOKENIZERS: dict[str, tuple[Param, ...]] = {
    "Whitespace": (),
    "WhitespaceSplit": (),
    "BertPreTokenizer": (),
    "ByteLevel": (Param("add_prefix_space", "bool", True), Param("use_regex", "bool", True)),
    "Metaspace": (
        Param("replacement", "str", "▁"),
        Param("prepend_scheme", "choice", "always", ("always", "first", "never")),
        Param("split", "bool", True),
    ),
    "Punctuation": (Param("behavior", "choice", "isolated", _BEHAVIORS),),
    "Digits": (Param("individual_digits", "bool", False),),
    "Split": (
        Param("pattern", "str", " "),
        Param("behavior", "choice", "removed", _BEHAVIORS),
        Param("invert", "bool", False),
        Param("regex", "bool", False, help="treat the pattern as a regular expression (tokviz.Regex)"),
    ),
    "CharDelimiterSplit": (Param("delimiter", "str", " "),),
    "UnicodeScripts": (),
}

MODELS = ("BPE", "WordPiece", "Unigram", "WordLevel", "SentencePiece")
#: sentencepiece's ``--model_type`` values.
SP_MODEL_TYPES = ("unigram", "bpe", "char", "word")
#: sentencepiece's ``--normalization_rule_name`` values.
SP_NORMALIZATION_RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
#: The special pieces sentencepiece places by id (``--unk_id`` ...), with its default spellings.
SP_SPECIAL_PIECES = (("unk_id", "<unk>"), ("bos_id", "<s>"), ("eos_id", "</s>"), ("pad_id", "<pad>"))
TIE_BREAKS = ("hf", "first_seen")
WORDPIECE_SCORINGS = ("likelihood", "frequency")
UNIGRAM_METHODS = ("em", "course")
#: ``none``; ``bert``: ``[CLS] $A [SEP]``; ``t5``: ``$A </s>``; ``byte_level``: GPT-2's offsets processor.
POST_PROCESSORS = ("none", "bert", "t5", "byte_level")


@dataclass(frozen=True, slots=True)
class ComponentSpec:
    """A normalizer or pre-tokenizer by HF name, with every option spelled out (schema order)."""

    type: str
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, name: str) -> Any:
        return dict(self.params)[name]

    def label(self) -> str:
        """``'Replace(pattern=' {2,}', content=' ', regex=True)'``; options left at their default are omitted."""
        schema = {**NORMALIZERS, **PRE_TOKENIZERS}.get(self.type, ())
        defaults = {param.name: param.default for param in schema}
        shown = [f"{name}={value!r}" for name, value in self.params if defaults.get(name, object()) != value]
        return f"{self.type}({', '.join(shown)})" if shown else self.type


def _check_value(owner: str, param: Param, value: Any) -> Any:
    """Validate one option; return it in canonical form (e.g. ints for whole-number floats)."""
    ok = {
        "bool": isinstance(value, bool),
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "choice": value in param.choices,
        "optional_bool": value is None or isinstance(value, bool),
    }[param.kind]
    if not ok:
        wanted = {"choice": f"one of {', '.join(map(str, param.choices))}", "optional_bool": "true, false or None"}
        raise PipelineConfigError(
            f"{owner}: option {param.name!r} must be {wanted.get(param.kind, 'a ' + param.kind)}, not {value!r}."
        )
    return value


def component(type: str, **params: Any) -> ComponentSpec:
    """A validated :class:`ComponentSpec`; unspecified options take HF's defaults.

    >>> component("Strip", left=False)
    ComponentSpec(type='Strip', params=(('left', False), ('right', True)))
    >>> component("Lowercas")
    Traceback (most recent call last):
    ...
    tokviz.errors.PipelineConfigError: Unknown component 'Lowercas'; tokviz offers: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, BertNormalizer, Nmt, Whitespace, WhitespaceSplit, BertPreTokenizer, ByteLevel, Metaspace, Punctuation, Digits, Split, CharDelimiterSplit, UnicodeScripts.
    """
    schema = NORMALIZERS.get(type, PRE_TOKENIZERS.get(type))
    if schema is None:
        raise PipelineConfigError(
            f"Unknown component {type!r}; tokviz offers: {', '.join([*NORMALIZERS, *PRE_TOKENIZERS])}."
        )
    known = {param.name for param in schema}
    unknown = sorted(set(params) - known)
    if unknown:
        raise PipelineConfigError(
            f"{type} has no option {unknown[0]!r}; its options are: {', '.join(sorted(known)) or 'none'}."
        )
    values = tuple((param.name, _check_value(type, param, params.get(param.name, param.default))) for param in schema)
    return ComponentSpec(type, values)


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Everything needed to build and train one tokenizer, by HF's names.

    Trainer options not relevant to ``model`` are ignored when building (e.g. ``scoring``
    for BPE) but still part of the value, so a user switching models back and forth keeps
    what they typed.
    """

    normalizers: tuple[ComponentSpec, ...] = ()
    pre_tokenizers: tuple[ComponentSpec, ...] = (ComponentSpec("Whitespace"),)
    model: str = "BPE"
    special_tokens: tuple[str, ...] = ()
    unk_token: str | None = None
    min_frequency: int = 0
    limit_alphabet: int | None = None
    byte_alphabet: bool = False  # initial_alphabet = the 256 ByteLevel symbols (GPT-2)
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    max_token_length: int | None = None
    tie_break: str = "hf"
    scoring: str = "frequency"  # what HF's WordPieceTrainer does; "likelihood" is the HF course's
    unigram_method: str = "em"
    shrinking_factor: float = 0.75
    max_piece_length: int = 16
    n_sub_iterations: int = 2
    post_processor: str = "none"
    # SentencePiece (model="SentencePiece"), by sentencepiece's option names and defaults
    sp_model_type: str = "unigram"
    character_coverage: float = 0.9995
    byte_fallback: bool = False
    normalization_rule: str = "nmt_nfkc"
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    user_defined_symbols: tuple[str, ...] = ()
    max_sentence_length: int = 4192

    def __post_init__(self) -> None:
        _require(self.model in MODELS, f"Unknown model {self.model!r}; choose one of {', '.join(MODELS)}.")
        _require(self.tie_break in TIE_BREAKS, f"Unknown tie-break {self.tie_break!r}; choose 'hf' or 'first_seen'.")
        _require(self.scoring in WORDPIECE_SCORINGS, f"Unknown WordPiece scoring {self.scoring!r}; choose 'likelihood' or 'frequency'.")
        _require(self.unigram_method in UNIGRAM_METHODS, f"Unknown Unigram method {self.unigram_method!r}; choose 'em' or 'course'.")
        _require(self.post_processor in POST_PROCESSORS, f"Unknown post-processor {self.post_processor!r}; choose one of {', '.join(POST_PROCESSORS)}.")
        for spec in self.normalizers:
            _require(spec.type in NORMALIZERS, f"{spec.type!r} is not a normalizer; normalizers are: {', '.join(NORMALIZERS)}.")
        for spec in self.pre_tokenizers:
            _require(spec.type in PRE_TOKENIZERS, f"{spec.type!r} is not a pre-tokenizer; pre-tokenizers are: {', '.join(PRE_TOKENIZERS)}.")
        for name in ("min_frequency", "max_piece_length", "n_sub_iterations"):
            value = getattr(self, name)
            _require(isinstance(value, int) and not isinstance(value, bool) and value >= 0, f"{name} must be a whole number of 0 or more, not {value!r}.")
        for name in ("limit_alphabet", "max_token_length"):
            value = getattr(self, name)
            _require(value is None or (isinstance(value, int) and value >= 1), f"{name} must be empty or a whole number of 1 or more, not {value!r}.")
        _require(0.0 < float(self.shrinking_factor) < 1.0, f"shrinking_factor must lie strictly between 0 and 1, not {self.shrinking_factor!r}.")
        seen: set[str] = set()
        for token in self.special_tokens:
            if not token:
                raise SpecialTokenError("A special token cannot be empty.")
            if token in seen:
                raise SpecialTokenError(f"The special token {token!r} is listed twice.")
            seen.add(token)
        if self.unk_token is not None and self.unk_token not in seen:
            raise SpecialTokenError(
                f"The unknown token {self.unk_token!r} must also be a special token, so that it is in the vocabulary."
            )
        if self.model == "WordPiece" and self.unk_token is None:
            raise SpecialTokenError("WordPiece needs an unknown token (e.g. [UNK]) for words it cannot spell.")
        if self.model == "WordLevel" and self.unk_token is None:
            raise SpecialTokenError("WordLevel needs an unknown token (e.g. [UNK]) for words outside its vocabulary.")
        if self.model == "SentencePiece":
            _check_sentencepiece(self)
        needed = {"bert": ("[CLS]", "[SEP]"), "t5": ("</s>",)}.get(self.post_processor, ())
        missing = [token for token in needed if token not in seen]
        _require(not missing, f"The {self.post_processor} post-processor needs the special tokens {', '.join(missing)}.")

    def with_model(self, model: str) -> "PipelineConfig":
        return replace(self, model=model)


#: The trainer fields each model uses; the others are ignored when it is built and trained.
MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "BPE": ("min_frequency", "limit_alphabet", "byte_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length", "tie_break"),
    "WordPiece": ("min_frequency", "limit_alphabet", "byte_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "tie_break", "scoring"),
    "Unigram": ("byte_alphabet", "unigram_method", "shrinking_factor", "max_piece_length", "n_sub_iterations"),
    "WordLevel": ("min_frequency",),
    "SentencePiece": ("sp_model_type", "character_coverage", "byte_fallback", "normalization_rule", "unk_id", "bos_id", "eos_id",
                      "pad_id", "user_defined_symbols", "max_sentence_length"),
}
#: Fields every model uses.
COMMON_FIELDS = ("normalizers", "pre_tokenizers", "model", "special_tokens", "unk_token", "post_processor")


def applicable(config: PipelineConfig) -> PipelineConfig:
    """``config`` with every trainer option its model does not use set back to its default.

    Two configs that train the same tokenizer become equal (one cache entry, one link):

    >>> applicable(PipelineConfig(model="Unigram", end_of_word_suffix="</w>")) == PipelineConfig(model="Unigram")
    True
    """
    defaults = PipelineConfig()
    used = set(COMMON_FIELDS) | set(MODEL_FIELDS[config.model])
    resets = {field_info.name: getattr(defaults, field_info.name) for field_info in fields(PipelineConfig) if field_info.name not in used}
    if config.model == "SentencePiece":
        resets.update(sentencepiece_text_side(config.normalization_rule), special_tokens=sentencepiece_special_pieces(config),
                      unk_token="<unk>", post_processor="none")
    return replace(config, **resets)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise PipelineConfigError(message)


# ---------------------------------------------------------------------------------------
# SentencePiece pipelines


def _is_whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_sentencepiece(config: PipelineConfig) -> None:
    """sentencepiece's own checks of the options the app offers, each in a sentence."""
    _require(config.sp_model_type in SP_MODEL_TYPES,
             f"Unknown SentencePiece model type {config.sp_model_type!r}; choose one of {', '.join(SP_MODEL_TYPES)}.")
    _require(config.normalization_rule in SP_NORMALIZATION_RULES,
             f"Unknown normalization rule {config.normalization_rule!r}; choose one of {', '.join(SP_NORMALIZATION_RULES)}.")
    coverage = config.character_coverage
    _require(isinstance(coverage, (int, float)) and not isinstance(coverage, bool) and 0.98 <= float(coverage) <= 1.0,
             f"character_coverage must lie between 0.98 and 1.0 (sentencepiece's range), not {coverage!r}.")
    _require(isinstance(config.byte_fallback, bool), f"byte_fallback must be true or false, not {config.byte_fallback!r}.")
    length = config.max_sentence_length
    _require(_is_whole_number(length) and 10 <= length <= 1_073_741_824,
             f"max_sentence_length must be a whole number of bytes between 10 and 1073741824, not {length!r}.")
    for name, _ in SP_SPECIAL_PIECES:
        value = getattr(config, name)
        _require(_is_whole_number(value) and value >= -1, f"{name} must be a whole number, or -1 for none, not {value!r}.")
    _require(config.unk_id >= 0, "unk_id cannot be -1: SentencePiece always needs the unknown piece <unk>.")
    ids = [getattr(config, name) for name, _ in SP_SPECIAL_PIECES if getattr(config, name) >= 0]
    taken = sorted({piece_id for piece_id in ids if ids.count(piece_id) > 1})
    _require(not taken, f"Two special pieces have the id {taken[0] if taken else ''}: unk_id, bos_id, eos_id and pad_id must differ.")
    symbols = config.user_defined_symbols
    _require(isinstance(symbols, tuple) and all(isinstance(symbol, str) for symbol in symbols),
             f"user_defined_symbols must be a list of texts, not {symbols!r}.")
    specials = {piece for _, piece in SP_SPECIAL_PIECES}
    seen: set[str] = set()
    for symbol in symbols:
        if not symbol or any(char.isspace() for char in symbol):
            raise SpecialTokenError(f"A user-defined symbol cannot be empty or hold whitespace, as {symbol!r} does.")
        if symbol in specials:
            raise SpecialTokenError(f"{symbol} is already a special piece; user-defined symbols must differ from <unk>, <s>, </s>, <pad>.")
        if symbol in seen:
            raise SpecialTokenError(f"The user-defined symbol {symbol!r} is listed twice.")
        seen.add(symbol)
    # The special pieces sit at the start of the vocabulary (as in every released model), so every
    # vocab size the slider offers keeps them.
    front = len(ids) + len(symbols) + (256 if config.byte_fallback else 0)
    for name, _ in SP_SPECIAL_PIECES:
        value = getattr(config, name)
        _require(value < front, f"{name}={value} is too large: the {front} special, user-defined and byte pieces take ids "
                                f"0 to {front - 1}, and the special pieces must be among them.")


def sentencepiece_special_pieces(config: PipelineConfig) -> tuple[str, ...]:
    """The special pieces of a SentencePiece config by id, then its user-defined symbols.

    >>> sentencepiece_special_pieces(PipelineConfig(model="SentencePiece", pad_id=0, eos_id=1, unk_id=2, bos_id=-1))
    ('<pad>', '</s>', '<unk>')
    """
    placed = sorted((getattr(config, name), piece) for name, piece in SP_SPECIAL_PIECES if getattr(config, name) >= 0)
    return tuple(piece for _, piece in placed) + tuple(config.user_defined_symbols)


def sentencepiece_text_side(rule: str) -> dict[str, tuple[ComponentSpec, ...]]:
    """HF components standing in for a normalization rule, and ``Metaspace``: what the app counts words with.

    Only the corpus's word table and its numbers use them; training and the tokenizer use the rule itself.
    """
    normalizers: list[ComponentSpec] = []
    if rule.startswith("nmt_"):
        normalizers.append(component("Nmt"))
    if rule != "identity":
        normalizers.append(component("NFKC"))
    if rule.endswith("_cf"):
        normalizers.append(component("Lowercase"))
    normalizers += [component("Strip"), component("Replace", pattern=" {2,}", content=" ", regex=True)]
    return {"normalizers": tuple(normalizers), "pre_tokenizers": (component("Metaspace"),)}


def sentencepiece_config(**options: Any) -> PipelineConfig:
    """A SentencePiece pipeline with ``options`` (the others at sentencepiece's defaults), text side filled in."""
    return applicable(PipelineConfig(model="SentencePiece", **options))


def sentencepiece_options(config: PipelineConfig, vocab_size: int) -> dict[str, Any]:
    """The options ``tokviz.sentencepiece`` (and the ``sentencepiece`` package) train the config with.

    ``hard_vocab_limit`` is off, so a corpus too small for the target stops below it (as the other
    trainers do) instead of failing.

    >>> sentencepiece_options(sentencepiece_config(sp_model_type="bpe"), 5000)["model_type"]
    'bpe'
    """
    check_vocab_size(vocab_size)
    options: dict[str, Any] = {
        "vocab_size": vocab_size, "model_type": config.sp_model_type, "character_coverage": float(config.character_coverage),
        "byte_fallback": config.byte_fallback, "normalization_rule_name": config.normalization_rule,
        "unk_id": config.unk_id, "bos_id": config.bos_id, "eos_id": config.eos_id, "pad_id": config.pad_id,
        "max_sentence_length": config.max_sentence_length, "hard_vocab_limit": False,
    }
    if config.user_defined_symbols:
        options["user_defined_symbols"] = list(config.user_defined_symbols)
    return options


def sentencepiece_tokenizer(config: PipelineConfig, model: Any) -> Any:
    """The tokviz tokenizer of a SentencePiece config around ``model``: the one conversion of a ``.model``
    (``tokviz.sentencepiece.convert.assemble_tokenizer``) with the normalizer spec the trainer writes for
    the config (its rule's charsmap, whitespace removed, escaped, a dummy prefix), so it encodes as
    sentencepiece does, runs of spaces included; bos/eos/pad as special added tokens, user-defined
    symbols cut out of the normalized text (as sentencepiece finds them)."""
    from tokviz.sentencepiece.convert import assemble_tokenizer
    from tokviz.sentencepiece.model_proto import NormalizerSpec
    from tokviz.sentencepiece.normalizer import charsmap_for_rule

    rule = config.normalization_rule
    spec = NormalizerSpec(name=rule, precompiled_charsmap=charsmap_for_rule(rule))
    # every "▁" starts a piece (the trainer splits by whitespace): words may be cut there, as the .model's conversion does
    split = not any("\u2581" in piece[1:] for piece in model.get_vocab())
    controls = [piece for name, piece in SP_SPECIAL_PIECES[1:] if getattr(config, name) >= 0]
    return assemble_tokenizer(model, spec, byte_fallback=config.byte_fallback, controls=controls,
                              user_defined=config.user_defined_symbols, split_at_spaces=split)


# ---------------------------------------------------------------------------------------
# Building tokviz objects


def _build_component(module: Any, spec: ComponentSpec) -> Any:
    from tokviz.patterns import Regex

    kwargs = dict(spec.params)
    if "regex" in kwargs:
        use_regex = kwargs.pop("regex")
        if use_regex:
            kwargs["pattern"] = Regex(kwargs["pattern"])  # raises PatternError naming the pattern
    if spec.type == "Split" and not kwargs.get("pattern"):
        raise PipelineConfigError("The Split pre-tokenizer needs a non-empty pattern.")
    if spec.type == "CharDelimiterSplit" and len(kwargs.get("delimiter", "")) != 1:
        raise PipelineConfigError("CharDelimiterSplit needs exactly one delimiter character.")
    if spec.type == "Replace" and not kwargs.get("pattern"):
        raise PipelineConfigError("The Replace normalizer needs a non-empty pattern.")
    return getattr(module, spec.type)(**kwargs)


def build_normalizer(config: PipelineConfig) -> Any:
    """The config's normalizer: ``None``, one component, or a ``normalizers.Sequence``."""
    from tokviz import normalizers

    built = [_build_component(normalizers, spec) for spec in config.normalizers]
    if not built:
        return None
    return built[0] if len(built) == 1 else normalizers.Sequence(built)


def build_pre_tokenizer(config: PipelineConfig) -> Any:
    """The config's pre-tokenizer: ``None``, one component, or a ``pre_tokenizers.Sequence``."""
    from tokviz import pre_tokenizers

    built = [_build_component(pre_tokenizers, spec) for spec in config.pre_tokenizers]
    if not built:
        return None
    return built[0] if len(built) == 1 else pre_tokenizers.Sequence(built)


def build_decoder(config: PipelineConfig) -> Any:
    """The decoder that undoes the pipeline's markers (as HF's presets pair them), or ``None``."""
    from tokviz import decoders

    types = [spec.type for spec in config.pre_tokenizers]
    if "ByteLevel" in types:
        return decoders.ByteLevel()
    if "Metaspace" in types:
        metaspace = config.pre_tokenizers[types.index("Metaspace")]
        return decoders.Metaspace(replacement=metaspace.param("replacement"), prepend_scheme=metaspace.param("prepend_scheme"), split=metaspace.param("split"))
    if config.model == "WordPiece":
        return decoders.WordPiece(prefix=config.continuing_subword_prefix or "##")
    if config.model == "BPE" and config.end_of_word_suffix:
        return decoders.BPEDecoder(suffix=config.end_of_word_suffix)
    return None


def build_model(config: PipelineConfig) -> Any:
    """The untrained model with the options the trained one keeps (unk token, prefix, suffix)."""
    from tokviz import models

    if config.model == "BPE":
        return models.BPE(
            unk_token=config.unk_token,
            continuing_subword_prefix=config.continuing_subword_prefix,
            end_of_word_suffix=config.end_of_word_suffix,
        )
    if config.model == "WordPiece":
        return models.WordPiece(
            vocab={config.unk_token: 0}, unk_token=config.unk_token, continuing_subword_prefix=config.continuing_subword_prefix or "##"
        )
    if config.model in ("Unigram", "SentencePiece"):
        return models.Unigram()
    return models.WordLevel(vocab={config.unk_token: 0} if config.unk_token else {}, unk_token=config.unk_token or "[UNK]")


def build_tokenizer(config: PipelineConfig) -> Any:
    """The untrained ``tokviz.Tokenizer`` the config describes (train it with :func:`build_trainer`)."""
    from tokviz.tokenizer import Tokenizer

    if config.model == "SentencePiece":
        return sentencepiece_tokenizer(config, build_model(config))
    tokenizer = Tokenizer(build_model(config))
    tokenizer.normalizer = build_normalizer(config)
    tokenizer.pre_tokenizer = build_pre_tokenizer(config)
    tokenizer.decoder = build_decoder(config)
    return tokenizer


def check_vocab_size(vocab_size: Any) -> int:
    """A usable target vocab size, or :class:`VocabSizeError` in a sentence.

    >>> check_vocab_size(300)
    300
    >>> check_vocab_size(0)
    Traceback (most recent call last):
    ...
    tokviz.errors.VocabSizeError: The vocab size must be a whole number of 1 or more, not 0.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise VocabSizeError(f"The vocab size must be a whole number of 1 or more, not {vocab_size!r}.")
    return vocab_size


def trainer_options(config: PipelineConfig, vocab_size: int) -> dict[str, Any]:
    """The keyword arguments of the config's trainer, by HF's names (tokviz extras included).

    >>> trainer_options(PipelineConfig(model="WordLevel", special_tokens=("<unk>",), unk_token="<unk>"), 50)
    {'vocab_size': 50, 'min_frequency': 0, 'special_tokens': ['<unk>'], 'show_progress': False}
    """
    check_vocab_size(vocab_size)
    special_tokens = list(config.special_tokens)
    if config.model == "WordLevel":
        return {"vocab_size": vocab_size, "min_frequency": config.min_frequency, "special_tokens": special_tokens, "show_progress": False}
    initial_alphabet: list[str] = []
    if config.byte_alphabet:
        from tokviz.byte_level import BYTES_TO_UNICODE

        initial_alphabet = [BYTES_TO_UNICODE[byte] for byte in range(256)]
    if config.model == "Unigram":
        return {
            "vocab_size": vocab_size,
            "show_progress": False,
            "special_tokens": special_tokens,
            "initial_alphabet": initial_alphabet,
            "shrinking_factor": float(config.shrinking_factor),
            "unk_token": config.unk_token,
            "max_piece_length": config.max_piece_length,
            "n_sub_iterations": config.n_sub_iterations,
            "method": config.unigram_method,
        }
    options: dict[str, Any] = {
        "vocab_size": vocab_size,
        "min_frequency": config.min_frequency,
        "show_progress": False,
        "special_tokens": special_tokens,
        "limit_alphabet": config.limit_alphabet,
        "initial_alphabet": initial_alphabet,
        "continuing_subword_prefix": config.continuing_subword_prefix,
        "end_of_word_suffix": config.end_of_word_suffix,
    }
    if config.model == "BPE":
        options["max_token_length"] = config.max_token_length
    else:
        options["continuing_subword_prefix"] = config.continuing_subword_prefix or "##"
        options["scoring"] = config.scoring
    options["tie_break"] = config.tie_break
    return options


def build_trainer(config: PipelineConfig, vocab_size: int) -> Any:
    """The ``tokviz.trainers`` trainer for the config's model, with every option set."""
    from tokviz import trainers

    if config.model == "SentencePiece":
        raise PipelineConfigError("A SentencePiece pipeline trains through tokviz.sentencepiece (tokviz.training.run_training), not a tokviz trainer.")
    name = {"BPE": "BpeTrainer", "WordPiece": "WordPieceTrainer", "Unigram": "UnigramTrainer", "WordLevel": "WordLevelTrainer"}[config.model]
    return getattr(trainers, name)(**trainer_options(config, vocab_size))


def build_post_processor(config: PipelineConfig, token_to_id: Any) -> Any:
    """The post-processor, wired to the special tokens' ids in the trained vocabulary."""
    from tokviz import processors

    if config.post_processor == "byte_level":
        return processors.ByteLevel(trim_offsets=False)
    if config.post_processor == "none":
        return None
    ids = {token: token_to_id(token) for token in config.special_tokens}
    if config.post_processor == "bert":
        return processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]
        )
    return processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", ids["</s>"])])


def configured_model(config: PipelineConfig, model: Any) -> Any:
    """``model`` with the config's unknown token (BPE, WordPiece, WordLevel).

    Trainers build models from word counts and do not know the unknown token; HF keeps the
    one the untrained model had (``Tokenizer(BPE(unk_token="<unk>")).train(...)``): so do we.
    Unigram trainers take ``unk_token`` themselves.
    """
    if config.unk_token is not None and config.model != "Unigram" and getattr(model, "unk_token", None) != config.unk_token:
        return model.with_options(unk_token=config.unk_token)
    return model


def tokenizer_with_model(config: PipelineConfig, model: Any) -> Any:
    """The finished tokenizer around ``model`` (trained, or ``history.model_at(k)``).

    Special tokens are added to the tokenizer's added vocabulary, as HF's ``Tokenizer.train``
    does, so they are never split; then the post-processor is wired to their ids.
    """
    from tokviz.tokenizer import Tokenizer

    if config.model == "SentencePiece":
        return sentencepiece_tokenizer(config, model)
    tokenizer = Tokenizer(configured_model(config, model))
    tokenizer.normalizer = build_normalizer(config)
    tokenizer.pre_tokenizer = build_pre_tokenizer(config)
    tokenizer.decoder = build_decoder(config)
    if config.special_tokens:
        tokenizer.add_special_tokens(list(config.special_tokens))
    tokenizer.post_processor = build_post_processor(config, tokenizer.token_to_id)
    return tokenizer


# ---------------------------------------------------------------------------------------
# Form state (the Custom mode's widgets, by key)

#: Prefix of every Custom-form widget key in ``st.session_state``.
FORM_PREFIX = "cfg_"


#: The special tokens and unknown token HF's own examples give each model that can meet text it cannot spell:
#: BertWordPieceTokenizer (WordPiece), the tokenizers quicktour (BPE, WordLevel), SentencePieceUnigramTokenizer (Unigram).
MODEL_EXAMPLE_TOKENS: dict[str, tuple[tuple[str, ...], str]] = {
    "WordPiece": (("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), "[UNK]"),
    "BPE": (("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"), "[UNK]"),
    "WordLevel": (("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"), "[UNK]"),
    "Unigram": (("<unk>",), "<unk>"),
}


def form_tokens_for_model(model: str, special_tokens: str, unk_token: str, byte_alphabet: bool = False) -> tuple[str, str, str]:
    """The Custom form's special tokens and unknown token once ``model`` is chosen, and one line saying what was filled in.

    A model that can meet text it cannot spell gets HF's example values (:data:`MODEL_EXAMPLE_TOKENS`) when the
    form has no unknown token; what the user typed is kept. A byte-level BPE spells everything: nothing is added.

    >>> specials, unk, note = form_tokens_for_model("WordPiece", "<|endoftext|>", "")
    >>> specials, unk
    ('<|endoftext|> [PAD] [UNK] [CLS] [SEP] [MASK]', '[UNK]')
    >>> note
    "Filled in as HF's examples do for WordPiece: unknown token [UNK], special tokens [PAD] [UNK] [CLS] [SEP] [MASK] (change them below)."
    >>> form_tokens_for_model("Unigram", "", "")[:2]
    ('<unk>', '<unk>')
    >>> form_tokens_for_model("BPE", "<|endoftext|>", "", byte_alphabet=True)
    ('<|endoftext|>', '', '')
    >>> form_tokens_for_model("WordLevel", "[UNK] [PAD]", "[UNK]")  # already has one: kept as typed
    ('[UNK] [PAD]', '[UNK]', '')
    """
    if model not in MODEL_EXAMPLE_TOKENS or unk_token.strip() or (model == "BPE" and byte_alphabet):
        return special_tokens, unk_token, ""
    example_specials, example_unk = MODEL_EXAMPLE_TOKENS[model]
    typed = special_tokens.split()
    merged = typed + [token for token in example_specials if token not in typed]
    note = (f"Filled in as HF's examples do for {model}: unknown token {example_unk}, "
            f"special tokens {' '.join(example_specials)} (change them below).")
    return " ".join(merged), example_unk, note


def fill_model_tokens(config: PipelineConfig) -> tuple[PipelineConfig, str]:
    """``config`` with the unknown token its model cannot work without, filled in as the Custom form does
    (:func:`form_tokens_for_model`), and the form's one line saying so; unchanged (and ``""``) otherwise.

    Only a Unigram model needs it to work at all: without ``unk_id`` HF's Unigram refuses any text with a
    character it never saw ("Encountered an unknown token but `unk_id` is missing"). A link written before the
    form filled it in, or by hand, arrives without one.

    >>> config, note = fill_model_tokens(PipelineConfig(model="Unigram"))
    >>> config.unk_token, config.special_tokens
    ('<unk>', ('<unk>',))
    >>> fill_model_tokens(PipelineConfig(model="BPE"))[1]
    ''
    """
    if config.model != "Unigram" or config.unk_token:
        return config, ""
    specials, unk, note = form_tokens_for_model(config.model, " ".join(config.special_tokens), "", config.byte_alphabet)
    return replace(config, special_tokens=tuple(specials.split()), unk_token=unk), note


def _form_param_key(section: str, label: str, param: str) -> str:
    return f"{FORM_PREFIX}{section}_{label}_{param}"


#: How the Custom form names the second, third, … use of one component type in a sequence.
_OCCURRENCE = " #"


def component_labels(types: Sequence[str]) -> list[str]:
    """The form's label for each component of a sequence: its type, with ``#k`` from its second use on.

    One type may appear twice (two Replace normalizers, a Strip before and after): each use gets its
    own label, so its option widgets get their own keys.

    >>> component_labels(["Strip", "NFKC", "Strip", "Strip"])
    ['Strip', 'NFKC', 'Strip #2', 'Strip #3']
    """
    seen: dict[str, int] = {}
    labels = []
    for type_name in types:
        seen[type_name] = seen.get(type_name, 0) + 1
        labels.append(type_name if seen[type_name] == 1 else f"{type_name}{_OCCURRENCE}{seen[type_name]}")
    return labels


def component_type(label: str) -> str:
    """The component type a form label stands for: ``'Strip #2' -> 'Strip'``.

    >>> component_type("Strip #2"), component_type("NFKC")
    ('Strip', 'NFKC')
    """
    return label.split(_OCCURRENCE, 1)[0]


def component_choices(schema_map: Mapping[str, Any], chosen: Sequence[str]) -> list[str]:
    """The form's options for a sequence: every type, plus the next use of each type already chosen.

    >>> component_choices({"NFKC": (), "Strip": ()}, ["Strip", "Strip #2"])
    ['NFKC', 'Strip', 'Strip #2', 'Strip #3']
    """
    counts: dict[str, int] = {}
    for label in chosen:
        counts[component_type(label)] = counts.get(component_type(label), 0) + 1
    options = []
    for type_name in schema_map:
        options.append(type_name)
        options.extend(f"{type_name}{_OCCURRENCE}{k}" for k in range(2, counts.get(type_name, 0) + 2))
    return options + [label for label in chosen if label not in options]


def to_form_state(config: PipelineConfig) -> dict[str, Any]:
    """The Custom form's widget values for ``config`` (keys as the form's widget keys).

    Components become ordered multiselect values plus one value per option; optional numbers
    become 0 ("none"), optional strings "" — what the widgets can hold:

    >>> state = to_form_state(PipelineConfig(normalizers=(component("Strip", left=False),)))
    >>> state["cfg_normalizers"], state["cfg_n_Strip_left"], state["cfg_limit_alphabet"]
    (['Strip'], False, 0)
    """
    state: dict[str, Any] = {
        f"{FORM_PREFIX}normalizers": component_labels([spec.type for spec in config.normalizers]),
        f"{FORM_PREFIX}pre_tokenizers": component_labels([spec.type for spec in config.pre_tokenizers]),
    }
    for section, schema_map, specs in (("n", NORMALIZERS, config.normalizers), ("p", PRE_TOKENIZERS, config.pre_tokenizers)):
        chosen = dict(zip(component_labels([spec.type for spec in specs]), specs))
        for label in [*schema_map, *(label for label in chosen if label not in schema_map)]:
            for param in schema_map[component_type(label)]:
                value = chosen[label].param(param.name) if label in chosen else param.default
                state[_form_param_key(section, label, param.name)] = value
    state.update(
        {
            f"{FORM_PREFIX}model": config.model,
            f"{FORM_PREFIX}special_tokens": " ".join(config.special_tokens),
            f"{FORM_PREFIX}unk_token": config.unk_token or "",
            f"{FORM_PREFIX}min_frequency": config.min_frequency,
            f"{FORM_PREFIX}limit_alphabet": config.limit_alphabet or 0,
            f"{FORM_PREFIX}byte_alphabet": config.byte_alphabet,
            f"{FORM_PREFIX}continuing_subword_prefix": config.continuing_subword_prefix or "",
            f"{FORM_PREFIX}end_of_word_suffix": config.end_of_word_suffix or "",
            f"{FORM_PREFIX}max_token_length": config.max_token_length or 0,
            f"{FORM_PREFIX}tie_break": config.tie_break,
            f"{FORM_PREFIX}scoring": config.scoring,
            f"{FORM_PREFIX}unigram_method": config.unigram_method,
            f"{FORM_PREFIX}shrinking_factor": float(config.shrinking_factor),
            f"{FORM_PREFIX}max_piece_length": config.max_piece_length,
            f"{FORM_PREFIX}n_sub_iterations": config.n_sub_iterations,
            f"{FORM_PREFIX}post_processor": config.post_processor,
            f"{FORM_PREFIX}sp_model_type": config.sp_model_type,
            f"{FORM_PREFIX}character_coverage": float(config.character_coverage),
            f"{FORM_PREFIX}byte_fallback": config.byte_fallback,
            f"{FORM_PREFIX}normalization_rule": config.normalization_rule,
            f"{FORM_PREFIX}unk_id": config.unk_id,
            f"{FORM_PREFIX}bos_id": config.bos_id,
            f"{FORM_PREFIX}eos_id": config.eos_id,
            f"{FORM_PREFIX}pad_id": config.pad_id,
            f"{FORM_PREFIX}user_defined_symbols": " ".join(config.user_defined_symbols),
            f"{FORM_PREFIX}max_sentence_length": config.max_sentence_length,
        }
    )
    return state


def from_form_state(state: Mapping[str, Any]) -> PipelineConfig:
    """Read the Custom form back into a config (missing keys take the defaults).

    Special tokens are typed separated by spaces: ``"[PAD] [UNK]"`` -> ``("[PAD]", "[UNK]")``.

    >>> from_form_state(to_form_state(PipelineConfig())) == PipelineConfig()
    True
    """
    default_state = to_form_state(PipelineConfig())

    def get(name: str) -> Any:
        key = f"{FORM_PREFIX}{name}"
        return state.get(key, default_state.get(key))

    def specs(section: str, field_name: str, schema_map: dict[str, tuple[Param, ...]]) -> tuple[ComponentSpec, ...]:
        out = []
        for label in get(field_name) or []:
            type_name = component_type(label)
            if type_name not in schema_map:
                raise PipelineConfigError(f"{type_name!r} is not one of: {', '.join(schema_map)}.")
            options = {
                param.name: state.get(_form_param_key(section, label, param.name), param.default)
                for param in schema_map[type_name]
            }
            out.append(component(type_name, **options))
        return tuple(out)

    def optional_int(name: str) -> int | None:
        value = int(get(name) or 0)
        return value or None

    if get("model") == "SentencePiece":  # its text side and special pieces follow from its own options
        return sentencepiece_config(
            sp_model_type=get("sp_model_type"), character_coverage=float(get("character_coverage")), byte_fallback=bool(get("byte_fallback")),
            normalization_rule=get("normalization_rule"), unk_id=int(get("unk_id")), bos_id=int(get("bos_id")), eos_id=int(get("eos_id")),
            pad_id=int(get("pad_id")), user_defined_symbols=tuple(str(get("user_defined_symbols") or "").split()),
            max_sentence_length=int(get("max_sentence_length")),
        )
    return PipelineConfig(
        normalizers=specs("n", "normalizers", NORMALIZERS),
        pre_tokenizers=specs("p", "pre_tokenizers", PRE_TOKENIZERS),
        model=get("model"),
        special_tokens=tuple(str(get("special_tokens") or "").split()),
        unk_token=(str(get("unk_token") or "").strip() or None),
        min_frequency=int(get("min_frequency") or 0),
        limit_alphabet=optional_int("limit_alphabet"),
        byte_alphabet=bool(get("byte_alphabet")),
        continuing_subword_prefix=get("continuing_subword_prefix") or None,
        end_of_word_suffix=get("end_of_word_suffix") or None,
        max_token_length=optional_int("max_token_length"),
        tie_break=get("tie_break"),
        scoring=get("scoring"),
        unigram_method=get("unigram_method"),
        shrinking_factor=float(get("shrinking_factor")),
        max_piece_length=int(get("max_piece_length")),
        n_sub_iterations=int(get("n_sub_iterations")),
        post_processor=get("post_processor"),
    )


def config_key(config: PipelineConfig) -> str:
    """A stable text key of the config (hashable already; this one is stable across processes).

    >>> config_key(PipelineConfig()) == config_key(PipelineConfig())
    True
    """
    values = {
        field_info.name: [[spec.type, [list(item) for item in spec.params]] for spec in value]
        if field_info.name in ("normalizers", "pre_tokenizers") else value
        for field_info in fields(PipelineConfig)
        for value in [getattr(config, field_info.name)]
    }
    return json.dumps(values, sort_keys=True, ensure_ascii=False, default=str)


__all__ = [
    "ComponentSpec",
    "MODELS",
    "NORMALIZERS",
    "PRE_TOKENIZERS",
    "Param",
    "PipelineConfig",
    "COMMON_FIELDS",
    "MODEL_FIELDS",
    "applicable",
    "build_decoder",
    "build_model",
    "build_normalizer",
    "build_post_processor",
    "build_pre_tokenizer",
    "build_tokenizer",
    "build_trainer",
    "SP_MODEL_TYPES",
    "SP_NORMALIZATION_RULES",
    "sentencepiece_config",
    "sentencepiece_options",
    "sentencepiece_special_pieces",
    "sentencepiece_text_side",
    "sentencepiece_tokenizer",
    "check_vocab_size",
    "component",
    "component_choices",
    "component_labels",
    "component_type",
    "config_key",
    "configured_model",
    "form_tokens_for_model",
    "fill_model_tokens",
    "from_form_state",
    "to_form_state",
    "tokenizer_with_model",
    "trainer_options",
]

