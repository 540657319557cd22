"""``tokviz.models.models``: the same classes as :mod:`tokviz.models`, under the name of HF's
compiled submodule (``tokenizers.models.models.Unigram()`` appears in tutorial code).

>>> from tokviz import models
>>> models.models.Unigram is models.Unigram
True
"""

from __future__ import annotations

from tokviz.models.base import Model, Token
from tokviz.models.bpe.model import BPE
from tokviz.models.unigram.model import Unigram
from tokviz.models.wordlevel.model import WordLevel
from tokviz.models.wordpiece.model import WordPiece

__all__ = ["BPE", "Model", "Token", "Unigram", "WordLevel", "WordPiece"]
