"""Configurations for the Compare page: a preset in one click, or model × pre-tokenizer × normalizer.

The Compare page puts 2 to 4 pipelines side by side. Each is either a preset
(:data:`tokviz.presets.PRESETS`) or three choices from short menus, turned into a full
:class:`~tokviz.pipeline_config.PipelineConfig` with the conventions each choice implies
(WordPiece continues words with ``##`` and is scored by pair frequency, as HF's
``WordPieceTrainer`` does — the BERT-like preset keeps the HF course's likelihood score, which
at small vocab sizes cuts words into more pieces; a byte-level pipeline starts from the 256
byte symbols and needs no unknown token):

>>> config = custom_config("WordPiece", "Whitespace", "lowercase")
>>> config.model, config.continuing_subword_prefix, config.scoring, config.unk_token
('WordPiece', '##', 'frequency', '[UNK]')
>>> [spec.type for spec in config.normalizers]
['NFD', 'Lowercase', 'StripAccents']
>>> custom_config("BPE", "ByteLevel", "none").unk_token is None
True

What this leaves out: every other option of the Train page's Custom form (use the Train
page for those); pipelines are compared at their own vocab size each.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.errors import PipelineConfigError
from tokviz.pipeline_config import MODELS, ComponentSpec, PipelineConfig, component
from tokviz.presets import PRESETS

#: Pre-tokenizer menu: label -> the components it stands for.
PRE_TOKENIZER_CHOICES: dict[str, tuple[ComponentSpec, ...]] = {
    "Whitespace": (component("Whitespace"),),
    "WhitespaceSplit": (component("WhitespaceSplit"),),
    "BertPreTokenizer": (component("BertPreTokenizer"),),
    "ByteLevel": (component("ByteLevel", add_prefix_space=False),),
    "Metaspace": (component("Metaspace"),),
}

#: Normalizer menu: label -> the components it stands for.
NORMALIZER_CHOICES: dict[str, tuple[ComponentSpec, ...]] = {
    "none": (),
    "NFKC": (component("NFKC"),),
    "lowercase": (component("NFD"), component("Lowercase"), component("StripAccents")),
    "BertNormalizer": (component("BertNormalizer"),),
}

UNK_TOKEN = "[UNK]"


@dataclass(frozen=True, slots=True)
class Configuration:
    """One column of the comparison: a name the tables use, the pipeline and its vocab size."""

    name: str
    config: PipelineConfig
    vocab_size: int

    @property
    def byte_level(self) -> bool:
        return any(spec.type == "ByteLevel" for spec in self.config.pre_tokenizers)


def custom_config(model: str, pre_tokenizer: str, normalizer: str) -> PipelineConfig:
    """A full pipeline from three menu choices (see the module docstring for the conventions)."""
    if model not in MODELS:
        raise PipelineConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")
    if pre_tokenizer not in PRE_TOKENIZER_CHOICES:
        raise PipelineConfigError(f"Unknown pre-tokenizer {pre_tokenizer!r}; choose one of {', '.join(PRE_TOKENIZER_CHOICES)}.")
    if normalizer not in NORMALIZER_CHOICES:
        raise PipelineConfigError(f"Unknown normalizer {normalizer!r}; choose one of {', '.join(NORMALIZER_CHOICES)}.")
    byte_level = pre_tokenizer == "ByteLevel"
    # Byte-level BPE can spell any text from its 256 byte symbols; everything else may meet an unseen character.
    needs_unk = not (byte_level and model == "BPE")
    return PipelineConfig(
        normalizers=NORMALIZER_CHOICES[normalizer],
        pre_tokenizers=PRE_TOKENIZER_CHOICES[pre_tokenizer],
        model=model,
        special_tokens=(UNK_TOKEN,) if needs_unk else (),
        unk_token=UNK_TOKEN if needs_unk else None,
        byte_alphabet=byte_level and model != "WordLevel",
        continuing_subword_prefix="##" if model == "WordPiece" else None,
        scoring="frequency",  # what HF's WordPieceTrainer really does (ignored by the other models)
        post_processor="byte_level" if byte_level else "none",
    )


def configuration_name(position: int, choice: str, model: str, vocab_size: int) -> str:
    """The row name tables and charts use: ``'1 · GPT-2-like byte-level BPE · 2,000'``.

    >>> configuration_name(0, "bert", "WordPiece", 2000), configuration_name(2, "custom", "Unigram", 500)
    ('1 · BERT-like WordPiece · 2,000', '3 · custom Unigram · 500')
    """
    label = PRESETS[choice].label if choice in PRESETS else f"custom {model}"
    return f"{position + 1} · {label} · {vocab_size:,}"
