"""``CharBPETokenizer``: the original BPE of Sennrich et al. (BERT normalizer and pre-tokenizer,
``</w>`` at the end of every word)."""

from __future__ import annotations

from typing import Any, Iterable

from tokviz import decoders, pre_tokenizers, trainers
from tokviz.implementations.base_tokenizer import BaseTokenizer, normalizer_sequence, train_files
from tokviz.models import BPE
from tokviz.normalizers import BertNormalizer, Lowercase, unicode_normalizer_from_str
from tokviz.tokenizer import Tokenizer


class CharBPETokenizer(BaseTokenizer):
    """Character-level BPE with an end-of-word ``suffix``."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        unk_token: Any = "<unk>",
        suffix: str = "</w>",
        dropout: float | None = None,
        lowercase: bool = False,
        unicode_normalizer: str | None = None,
        bert_normalizer: bool = True,
        split_on_whitespace_only: bool = False,
    ) -> None:
        if vocab is not None and merges is not None:
            model = BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token), end_of_word_suffix=suffix)
        else:
            model = BPE(unk_token=str(unk_token), dropout=dropout, end_of_word_suffix=suffix)
        tokenizer = Tokenizer(model)
        if tokenizer.token_to_id(str(unk_token)) is not None:
            tokenizer.add_special_tokens([str(unk_token)])
        steps = []
        if unicode_normalizer:
            steps.append(unicode_normalizer_from_str(unicode_normalizer))
        if bert_normalizer:
            steps.append(BertNormalizer(lowercase=False))
        if lowercase:
            steps.append(Lowercase())
        tokenizer.normalizer = normalizer_sequence(steps)
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit() if split_on_whitespace_only else pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)
        super().__init__(tokenizer, {
            "model": "BPE", "unk_token": unk_token, "suffix": suffix, "dropout": dropout, "lowercase": lowercase,
            "unicode_normalizer": unicode_normalizer, "bert_normalizer": bert_normalizer,
            "split_on_whitespace_only": split_on_whitespace_only,
        })

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "CharBPETokenizer":
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(
        vocab_size: int, min_frequency: int, special_tokens: list[Any], limit_alphabet: int,
        initial_alphabet: list[str], suffix: str | None, show_progress: bool,
    ) -> Any:
        return trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(special_tokens),
            limit_alphabet=limit_alphabet, initial_alphabet=list(initial_alphabet), end_of_word_suffix=suffix,
            show_progress=show_progress,
        )

    def train(
        self, files: str | list[str], vocab_size: int = 30000, min_frequency: int = 2,
        special_tokens: list[Any] = ["<unk>"], limit_alphabet: int = 1000,  # noqa: B006 - HF's signature
        initial_alphabet: list[str] = [], suffix: str | None = "</w>", show_progress: bool = True,  # noqa: B006
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet, initial_alphabet, suffix, show_progress)
        self._tokenizer.train(train_files(files), trainer=trainer)

    def train_from_iterator(
        self, iterator: Iterable[Any], vocab_size: int = 30000, min_frequency: int = 2,
        special_tokens: list[Any] = ["<unk>"], limit_alphabet: int = 1000,  # noqa: B006 - HF's signature
        initial_alphabet: list[str] = [], suffix: str | None = "</w>", show_progress: bool = True,  # noqa: B006
        length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet, initial_alphabet, suffix, show_progress)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)
