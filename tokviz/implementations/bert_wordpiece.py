"""``BertWordPieceTokenizer``: BERT's pipeline (BERT normalizer and pre-tokenizer, WordPiece,
``[CLS] ... [SEP]`` around every sequence)."""

from __future__ import annotations

from typing import Any, Iterable

from tokviz import decoders, trainers
from tokviz.implementations.base_tokenizer import BaseTokenizer, train_files
from tokviz.models import WordPiece
from tokviz.normalizers import BertNormalizer
from tokviz.pre_tokenizers import BertPreTokenizer
from tokviz.processors import BertProcessing
from tokviz.tokenizer import Tokenizer

_DEFAULT_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class BertWordPieceTokenizer(BaseTokenizer):
    """WordPiece as BERT uses it; ``vocab`` is a dict or the path of a ``vocab.txt``."""

    def __init__(
        self,
        vocab: str | dict[str, int] | None = None,
        unk_token: Any = "[UNK]",
        sep_token: Any = "[SEP]",
        cls_token: Any = "[CLS]",
        pad_token: Any = "[PAD]",
        mask_token: Any = "[MASK]",
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
        wordpieces_prefix: str = "##",
    ) -> None:
        if vocab is not None:
            model = WordPiece(vocab, unk_token=str(unk_token))
        else:
            model = WordPiece(unk_token=str(unk_token))
        tokenizer = Tokenizer(model)
        for token in (unk_token, sep_token, cls_token, pad_token, mask_token):
            if tokenizer.token_to_id(str(token)) is not None:
                tokenizer.add_special_tokens([str(token)])
        tokenizer.normalizer = BertNormalizer(
            clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
            strip_accents=strip_accents, lowercase=lowercase,
        )
        tokenizer.pre_tokenizer = BertPreTokenizer()
        if vocab is not None:
            sep_id = tokenizer.token_to_id(str(sep_token))
            if sep_id is None:
                raise TypeError("sep_token not found in the vocabulary")
            cls_id = tokenizer.token_to_id(str(cls_token))
            if cls_id is None:
                raise TypeError("cls_token not found in the vocabulary")
            tokenizer.post_processor = BertProcessing((str(sep_token), sep_id), (str(cls_token), cls_id))
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)
        super().__init__(tokenizer, {
            "model": "BertWordPiece", "unk_token": unk_token, "sep_token": sep_token, "cls_token": cls_token,
            "pad_token": pad_token, "mask_token": mask_token, "clean_text": clean_text,
            "handle_chinese_chars": handle_chinese_chars, "strip_accents": strip_accents,
            "lowercase": lowercase, "wordpieces_prefix": wordpieces_prefix,
        })

    @staticmethod
    def from_file(vocab: str, **kwargs: Any) -> "BertWordPieceTokenizer":
        return BertWordPieceTokenizer(WordPiece.read_file(vocab), **kwargs)

    @staticmethod
    def _trainer(
        vocab_size: int, min_frequency: int, limit_alphabet: int, initial_alphabet: list[str],
        special_tokens: list[Any], show_progress: bool, wordpieces_prefix: str,
    ) -> Any:
        return trainers.WordPieceTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, limit_alphabet=limit_alphabet,
            initial_alphabet=list(initial_alphabet), special_tokens=list(special_tokens),
            show_progress=show_progress, continuing_subword_prefix=wordpieces_prefix,
        )

    def train(
        self, files: str | list[str], vocab_size: int = 30000, min_frequency: int = 2, limit_alphabet: int = 1000,
        initial_alphabet: list[str] = [], special_tokens: list[Any] = _DEFAULT_SPECIAL,  # noqa: B006 - HF's signature
        show_progress: bool = True, wordpieces_prefix: str = "##",
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, limit_alphabet, initial_alphabet, special_tokens, show_progress, wordpieces_prefix)
        self._tokenizer.train(train_files(files), trainer=trainer)

    def train_from_iterator(
        self, iterator: Iterable[Any], vocab_size: int = 30000, min_frequency: int = 2, limit_alphabet: int = 1000,
        initial_alphabet: list[str] = [], special_tokens: list[Any] = _DEFAULT_SPECIAL,  # noqa: B006 - HF's signature
        show_progress: bool = True, wordpieces_prefix: str = "##", length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, limit_alphabet, initial_alphabet, special_tokens, show_progress, wordpieces_prefix)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)
