"""Compare-page configurations: menu choices become pipelines that train and encode (issue 5)."""

from __future__ import annotations

import pytest

from tokviz.compare import NORMALIZER_CHOICES, PRE_TOKENIZER_CHOICES, Configuration, configuration_name, custom_config
from tokviz.errors import PipelineConfigError
from tokviz.pipeline_config import MODELS, build_tokenizer, build_trainer, sentencepiece_tokenizer, tokenizer_with_model


@pytest.mark.parametrize("model", [model for model in MODELS if model != "SentencePiece"])
@pytest.mark.parametrize("pre_tokenizer", list(PRE_TOKENIZER_CHOICES))
def test_every_model_and_pre_tokenizer_trains_and_encodes(model: str, pre_tokenizer: str, course_corpus: list[str]) -> None:
    config = custom_config(model, pre_tokenizer, "lowercase")
    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(course_corpus, build_trainer(config, 300))
    history = trained_tokenizer.training_history
    tokenizer = tokenizer_with_model(config, history.model)
    encoding = tokenizer.encode("Hugging Face tokenizers, ça va?")
    assert encoding.tokens and all(0 <= start <= end <= 31 for start, end in encoding.offsets)
    byte_level = pre_tokenizer == "ByteLevel"
    assert Configuration("x", config, 300).byte_level == byte_level
    # Only byte-level BPE spells every text without an unknown token.
    assert (config.unk_token is None) == (byte_level and model == "BPE")


@pytest.mark.parametrize("pre_tokenizer", list(PRE_TOKENIZER_CHOICES))
def test_sentencepiece_is_spm_trains_default_whatever_the_menus_say(pre_tokenizer: str, course_corpus: list[str]) -> None:
    from tokviz.training import run_training

    config = custom_config("SentencePiece", pre_tokenizer, "BertNormalizer")
    assert config == custom_config("SentencePiece", "Whitespace", "none")
    assert (config.sp_model_type, config.normalization_rule, config.unk_id, config.bos_id, config.eos_id) == ("unigram", "nmt_nfkc", 0, 1, 2)
    history = run_training(config, 120, course_corpus)
    assert history.algorithm == "sentencepiece-unigram"
    tokens = sentencepiece_tokenizer(config, history.model_at(history.max_vocab_size)).encode("Hugging Face").tokens
    assert tokens[0].startswith("\u2581") and "".join(tokens).replace("\u2581", " ").strip() == "Hugging Face"


def test_conventions_literal() -> None:
    wordpiece = custom_config("WordPiece", "BertPreTokenizer", "BertNormalizer")
    assert (wordpiece.continuing_subword_prefix, wordpiece.scoring, wordpiece.special_tokens, wordpiece.post_processor) == ("##", "frequency", ("[UNK]",), "none")
    gpt2 = custom_config("BPE", "ByteLevel", "none")
    assert (gpt2.byte_alphabet, gpt2.special_tokens, gpt2.post_processor, gpt2.normalizers) == (True, (), "byte_level", ())
    assert [spec.type for spec in custom_config("Unigram", "Metaspace", "NFKC").normalizers] == ["NFKC"]
    assert set(NORMALIZER_CHOICES) == {"none", "NFKC", "lowercase", "BertNormalizer"}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("Bpe", "Whitespace", "none"), "Unknown model 'Bpe'"),
        (("BPE", "Spaces", "none"), "Unknown pre-tokenizer 'Spaces'"),
        (("BPE", "Whitespace", "upper"), "Unknown normalizer 'upper'"),
    ],
)
def test_unknown_choices_raise_a_readable_error(arguments: tuple[str, str, str], message: str) -> None:
    with pytest.raises(PipelineConfigError, match=message):
        custom_config(*arguments)


def test_configuration_names_are_unique_by_position() -> None:
    assert configuration_name(0, "gpt2", "BPE", 2000) == "1 · GPT-2-like byte-level BPE · 2,000"
    assert configuration_name(1, "gpt2", "BPE", 2000) != configuration_name(0, "gpt2", "BPE", 2000)
    assert configuration_name(3, "custom", "WordLevel", 50) == "4 · custom WordLevel · 50"
