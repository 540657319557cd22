"""Presets: four famous tokenizer recipes as :class:`~tokviz.pipeline_config.PipelineConfig`.

Each function returns the pipeline a well-known model family uses, with Hugging Face's
component names, so a user can start from something real and then change one thing:

>>> gpt2_like().pre_tokenizers[0].label()
'ByteLevel(add_prefix_space=False)'
>>> bert_like().model, bert_like().scoring, t5_like().model, char_bpe().end_of_word_suffix
('WordPiece', 'frequency', 'Unigram', '</w>')

Each preset trains as the real library does (BERT-like: HF ``WordPieceTrainer``'s pair
frequency, not the HF course's likelihood score; T5-like: SentencePiece's EM and pruning, as
HF's ``UnigramTrainer``) and its caption says so. The module also gives the labels the pages
show (:func:`algorithm_label`, :func:`scoring_label`, :func:`preset_label` with the trained
size) and :func:`vocab_target_hint` when a training stopped below its target.

What they leave out: the real models' trained vocabularies (you train your own), BERT's
Chinese-character vocabulary tricks, T5's ``Precompiled`` SentencePiece normalizer (NFKC plus
whitespace collapsing stands in for it), GPT-2's ``<|endoftext|>`` handling at encode time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tokviz.errors import PipelineConfigError
from tokviz.pipeline_config import PipelineConfig, component, sentencepiece_config


def bert_like() -> PipelineConfig:
    """BERT (uncased): BertNormalizer (clean, lowercase, strip accents), BertPreTokenizer, WordPiece
    with ``##`` continuations, ``[CLS] $A [SEP]``. Trained as HF ``tokenizers``' ``WordPieceTrainer``
    does: merges chosen by pair frequency (``scoring="frequency"``). The HF course's likelihood
    score stays available as a choice (``scoring="likelihood"``); at small vocab sizes it merges
    rare pairs first and cuts common words into more pieces."""
    return PipelineConfig(
        normalizers=(component("BertNormalizer", lowercase=True),),
        pre_tokenizers=(component("BertPreTokenizer"),),
        model="WordPiece",
        special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        unk_token="[UNK]",
        continuing_subword_prefix="##",
        scoring="frequency",
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


def sentencepiece_unigram() -> PipelineConfig:
    """T5 / ALBERT's SentencePiece: a Unigram model trained from raw sentences with the ``nmt_nfkc`` rule,
    T5's ids (``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2, no ``<s>``)."""
    return sentencepiece_config(sp_model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)


def sentencepiece_bpe() -> PipelineConfig:
    """Llama's SentencePiece: BPE with byte fallback (unknown characters become ``<0xNN>`` byte pieces),
    no normalization (``identity``), ``<unk>`` 0, ``<s>`` 1, ``</s>`` 2, coverage 0.99995."""
    return sentencepiece_config(sp_model_type="bpe", byte_fallback=True, normalization_rule="identity", character_coverage=0.99995)


@dataclass(frozen=True, slots=True)
class Preset:
    """A named pipeline: ``label`` for menus, ``summary`` for the caption (it ends with
    ``trains_like``, the library whose training it reproduces)."""

    label: str
    build: Callable[[], PipelineConfig]
    summary: str
    trains_like: str = ""
    default_vocab: int = 1000  # the vocab size the pages start it at


#: Where the Unigram presets start: their seed on the built-in sample is ~640-660 pieces, so at 1,000 the
#: training stops at the seed and a learner sees no EM step and no pruning round; at 500 both appear.
UNIGRAM_DEFAULT_VOCAB = 500


def _preset(label: str, build: Callable[[], PipelineConfig], what: str, default_vocab: int = 1000) -> Preset:
    like = trains_like(build())
    return Preset(label, build, f"{what} {like}", like, default_vocab)


def preset_vocab(key: str) -> int:
    """The vocab size a preset starts at (``custom``: 1,000): ``preset_vocab("t5") == 500``, ``preset_vocab("gpt2") == 1000``."""
    return TRAIN_PRESETS[key].default_vocab if key in TRAIN_PRESETS else 1000


DEFAULT_PRESET = "gpt2"


def preset_key(config: PipelineConfig) -> str | None:
    """The key of the preset equal to ``config``, or ``None`` when the user changed something.

    >>> preset_key(bert_like()), preset_key(bert_like().with_model("BPE"))
    ('bert', None)
    """
    return next((key for key, preset in TRAIN_PRESETS.items() if preset.build() == config), None)


# ---------------------------------------------------------------------------------------
# Labels the pages show

#: Display name of each algorithm, by ``PipelineConfig.model`` or ``TrainingHistory.algorithm``
#: (lower-cased: the Unigram trainer records ``"unigram"``).
ALGORITHM_LABELS: dict[str, str] = {
    "bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel", "sentencepiece": "SentencePiece",
    "sentencepiece-bpe": "SentencePiece BPE", "sentencepiece-unigram": "SentencePiece Unigram",
    "sentencepiece-char": "SentencePiece char", "sentencepiece-word": "SentencePiece word",
}

#: The two WordPiece scorings, as the scoring choice lists them.
SCORING_LABELS: dict[str, str] = {
    "frequency": "WordPiece — HF scoring (frequency)",
    "likelihood": "WordPiece — course scoring (likelihood)",
}


def algorithm_label(algorithm: str) -> str:
    """The display name of an algorithm, whatever its case in the record.

    >>> [algorithm_label(name) for name in ("unigram", "BPE", "WordPiece", "wordlevel")]
    ['Unigram', 'BPE', 'WordPiece', 'WordLevel']
    """
    try:
        return ALGORITHM_LABELS[algorithm.lower()]
    except KeyError:
        raise PipelineConfigError(f"Unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHM_LABELS.values())}.") from None


def scoring_label(scoring: str) -> str:
    """The label of a WordPiece scoring choice.

    >>> scoring_label("likelihood")
    'WordPiece — course scoring (likelihood)'
    """
    try:
        return SCORING_LABELS[scoring]
    except KeyError:
        raise PipelineConfigError(f"Unknown WordPiece scoring {scoring!r}; choose one of {', '.join(SCORING_LABELS)}.") from None


def model_label(config: PipelineConfig) -> str:
    """The algorithm of a pipeline as the pages name it, WordPiece with its scoring.

    >>> model_label(gpt2_like()), model_label(bert_like()), model_label(t5_like())
    ('BPE', 'WordPiece — HF scoring (frequency)', 'Unigram')
    """
    if config.model == "WordPiece":
        return scoring_label(config.scoring)
    if config.model == "SentencePiece":
        return algorithm_label(f"sentencepiece-{config.sp_model_type}")
    return algorithm_label(config.model)


def trains_like(config: PipelineConfig) -> str:
    """One sentence naming the library whose training ``config`` reproduces.

    >>> trains_like(bert_like())
    "Trains like HF tokenizers' WordPieceTrainer (merges by pair frequency)."
    >>> from dataclasses import replace
    >>> trains_like(replace(bert_like(), scoring="likelihood"))
    "Trains like the HF course's WordPiece (likelihood score), not like HF tokenizers' trainer."
    """
    if config.model == "WordPiece":
        if config.scoring == "frequency":
            return "Trains like HF tokenizers' WordPieceTrainer (merges by pair frequency)."
        return "Trains like the HF course's WordPiece (likelihood score), not like HF tokenizers' trainer."
    if config.model == "Unigram":
        if config.unigram_method == "course":
            return "Trains like the HF course's Unigram (scores from the seed counts, no EM)."
        return "Trains like sentencepiece / HF tokenizers' UnigramTrainer (EM, then pruning)."
    if config.model == "WordLevel":
        return "Trains like HF tokenizers' WordLevelTrainer (the most frequent words)."
    if config.model == "SentencePiece":
        return (f"Trains like the sentencepiece package (--model_type={config.sp_model_type}) on the corpus's raw lines, "
                "with these options and hard_vocab_limit=false.")
    return "Trains like HF tokenizers' BpeTrainer (merges by pair count)."


def preset_label(key: str, trained_size: int | None = None) -> str:
    """A preset's label, with the size the training really reached when known.

    >>> preset_label("t5", 655), preset_label("gpt2")
    ('T5 / SentencePiece-like Unigram (655 tokens)', 'GPT-2-like byte-level BPE')
    >>> preset_label("bert", 30522)
    'BERT-like WordPiece (30,522 tokens)'
    """
    if key not in TRAIN_PRESETS:
        raise PipelineConfigError(f"Unknown preset {key!r}; choose one of {', '.join(TRAIN_PRESETS)}.")
    label = TRAIN_PRESETS[key].label
    return label if trained_size is None else f"{label} ({trained_size:,} tokens)"


# ---------------------------------------------------------------------------------------
# When a training stops below its target


def suggested_unigram_size(min_size: int, seed_size: int) -> int:
    """A vocab size that makes Unigram prune: three quarters of the seed, rounded down to 100s
    (to 10s for small seeds), never below the smallest size the corpus allows.

    >>> suggested_unigram_size(329, 701), suggested_unigram_size(329, 655), suggested_unigram_size(40, 90)
    (500, 400, 60)
    """
    target = seed_size * 3 // 4
    step = 100 if target >= 200 else 10
    suggestion = target // step * step
    if suggestion <= min_size:
        suggestion = (min_size + seed_size) // 2
    return suggestion


def vocab_target_hint(history: Any, target_vocab: int) -> str | None:
    """A sentence for the page when training stopped below ``target_vocab``, else ``None``.

    Unigram starts from a seed vocabulary and prunes it down to the target: a target above
    the seed's size is never reached and no pruning round runs, so the EM and pruning views
    have little to show. The hint says so and suggests a size below the seed's. BPE and
    WordPiece stop when no pair is left to merge; WordLevel when every word is in.
    See tests/test_presets.py for the sentences on the built-in sample.
    """
    trained = history.model.get_vocab_size()
    if trained >= target_vocab:
        return None
    if history.algorithm.lower() == "unigram":
        seed = history.max_vocab_size
        suggestion = suggested_unigram_size(history.min_vocab_size, seed)
        rounds = len(getattr(getattr(history, "unigram", None) or history, "prune_rounds", ()))  # sentencepiece keeps them in .unigram
        pruned = "no pruning round ran" if rounds == 0 else f"{rounds} pruning round{'s' if rounds != 1 else ''} ran"
        return (
            f"Unigram stopped at {trained:,} tokens, below the target of {target_vocab:,}: its seed vocabulary "
            f"(every frequent substring of this corpus) has only {seed:,} pieces, and {pruned}. "
            f"Choose a vocab size below {seed:,} (for example {suggestion:,}) to watch EM and pruning at work."
        )
    name = algorithm_label(history.algorithm)
    if history.algorithm.startswith("sentencepiece-"):
        return (f"{name} stopped at {trained:,} pieces, below the target of {target_vocab:,}: "
                + {"sentencepiece-char": "a char model holds the alphabet and nothing more.",
                   "sentencepiece-word": "the corpus has no more distinct words."}.get(
                    history.algorithm, "sentencepiece found no more pieces in this corpus (trained with hard_vocab_limit=false; "
                    "the sentencepiece package with its default hard limit would refuse this target).")
                + " A larger corpus gives a larger vocabulary.")
    if name == "WordLevel":
        return f"WordLevel stopped at {trained:,} tokens, below the target of {target_vocab:,}: the corpus has no more distinct words."
    return (
        f"{name} stopped at {trained:,} tokens, below the target of {target_vocab:,}: no pair of tokens is left to merge "
        f"in this corpus. A larger corpus gives a larger vocabulary."
    )


#: Presets by the key used in links (``?preset=gpt2``), in the order the page lists them.
PRESETS: dict[str, Preset] = {
    "gpt2": _preset("GPT-2-like byte-level BPE", gpt2_like, "Bytes, not characters: every text is representable, no [UNK] ever."),
    "bert": _preset("BERT-like WordPiece", bert_like, "Lowercased, accents stripped; word pieces continue with ##."),
    "t5": _preset("T5 / SentencePiece-like Unigram", t5_like, "A probabilistic vocabulary pruned from many candidates; ▁ marks word starts.",
                  UNIGRAM_DEFAULT_VOCAB),
    "char_bpe": _preset("Character BPE with </w> (original paper)", char_bpe, "Sennrich et al. 2016: merges inside words, </w> ends each word."),
}

#: SentencePiece presets: on the Train page beside :data:`PRESETS` (Compare, Pipeline and Inspect list only those).
SENTENCEPIECE_PRESETS: dict[str, Preset] = {
    "sp_unigram": _preset("SentencePiece Unigram (T5/ALBERT-like)", sentencepiece_unigram,
                          "Raw sentences, no pre-tokenizer: ▁ marks spaces; nmt_nfkc normalization; T5's ids (<pad> 0, </s> 1, <unk> 2).",
                          UNIGRAM_DEFAULT_VOCAB),
    "sp_bpe": _preset("SentencePiece BPE (Llama-like, byte fallback)", sentencepiece_bpe,
                      "Raw sentences, no normalization; characters outside the alphabet fall back to <0xNN> byte pieces "
                      "(Llama also sets split_digits and keeps extra whitespace, which this preset leaves out)."),
}
#: Every preset the Train page offers, by link key.
TRAIN_PRESETS: dict[str, Preset] = {**PRESETS, **SENTENCEPIECE_PRESETS}
