"""``ByteLevelBPETokenizer``: GPT-2's pipeline (byte-level pre-tokenizer, BPE, byte-level decoder)."""

from __future__ import annotations

from typing import Any, Iterable

from tokviz import decoders, pre_tokenizers, processors, trainers
from tokviz.implementations.base_tokenizer import BaseTokenizer, normalizer_sequence, train_files
from tokviz.models import BPE
from tokviz.normalizers import Lowercase, unicode_normalizer_from_str
from tokviz.tokenizer import Tokenizer


class ByteLevelBPETokenizer(BaseTokenizer):
    """Byte-level BPE as GPT-2 and RoBERTa use it; ``vocab``/``merges`` are dicts/lists or file paths."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        merges: str | list[tuple[str, str]] | None = None,
        add_prefix_space: bool = False,
        lowercase: bool = False,
        dropout: float | None = None,
        unicode_normalizer: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        trim_offsets: bool = False,
    ) -> None:
        if vocab is not None and merges is not None:
            model = BPE(
                vocab, merges, dropout=dropout,
                continuing_subword_prefix=continuing_subword_prefix or "",
                end_of_word_suffix=end_of_word_suffix or "",
            )
        else:
            model = BPE()
        tokenizer = Tokenizer(model)
        steps = []
        if unicode_normalizer:
            steps.append(unicode_normalizer_from_str(unicode_normalizer))
        if lowercase:
            steps.append(Lowercase())
        tokenizer.normalizer = normalizer_sequence(steps)
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        super().__init__(tokenizer, {
            "model": "ByteLevelBPE", "add_prefix_space": add_prefix_space, "lowercase": lowercase,
            "dropout": dropout, "unicode_normalizer": unicode_normalizer,
            "continuing_subword_prefix": continuing_subword_prefix, "end_of_word_suffix": end_of_word_suffix,
            "trim_offsets": trim_offsets,
        })

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "ByteLevelBPETokenizer":
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    def _trainer(self, vocab_size: int, min_frequency: int, show_progress: bool, special_tokens: list[Any]) -> Any:
        return trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, show_progress=show_progress,
            special_tokens=list(special_tokens), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )

    def train(
        self, files: str | list[str], vocab_size: int = 30000, min_frequency: int = 2,
        show_progress: bool = True, special_tokens: list[Any] = [],  # noqa: B006 - HF's signature
    ) -> None:
        self._tokenizer.train(train_files(files), trainer=self._trainer(vocab_size, min_frequency, show_progress, special_tokens))

    def train_from_iterator(
        self, iterator: Iterable[Any], vocab_size: int = 30000, min_frequency: int = 2,
        show_progress: bool = True, special_tokens: list[Any] = [],  # noqa: B006 - HF's signature
        length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, show_progress, special_tokens)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)
