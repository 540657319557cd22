"""Presets: each is the pipeline its model family really uses, by HF's component names.

The reference for each preset is the same pipeline assembled with HF ``tokenizers`` (as the
HF course builds BERT, GPT-2 and the SentencePiece-like tokenizers in chapter 6.8); the
tokenizer.json sections must be identical.
"""

from __future__ import annotations

import json

import pytest
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from tokviz.pipeline_config import build_tokenizer, tokenizer_with_model
from tokviz.presets import DEFAULT_PRESET, PRESETS, bert_like, char_bpe, gpt2_like, preset_key, t5_like


def _hf_bert() -> Tokenizer:
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


def _hf_gpt2() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _hf_t5() -> Tokenizer:
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return tokenizer


def _hf_char_bpe() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.BPEDecoder(suffix="</w>")
    return tokenizer


HF_REFERENCES = {"bert": _hf_bert, "gpt2": _hf_gpt2, "t5": _hf_t5, "char_bpe": _hf_char_bpe}


@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_pipeline_serializes_like_the_hf_reference(key: str) -> None:
    ours = json.loads(build_tokenizer(PRESETS[key].build()).to_str())
    theirs = json.loads(HF_REFERENCES[key]().to_str())
    for section in ("normalizer", "pre_tokenizer", "decoder"):
        assert ours[section] == theirs[section], section
    assert ours["model"]["type"] == theirs["model"]["type"]
    for option in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        if option in theirs["model"]:
            assert ours["model"].get(option) == theirs["model"][option], option


def test_bert_post_processor_matches_hf_template() -> None:
    from tokviz.models import WordPiece

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5}
    ours = json.loads(tokenizer_with_model(bert_like(), WordPiece(vocab, unk_token="[UNK]")).to_str())["post_processor"]
    template = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    hf = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    hf.post_processor = template
    assert ours == json.loads(hf.to_str())["post_processor"]


def test_gpt2_post_processor_keeps_offsets_untrimmed_as_gpt2() -> None:
    from tokviz.models import BPE

    ours = json.loads(tokenizer_with_model(gpt2_like(), BPE({"a": 0, "<|endoftext|>": 1}, [])).to_str())["post_processor"]
    hf = Tokenizer(models.BPE({"a": 0, "<|endoftext|>": 1}, []))
    hf.post_processor = processors.ByteLevel(trim_offsets=False)
    assert ours == json.loads(hf.to_str())["post_processor"]
    assert (ours["type"], ours["trim_offsets"]) == ("ByteLevel", False)


def test_preset_shapes_in_words() -> None:
    assert bert_like().special_tokens == ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    assert (bert_like().unk_token, bert_like().continuing_subword_prefix) == ("[UNK]", "##")
    assert gpt2_like().byte_alphabet and gpt2_like().unk_token is None
    assert (t5_like().model, t5_like().unk_token, t5_like().post_processor) == ("Unigram", "<unk>", "t5")
    assert (char_bpe().end_of_word_suffix, char_bpe().pre_tokenizers[0].type) == ("</w>", "WhitespaceSplit")


def test_preset_key_recognises_unchanged_presets_only() -> None:
    for key, preset in PRESETS.items():
        assert preset_key(preset.build()) == key
    assert preset_key(bert_like().with_model("WordLevel")) is None
    assert DEFAULT_PRESET in PRESETS
    assert all(preset.label and preset.summary for preset in PRESETS.values())
