"""Presets: four famous tokenizer recipes as :class:`~tokviz.pipeline_config.PipelineConfig`.

Each function returns the pipeline a well-known model family uses, with Hugging Face's
component names, so a user can start from something real and then change one thing:

>>> gpt2_like().pre_tokenizers[0].label()
'ByteLevel(add_prefix_space=False)'
>>> bert_like().model, t5_like().model, char_bpe().end_of_word_suffix
('WordPiece', 'Unigram', '</w>')

What they leave out: the real models' trained vocabularies (you train your own), BERT's
Chinese-character vocabulary tricks, T5's ``Precompiled`` SentencePiece normalizer (NFKC plus
whitespace collapsing stands in for it), GPT-2's ``<|endoftext|>`` handling at encode time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tokviz.pipeline_config import PipelineConfig, component


def bert_like() -> PipelineConfig:
    """BERT (uncased): BertNormalizer (clean, lowercase, strip accents), BertPreTokenizer, WordPiece
    with ``##`` continuations, ``[CLS] $A [SEP]``. Scored by likelihood as in the HF course."""
    return PipelineConfig(
        normalizers=(component("BertNormalizer", lowercase=True),),
        pre_tokenizers=(component("BertPreTokenizer"),),
        model="WordPiece",
        special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        unk_token="[UNK]",
        continuing_subword_prefix="##",
        scoring="likelihood",
        post_processor="bert",
    )


def gpt2_like() -> PipelineConfig:
    """GPT-2: no normalizer, byte-level pre-tokenizer (no prefix space), BPE over all 256 bytes,
    so it never needs an unknown token."""
    return PipelineConfig(
        normalizers=(),
        pre_tokenizers=(component("ByteLevel", add_prefix_space=False),),
        model="BPE",
        special_tokens=("<|endoftext|>",),
        byte_alphabet=True,
        post_processor="byte_level",
    )


def t5_like() -> PipelineConfig:
    """T5 / SentencePiece: NFKC and runs of spaces collapsed, Metaspace ``▁`` word starts, Unigram
    trained with EM, ``$A </s>``."""
    return PipelineConfig(
        normalizers=(component("NFKC"), component("Replace", pattern=" {2,}", content=" ", regex=True)),
        pre_tokenizers=(component("Metaspace", replacement="▁", prepend_scheme="always", split=True),),
        model="Unigram",
        special_tokens=("<pad>", "</s>", "<unk>"),
        unk_token="<unk>",
        unigram_method="em",
        post_processor="t5",
    )


def char_bpe() -> PipelineConfig:
    """Sennrich et al. (2016): words split on whitespace, characters plus ``</w>`` marking the end of
    a word, BPE merges learned inside words."""
    return PipelineConfig(
        normalizers=(),
        pre_tokenizers=(component("WhitespaceSplit"),),
        model="BPE",
        special_tokens=("<unk>",),
        unk_token="<unk>",
        end_of_word_suffix="</w>",
    )


@dataclass(frozen=True, slots=True)
class Preset:
    label: str
    build: Callable[[], PipelineConfig]
    summary: str


#: Presets by the key used in links (``?preset=gpt2``), in the order the page lists them.
PRESETS: dict[str, Preset] = {
    "gpt2": Preset("GPT-2-like byte-level BPE", gpt2_like, "Bytes, not characters: every text is representable, no [UNK] ever."),
    "bert": Preset("BERT-like WordPiece", bert_like, "Lowercased, accents stripped; word pieces continue with ##."),
    "t5": Preset("T5 / SentencePiece-like Unigram", t5_like, "A probabilistic vocabulary pruned from many candidates; ▁ marks word starts."),
    "char_bpe": Preset("Character BPE with </w> (original paper)", char_bpe, "Sennrich et al. 2016: merges inside words, </w> ends each word."),
}
DEFAULT_PRESET = "gpt2"


def preset_key(config: PipelineConfig) -> str | None:
    """The key of the preset equal to ``config``, or ``None`` when the user changed something.

    >>> preset_key(bert_like()), preset_key(bert_like().with_model("BPE"))
    ('bert', None)
    """
    return next((key for key, preset in PRESETS.items() if preset.build() == config), None)


#: How each algorithm is named on the pages (``history.algorithm`` and ``config.model`` spell them differently).
ALGORITHM_LABELS = {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel"}


def algorithm_label(algorithm: str) -> str:
    """The display name of an algorithm, however it is spelled.

    >>> algorithm_label("unigram"), algorithm_label("WordPiece"), algorithm_label("bpe")
    ('Unigram', 'WordPiece', 'BPE')
    """
    return ALGORITHM_LABELS.get(algorithm.lower(), algorithm)


def preset_label(key: str, trained_size: int | None = None) -> str:
    """A preset's label, with the size it really trained to when that is known.

    >>> preset_label("t5", 655), preset_label("bert")
    ('T5 / SentencePiece-like Unigram (655 tokens)', 'BERT-like WordPiece')
    """
    label = PRESETS[key].label
    return f"{label} ({trained_size:,} tokens)" if trained_size is not None else label
