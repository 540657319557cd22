"""``BaseTokenizer``: a :class:`~tokviz.tokenizer.Tokenizer` plus the parameters it was built with.

HF's ready-made tokenizers (``ByteLevelBPETokenizer``, ``BertWordPieceTokenizer``, ...) are
thin wrappers: every call goes to the wrapped tokenizer, ``_tokenizer``. The repr names the
class and its parameters::

    >>> from tokviz import Tokenizer
    >>> from tokviz.models import WordLevel
    >>> BaseTokenizer(Tokenizer(WordLevel({"a": 0}, unk_token="a")), {"model": "WordLevel"})
    Tokenizer(vocabulary_size=1, model=WordLevel)
"""

from __future__ import annotations

from typing import Any, Iterable

from tokviz.tokenizer import Tokenizer


class BaseTokenizer:
    """What every ready-made tokenizer does: pass calls through to ``self._tokenizer``."""

    def __init__(self, tokenizer: Tokenizer, parameters: dict[str, Any] | None = None) -> None:
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"BaseTokenizer wraps a Tokenizer, got {type(tokenizer).__name__}.")
        self._tokenizer = tokenizer
        self._parameters = dict(parameters) if parameters is not None else {}

    def __repr__(self) -> str:
        parameters = ", ".join(f"{key}={value}" for key, value in self._parameters.items())
        size = self._tokenizer.get_vocab_size()
        return f"Tokenizer(vocabulary_size={size}{', ' if parameters else ''}{parameters})"

    # ----------------------------------------------------------------- pass-throughs
    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self) -> dict[int, Any]:
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def enable_padding(
        self,
        direction: str = "right",
        pad_to_multiple_of: int | None = None,
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
    ) -> None:
        self._tokenizer.enable_padding(
            direction=direction, pad_to_multiple_of=pad_to_multiple_of, pad_id=pad_id,
            pad_type_id=pad_type_id, pad_token=pad_token, length=length,
        )

    def no_padding(self) -> None:
        self._tokenizer.no_padding()

    @property
    def padding(self) -> dict[str, Any] | None:
        return self._tokenizer.padding

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first") -> None:
        self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self) -> None:
        self._tokenizer.no_truncation()

    @property
    def truncation(self) -> dict[str, Any] | None:
        return self._tokenizer.truncation

    def add_tokens(self, tokens: Iterable[Any]) -> int:
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens: Iterable[Any]) -> int:
        return self._tokenizer.add_special_tokens(special_tokens)

    def normalize(self, sequence: str) -> str:
        normalizer = self._tokenizer.normalizer
        return sequence if normalizer is None else normalizer.normalize_str(sequence)

    def encode(
        self, sequence: Any, pair: Any = None, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> Any:
        if sequence is None:
            raise ValueError("encode: `sequence` can't be `None`")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, inputs: list[Any], is_pretokenized: bool = False, add_special_tokens: bool = True) -> list[Any]:
        if inputs is None:
            raise ValueError("encode_batch: `inputs` can't be `None`")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        if ids is None:
            raise ValueError("None input is not valid. Should be a list of integers.")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True) -> list[str]:
        if sequences is None:
            raise ValueError("None input is not valid. Should be list of list of integers.")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._tokenizer.id_to_token(id)

    def save_model(self, directory: str, prefix: str | None = None) -> list[str]:
        """The model's own files (``vocab.json`` / ``merges.txt`` / ``vocab.txt``) in ``directory``."""
        return self._tokenizer.model.save(directory, prefix=prefix)

    def save(self, path: str, pretty: bool = True) -> None:
        self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False) -> str:
        return self._tokenizer.to_str(pretty)

    def post_process(self, encoding: Any, pair: Any = None, add_special_tokens: bool = True) -> Any:
        return self._tokenizer.post_process(encoding, pair, add_special_tokens)

    # ----------------------------------------------------------------- components
    @property
    def model(self) -> Any:
        return self._tokenizer.model

    @model.setter
    def model(self, model: Any) -> None:
        self._tokenizer.model = model

    @property
    def normalizer(self) -> Any:
        return self._tokenizer.normalizer

    @normalizer.setter
    def normalizer(self, normalizer: Any) -> None:
        self._tokenizer.normalizer = normalizer

    @property
    def pre_tokenizer(self) -> Any:
        return self._tokenizer.pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, pre_tokenizer: Any) -> None:
        self._tokenizer.pre_tokenizer = pre_tokenizer

    @property
    def post_processor(self) -> Any:
        return self._tokenizer.post_processor

    @post_processor.setter
    def post_processor(self, processor: Any) -> None:
        self._tokenizer.post_processor = processor

    @property
    def decoder(self) -> Any:
        return self._tokenizer.decoder

    @decoder.setter
    def decoder(self, decoder: Any) -> None:
        self._tokenizer.decoder = decoder


def train_files(files: str | list[str]) -> list[str]:
    """``"a.txt" -> ["a.txt"]``: HF's ``train`` takes one path or a list."""
    return [files] if isinstance(files, str) else list(files)


def normalizer_sequence(normalizers: list[Any]) -> Any:
    """None, the one normalizer, or a ``Sequence`` of them (what HF's wrappers set)."""
    from tokviz.normalizers import Sequence

    if not normalizers:
        return None
    return normalizers[0] if len(normalizers) == 1 else Sequence(normalizers)
