"""Ready-made pipelines, named as in ``tokenizers.implementations``.

Each class builds a :class:`~tokviz.tokenizer.Tokenizer` with the components HF's class of
the same name uses, takes the same constructor arguments, and trains with the same
defaults (``train(files, vocab_size=...)``, ``train_from_iterator(texts, ...)``)::

    >>> from tokviz.implementations import CharBPETokenizer
    >>> tok = CharBPETokenizer()
    >>> tok.train_from_iterator(["low lower lowest"] * 3, vocab_size=40, min_frequency=1, show_progress=False)
    >>> tok.encode("lower").tokens
    ['lower</w>']

The wrapped :class:`Tokenizer` is ``tok._tokenizer`` (as in HF); its components are reachable as
``tok.model``, ``tok.normalizer``, ... Left out: ``SentencePieceUnigramTokenizer.from_spm`` reads the
``.model`` file with tokviz's own SentencePiece reader.
"""

from __future__ import annotations

from tokviz._lazy import lazy_exports

_EXPORTS = {
    "BaseTokenizer": "tokviz.implementations.base_tokenizer",
    "ByteLevelBPETokenizer": "tokviz.implementations.byte_level_bpe",
    "CharBPETokenizer": "tokviz.implementations.char_level_bpe",
    "SentencePieceBPETokenizer": "tokviz.implementations.sentencepiece_bpe",
    "SentencePieceUnigramTokenizer": "tokviz.implementations.sentencepiece_unigram",
    "BertWordPieceTokenizer": "tokviz.implementations.bert_wordpiece",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
