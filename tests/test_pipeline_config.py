"""Pipeline configs: validation in sentences, links that round-trip, and what they build.

Parity: the components a config builds serialize exactly as HF's components of the same
names, and a trained config exported as tokenizer.json encodes in HF to the same ids.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenizers
from tokviz.corpus import held_out_split
from tokviz.errors import PatternError, PipelineConfigError, SpecialTokenError, VocabSizeError
from tokviz.pipeline_config import (
    NORMALIZERS,
    PRE_TOKENIZERS,
    PipelineConfig,
    build_decoder,
    build_tokenizer,
    build_trainer,
    check_vocab_size,
    component,
    config_key,
    tokenizer_with_model,
    trainer_options,
)
from tokviz.presets import PRESETS
from tokviz.samples import load_sample

# --- components ------------------------------------------------------------------------


def test_component_fills_hf_defaults_in_schema_order() -> None:
    assert component("Metaspace") == component("Metaspace", replacement="▁", prepend_scheme="always", split=True)
    assert component("Metaspace", prepend_scheme="first").params == (
        ("replacement", "▁"),
        ("prepend_scheme", "first"),
        ("split", True),
    )
    assert component("Replace", pattern=" {2,}", content=" ", regex=True).label() == "Replace(pattern=' {2,}', regex=True)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "Lowercas"}, "Unknown component 'Lowercas'"),
        ({"type": "Strip", "middle": True}, "Strip has no option 'middle'"),
        ({"type": "Strip", "left": "yes"}, "option 'left' must be a bool"),
        ({"type": "Metaspace", "prepend_scheme": "sometimes"}, "one of always, first, never"),
    ],
)
def test_component_errors_are_sentences(kwargs: dict, message: str) -> None:
    with pytest.raises(PipelineConfigError, match=message):
        component(**kwargs)


# Each normalizer / pre-tokenizer the form offers, built by tokviz and by HF with the same options.
HF_COMPONENTS = [
    (component("NFKC"), tokenizers.normalizers.NFKC()),
    (component("Lowercase"), tokenizers.normalizers.Lowercase()),
    (component("StripAccents"), tokenizers.normalizers.StripAccents()),
    (component("Strip", left=False), tokenizers.normalizers.Strip(left=False, right=True)),
    (component("Replace", pattern=" {2,}", content=" ", regex=True), tokenizers.normalizers.Replace(tokenizers.Regex(" {2,}"), " ")),
    (component("Replace", pattern="``", content='"'), tokenizers.normalizers.Replace("``", '"')),
    (component("Prepend", prepend="▁"), tokenizers.normalizers.Prepend("▁")),
    (component("BertNormalizer", lowercase=False), tokenizers.normalizers.BertNormalizer(lowercase=False)),
    (component("Nmt"), tokenizers.normalizers.Nmt()),
    (component("Whitespace"), tokenizers.pre_tokenizers.Whitespace()),
    (component("BertPreTokenizer"), tokenizers.pre_tokenizers.BertPreTokenizer()),
    (component("ByteLevel", add_prefix_space=False), tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)),
    (component("Metaspace", prepend_scheme="first"), tokenizers.pre_tokenizers.Metaspace(prepend_scheme="first")),
    (component("Punctuation", behavior="contiguous"), tokenizers.pre_tokenizers.Punctuation("contiguous")),
    (component("Digits", individual_digits=True), tokenizers.pre_tokenizers.Digits(individual_digits=True)),
    (component("Split", pattern=r"\d+", behavior="isolated", regex=True), tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\d+"), "isolated")),
    (component("CharDelimiterSplit", delimiter="|"), tokenizers.pre_tokenizers.CharDelimiterSplit("|")),
    (component("UnicodeScripts"), tokenizers.pre_tokenizers.UnicodeScripts()),
]


@pytest.mark.parametrize(("spec", "hf_component"), HF_COMPONENTS, ids=[spec.label() for spec, _ in HF_COMPONENTS])
def test_each_component_serializes_like_hf_and_splits_alike(spec, hf_component) -> None:
    is_normalizer = spec.type in NORMALIZERS
    config = PipelineConfig(normalizers=(spec,), pre_tokenizers=()) if is_normalizer else PipelineConfig(pre_tokenizers=(spec,))
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    section = "normalizer" if is_normalizer else "pre_tokenizer"
    setattr(hf, section, hf_component)
    ours = build_tokenizer(config)
    built = ours.normalizer if is_normalizer else ours.pre_tokenizer
    assert built.to_dict() == json.loads(hf.to_str())[section]
    text = "Héllo,  wörld 123|x ``quoted`` 가나"
    if is_normalizer:
        assert built.normalize_str(text) == hf_component.normalize_str(text)
    else:
        assert built.pre_tokenize_str(text) == hf_component.pre_tokenize_str(text)


def test_every_offered_component_is_covered_or_trivially_named() -> None:
    covered = {spec.type for spec, _ in HF_COMPONENTS}
    for name in [*NORMALIZERS, *PRE_TOKENIZERS]:
        assert name in covered or name in {"NFC", "NFD", "NFKD", "WhitespaceSplit"}
        assert hasattr(tokenizers.normalizers if name in NORMALIZERS else tokenizers.pre_tokenizers, name)


def test_bad_user_regex_raises_pattern_error_naming_it() -> None:
    config = PipelineConfig(pre_tokenizers=(component("Split", pattern="(a", regex=True),))
    with pytest.raises(PatternError, match=r"\(a"):
        build_tokenizer(config)


def test_sequences_are_built_for_several_components() -> None:
    config = PipelineConfig(
        normalizers=(component("NFD"), component("Lowercase"), component("StripAccents")),
        pre_tokenizers=(component("WhitespaceSplit"), component("Digits", individual_digits=True)),
    )
    tokenizer = build_tokenizer(config)
    assert tokenizer.normalizer.normalize_str("Héllò") == "hello"
    assert tokenizer.pre_tokenizer.pre_tokenize_str("ab 12") == [("ab", (0, 2)), ("1", (3, 4)), ("2", (4, 5))]


# --- config validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"model": "GPT"}, PipelineConfigError, "Unknown model 'GPT'"),
        ({"tie_break": "random"}, PipelineConfigError, "tie-break"),
        ({"special_tokens": ("<s>", "<s>")}, SpecialTokenError, "listed twice"),
        ({"special_tokens": ("",)}, SpecialTokenError, "cannot be empty"),
        ({"unk_token": "[UNK]"}, SpecialTokenError, "must also be a special token"),
        ({"model": "WordPiece"}, SpecialTokenError, "WordPiece needs an unknown token"),
        ({"model": "WordLevel"}, SpecialTokenError, "WordLevel needs an unknown token"),
        ({"post_processor": "bert", "special_tokens": ("[CLS]",)}, PipelineConfigError, r"needs the special tokens \[SEP\]"),
        ({"min_frequency": -1}, PipelineConfigError, "min_frequency"),
        ({"limit_alphabet": 0}, PipelineConfigError, "limit_alphabet"),
        ({"shrinking_factor": 1.5}, PipelineConfigError, "shrinking_factor"),
        ({"normalizers": (component("Whitespace"),)}, PipelineConfigError, "'Whitespace' is not a normalizer"),
    ],
)
def test_invalid_configs_raise_user_errors(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        PipelineConfig(**kwargs)


@pytest.mark.parametrize("bad", [0, -5, 2.5, "300", True])
def test_vocab_size_must_be_a_positive_whole_number(bad) -> None:
    with pytest.raises(VocabSizeError, match="whole number of 1 or more"):
        check_vocab_size(bad)
    with pytest.raises(VocabSizeError):
        build_trainer(PipelineConfig(), bad)


def test_configs_are_hashable_and_equal_by_value() -> None:
    assert hash(PRESETS["bert"].build()) == hash(PRESETS["bert"].build())
    assert len({preset.build() for preset in PRESETS.values()}) == len(PRESETS)


# --- trainers: HF's option names ---------------------------------------------------------

TOKVIZ_ONLY_OPTIONS = {"tie_break", "scoring", "method"}
HF_TRAINERS = {"BPE": "BpeTrainer", "WordPiece": "WordPieceTrainer", "Unigram": "UnigramTrainer", "WordLevel": "WordLevelTrainer"}


@pytest.mark.parametrize("key", list(PRESETS))
@pytest.mark.parametrize("model", ["BPE", "WordPiece", "Unigram", "WordLevel"])
def test_trainer_options_are_hf_option_names(key: str, model: str) -> None:
    config = PRESETS[key].build()
    if model in ("WordPiece", "WordLevel") and config.unk_token is None:
        config = PipelineConfig(special_tokens=("[UNK]",), unk_token="[UNK]", model=model)
    else:
        config = config.with_model(model)
    options = trainer_options(config, 400)
    # HF's constructors take None as "not given" only by omission.
    hf_options = {name: value for name, value in options.items() if name not in TOKVIZ_ONLY_OPTIONS and value is not None}
    hf_trainer = getattr(tokenizers.trainers, HF_TRAINERS[model])(**hf_options)
    assert hf_trainer.vocab_size == 400
    assert list(hf_trainer.special_tokens) and [t.content for t in hf_trainer.special_tokens] == list(config.special_tokens)


def test_trainer_options_carry_every_choice() -> None:
    config = PipelineConfig(
        model="WordPiece", special_tokens=("[UNK]",), unk_token="[UNK]", continuing_subword_prefix="@@",
        min_frequency=2, limit_alphabet=100, tie_break="first_seen", scoring="frequency",
    )
    options = trainer_options(config, 300)
    assert {k: options[k] for k in ("min_frequency", "limit_alphabet", "continuing_subword_prefix", "tie_break", "scoring")} == {
        "min_frequency": 2, "limit_alphabet": 100, "continuing_subword_prefix": "@@", "tie_break": "first_seen", "scoring": "frequency",
    }
    assert len(trainer_options(PRESETS["gpt2"].build(), 300)["initial_alphabet"]) == 256
    unigram = trainer_options(PipelineConfig(model="Unigram", unigram_method="course", shrinking_factor=0.5), 300)
    assert (unigram["method"], unigram["shrinking_factor"]) == ("course", 0.5)


def test_decoders_follow_the_pipeline() -> None:
    assert type(build_decoder(PRESETS["gpt2"].build())).__name__ == "ByteLevel"
    assert type(build_decoder(PRESETS["bert"].build())).__name__ == "WordPiece"
    assert type(build_decoder(PRESETS["t5"].build())).__name__ == "Metaspace"
    assert type(build_decoder(PRESETS["char_bpe"].build())).__name__ == "BPEDecoder"
    assert build_decoder(PipelineConfig()) is None


# --- trained pipelines export to HF ------------------------------------------------------


def _train(key: str, vocab_size: int):
    config = PRESETS[key].build()
    split = held_out_split(load_sample())
    tokenizer = build_tokenizer(config)
    tokenizer.train_from_iterator(split.train_lines, build_trainer(config, vocab_size))
    history = tokenizer.training_history
    return config, history, split


@pytest.mark.parametrize("key", list(PRESETS))
def test_exported_tokenizer_json_loads_in_hf_and_encodes_to_the_same_ids(key: str) -> None:
    if key == "t5":
        pytest.importorskip("tokviz.models.unigram.trainer")
    config, history, split = _train(key, 400)
    for vocab_size in (history.min_vocab_size + 10, history.max_vocab_size):
        tokenizer = tokenizer_with_model(config, history.model_at(vocab_size))
        hf = tokenizers.Tokenizer.from_str(tokenizer.to_str())
        texts = [*split.test_lines, "<img src=x onerror=alert(1)>", "a가 짧 🇫🇷"]
        for text in texts:
            ours = tokenizer.encode(text)
            theirs = hf.encode(text)
            assert ours.ids == theirs.ids, text
            assert ours.tokens == theirs.tokens, text
            assert ours.offsets == theirs.offsets, text


def test_special_tokens_are_added_and_the_bert_template_wraps_the_text() -> None:
    config, history, _ = _train("bert", 400)
    tokenizer = tokenizer_with_model(config, history.model)
    encoding = tokenizer.encode("hello [MASK] world")
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[-1] == "[SEP]"
    assert "[MASK]" in encoding.tokens
    assert encoding.special_tokens_mask[0] == 1 and encoding.special_tokens_mask[-1] == 1


def test_the_configured_unknown_token_reaches_the_trained_model_as_in_hf() -> None:
    config, history, _ = _train("char_bpe", 450)
    tokenizer = tokenizer_with_model(config, history.model_at(history.min_vocab_size + 5))
    assert tokenizer.model.unk_token == "<unk>"
    hf = tokenizers.Tokenizer.from_str(tokenizer.to_str())
    assert tokenizer.encode("the Ж zebra").tokens == hf.encode("the Ж zebra").tokens
    assert "<unk>" in tokenizer.encode("the Ж zebra").tokens


def test_char_bpe_marks_word_ends_and_decodes_back() -> None:
    config, history, _ = _train("char_bpe", 600)
    tokenizer = tokenizer_with_model(config, history.model)
    encoding = tokenizer.encode("the tokenizer")
    assert encoding.tokens[-1].endswith("</w>")
    assert tokenizer.decode(encoding.ids) == "the tokenizer"


# --- the Custom form's widget state -------------------------------------------------------

from tokviz.pipeline_config import from_form_state, to_form_state  # noqa: E402


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_round_trips_through_the_form(key: str) -> None:
    config = PRESETS[key].build()
    assert from_form_state(to_form_state(config)) == config


def test_form_reads_typed_values_and_blank_optionals() -> None:
    state = to_form_state(PipelineConfig())
    state.update(
        {
            "cfg_normalizers": ["NFKC", "Replace"],
            "cfg_n_Replace_pattern": "``",
            "cfg_n_Replace_content": '"',
            "cfg_pre_tokenizers": ["Metaspace"],
            "cfg_p_Metaspace_prepend_scheme": "never",
            "cfg_model": "Unigram",
            "cfg_special_tokens": " <unk>  <pad> ",
            "cfg_unk_token": "<unk>",
            "cfg_limit_alphabet": 0,
            "cfg_unigram_method": "course",
        }
    )
    config = from_form_state(state)
    assert config.normalizers == (component("NFKC"), component("Replace", pattern="``", content='"'))
    assert config.pre_tokenizers == (component("Metaspace", prepend_scheme="never"),)
    assert (config.model, config.special_tokens, config.unk_token) == ("Unigram", ("<unk>", "<pad>"), "<unk>")
    assert (config.limit_alphabet, config.unigram_method) == (None, "course")


def test_form_errors_are_user_errors() -> None:
    with pytest.raises(SpecialTokenError, match="must also be a special token"):
        from_form_state({"cfg_unk_token": "[UNK]"})
    with pytest.raises(PipelineConfigError, match="must be a bool"):
        from_form_state({"cfg_normalizers": ["Strip"], "cfg_n_Strip_left": "no"})


def test_a_component_used_twice_gets_its_own_form_widgets_and_round_trips() -> None:
    """``n0=Strip&n1=Strip`` (a Strip before and after): the form names the second 'Strip #2' with keys of its own."""
    from tokviz.pipeline_config import component, from_form_state, to_form_state

    config = PipelineConfig(normalizers=(component("Strip", left=False), component("NFKC"), component("Strip", right=False)))
    state = to_form_state(config)
    assert state["cfg_normalizers"] == ["Strip", "NFKC", "Strip #2"]
    assert (state["cfg_n_Strip_left"], state["cfg_n_Strip #2_right"]) == (False, False)
    assert from_form_state(state) == config


@pytest.mark.parametrize("options", [{"sp_model_type": "unigram"}, {"sp_model_type": "bpe", "byte_fallback": True},
                                     {"sp_model_type": "unigram", "normalization_rule": "identity"}])
def test_sentencepiece_tokenizer_encodes_as_sentencepiece_on_the_sample(options: dict) -> None:
    """Train's SentencePiece pipeline (``sentencepiece_tokenizer`` around ``history.model_at(k)``) against the
    sentencepiece package on the ``.model`` of the same training: pieces and ids, runs of spaces included.
    (User-defined symbols are left out: as in HF's conversions they are added tokens, cut out before the
    normalizer, so the text after one gets a dummy prefix sentencepiece does not give it.)"""
    spm = pytest.importorskip("sentencepiece")
    from tokviz.pipeline_config import sentencepiece_config, sentencepiece_tokenizer
    from tokviz.samples import load_sample
    from tokviz.training import run_training

    lines = [line for line in load_sample().splitlines() if line.strip()]
    config = sentencepiece_config(**options)
    history = run_training(config, 800, lines[:400])
    size = history.max_vocab_size
    theirs = spm.SentencePieceProcessor(model_proto=history.proto_at(size).to_bytes())
    ours = sentencepiece_tokenizer(config, history.model_at(size))
    texts = lines[400:460] + ["  lead and trail  ", "a  b   c", "x\t\ty", "def f():\n    return  1", "<x>inside<x> out", ""]
    for text in texts:
        encoding = ours.encode(text)
        assert (encoding.tokens, encoding.ids) == (theirs.encode(text, out_type=str), theirs.encode(text)), text
        if theirs.unk_id() not in encoding.ids:  # (sentencepiece decodes <unk> as " ⁇ ", HF's conversions as "<unk>")
            assert ours.decode(encoding.ids) == theirs.decode(theirs.encode(text)), text
