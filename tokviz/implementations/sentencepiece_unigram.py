"""``SentencePieceUnigramTokenizer``: a Unigram model behind SentencePiece's pipeline
(``Nmt``, ``NFKC``, runs of spaces to one, ``▁`` for spaces)."""

from __future__ import annotations

from typing import Any, Iterable

from tokviz import decoders, normalizers, pre_tokenizers, trainers
from tokviz.implementations.base_tokenizer import BaseTokenizer, train_files
from tokviz.models import Unigram
from tokviz.patterns import Regex
from tokviz.tokenizer import Tokenizer


class SentencePieceUnigramTokenizer(BaseTokenizer):
    """Unigram with ``vocab`` as ``[(piece, score), ...]``."""

    def __init__(
        self,
        vocab: list[tuple[str, float]] | None = None,
        replacement: str = "▁",
        add_prefix_space: bool = True,
    ) -> None:
        tokenizer = Tokenizer(Unigram(vocab) if vocab is not None else Unigram())
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        prepend_scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)
        super().__init__(tokenizer, {
            "model": "SentencePieceUnigram", "replacement": replacement, "add_prefix_space": add_prefix_space,
        })

    @staticmethod
    def _trainer(
        vocab_size: int, show_progress: bool, special_tokens: list[Any] | None,
        initial_alphabet: list[str] | None, unk_token: str | None,
    ) -> Any:
        return trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=list(special_tokens or []), show_progress=show_progress,
            initial_alphabet=list(initial_alphabet or []), unk_token=unk_token,
        )

    def train(
        self, files: str | list[str], vocab_size: int = 8000, show_progress: bool = True,
        special_tokens: list[Any] | None = None, initial_alphabet: list[str] | None = None,
        unk_token: str | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, show_progress, special_tokens, initial_alphabet, unk_token)
        self._tokenizer.train(train_files(files), trainer=trainer)

    def train_from_iterator(
        self, iterator: Iterable[Any], vocab_size: int = 8000, show_progress: bool = True,
        special_tokens: list[Any] | None = None, initial_alphabet: list[str] | None = None,
        unk_token: str | None = None, length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, show_progress, special_tokens, initial_alphabet, unk_token)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

    @staticmethod
    def from_spm(filename: str) -> "SentencePieceUnigramTokenizer":
        """A SentencePiece ``.model`` file as this class (read by tokviz's own protobuf reader)."""
        from pathlib import Path

        from tokviz.sentencepiece.convert import from_model_bytes

        converted = from_model_bytes(Path(filename).read_bytes())
        wrapper = SentencePieceUnigramTokenizer.__new__(SentencePieceUnigramTokenizer)
        BaseTokenizer.__init__(wrapper, converted, {"model": "SentencePieceUnigram"})
        return wrapper
