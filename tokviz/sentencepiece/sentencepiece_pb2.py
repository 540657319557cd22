"""``sentencepiece_pb2`` as the ``sentencepiece`` package ships it: the result messages of an encode or decode.

``SentencePieceText`` is what ``encode(..., return_type="proto")`` returns: the input ``text`` and, per
piece, the ``piece``, its ``id``, the ``surface`` (the input characters it covers) and ``begin`` /
``end`` (UTF-8 byte offsets into ``text``). ``NBestSentencePieceText`` holds n of them.

    >>> t = SentencePieceText(text="ab")
    >>> _ = t.pieces.add(piece="▁ab", id=5, surface="ab", begin=0, end=2)
    >>> SentencePieceText.FromString(t.SerializeToString()) == t
    True
"""

from __future__ import annotations

from tokviz.sentencepiece.messages import DecodeError, Message

__all__ = ["SentencePieceText", "NBestSentencePieceText", "DecodeError"]


class SentencePieceText(Message):
    class SentencePiece(Message):
        FIELDS = {"piece": (1, "string", False, ""), "id": (2, "uint32", False, 0), "surface": (3, "string", False, ""),
                  "begin": (4, "uint32", False, 0), "end": (5, "uint32", False, 0)}

    FIELDS = {"text": (1, "string", False, ""), "pieces": (2, SentencePiece, True, ()), "score": (3, "float", False, 0.0)}


class NBestSentencePieceText(Message):
    FIELDS = {"nbests": (1, SentencePieceText, True, ())}
