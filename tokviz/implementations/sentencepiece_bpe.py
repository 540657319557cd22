"""``SentencePieceBPETokenizer``: BPE behind SentencePiece's pipeline (NFKC, ``▁`` for spaces)."""

from __future__ import annotations

from typing import Any, Iterable

from tokviz import decoders, pre_tokenizers, trainers
from tokviz.implementations.base_tokenizer import BaseTokenizer, train_files
from tokviz.models import BPE
from tokviz.normalizers import NFKC
from tokviz.tokenizer import Tokenizer


class SentencePieceBPETokenizer(BaseTokenizer):
    """BPE with a ``Metaspace`` pre-tokenizer and decoder (``add_prefix_space`` puts ``▁`` first)."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        unk_token: Any = "<unk>",
        replacement: str = "▁",
        add_prefix_space: bool = True,
        dropout: float | None = None,
        fuse_unk: bool | None = False,
    ) -> None:
        if vocab is not None and merges is not None:
            model = BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token), fuse_unk=fuse_unk)
        else:
            model = BPE(dropout=dropout, unk_token=str(unk_token), fuse_unk=fuse_unk)
        tokenizer = Tokenizer(model)
        if tokenizer.token_to_id(str(unk_token)) is not None:
            tokenizer.add_special_tokens([str(unk_token)])
        tokenizer.normalizer = NFKC()
        prepend_scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        super().__init__(tokenizer, {
            "model": "SentencePieceBPE", "unk_token": unk_token, "replacement": replacement,
            "add_prefix_space": add_prefix_space, "dropout": dropout,
        })

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "SentencePieceBPETokenizer":
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(
        vocab_size: int, min_frequency: int, special_tokens: list[Any], limit_alphabet: int,
        initial_alphabet: list[str], show_progress: bool,
    ) -> Any:
        return trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(special_tokens),
            limit_alphabet=limit_alphabet, initial_alphabet=list(initial_alphabet), show_progress=show_progress,
        )

    def train(
        self, files: str | list[str], vocab_size: int = 30000, min_frequency: int = 2,
        special_tokens: list[Any] = ["<unk>"], limit_alphabet: int = 1000,  # noqa: B006 - HF's signature
        initial_alphabet: list[str] = [], show_progress: bool = True,  # noqa: B006
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet, initial_alphabet, show_progress)
        self._tokenizer.train(train_files(files), trainer=trainer)

    def train_from_iterator(
        self, iterator: Iterable[Any], vocab_size: int = 30000, min_frequency: int = 2,
        special_tokens: list[Any] = ["<unk>"], limit_alphabet: int = 1000,  # noqa: B006 - HF's signature
        initial_alphabet: list[str] = [], show_progress: bool = True,  # noqa: B006
        length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet, initial_alphabet, show_progress)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)
