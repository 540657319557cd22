"""The sentence path of :mod:`tokviz.sentencepiece.trainer`: corpora that are not counted as words in one pass.

A BPE training on plain lines (each line once, words cut at each ``▁``: the usual ``SentencePieceTrainer.train``)
counts its words straight from the lines and never loads this module. Sampled or ``tsv`` input
(``input_sentence_size``, ``input_format``) is read here; the unigram, char and word trainers, lines with counts,
a pretokenizer, a pretokenization delimiter, and words cut otherwise (``treat_whitespace_as_suffix``,
``split_by_whitespace=false``, ``allow_whitespace_only_pieces``) keep the normalized sentences, made here.
(Its own module: what a training does not run, it does not compile; this machine sets ``PYTHONDONTWRITEBYTECODE``.)
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any, Callable, Iterable

from tokviz.sentencepiece.model_proto import TrainerSpec
from tokviz.sentencepiece.pieces import BOUNDARY, UNK_CHAR, count_words, split_into_words
from tokviz.sentencepiece.processor import SentencePieceError
from tokviz.sentencepiece.trainer_bpe import use_numpy


def _sample_lines(spec: TrainerSpec, lines: Iterable[str]) -> tuple[list[str], list[int], int]:
    """``(lines kept, their counts, lines too long)``: sentencepiece's reading loop (tsv lines
    ``text<TAB>count``; the first ``input_sentence_size`` lines, or a seeded sample of that many)."""
    raw: list[tuple[str, int]] = []
    too_long = 0
    limit = spec.input_sentence_size
    rng = random.Random(12345678)
    seen = 0
    is_tsv = spec.input_format == "tsv"
    max_length = spec.max_sentence_length
    for line in lines:
        if not isinstance(line, str):
            line = bytes(line).decode("utf-8", errors="replace")
        freq = 1
        if is_tsv:
            parts = line.split("\t")
            if len(parts) != 2:
                raise SentencePieceError(f"INTERNAL: Input format must be: word <tab> freq. {line}")
            line, freq = parts[0], int(parts[1])
        if not line:
            continue
        size = len(line)  # characters <= UTF-8 bytes <= 4 * characters: encode only when it matters
        if size > max_length or (4 * size > max_length and len(line.encode("utf-8")) > max_length):
            too_long += 1
            continue
        if UNK_CHAR in line:
            continue
        if limit > 0:
            if spec.shuffle_input_sentence:
                seen += 1
                if len(raw) < limit:
                    raw.append((line, freq))
                else:
                    slot = rng.randrange(seen)
                    if slot < limit:
                        raw[slot] = (line, freq)
                continue
            raw.append((line, freq))
            if len(raw) >= limit:
                break
        else:
            raw.append((line, freq))
    return [line for line, _ in raw], [freq for _, freq in raw], too_long


def _pretokenize(texts: list[str], pretokenizer: Callable[[str], Any], allow_inconsistent: bool) -> list[str]:
    """Each normalized text cut where ``pretokenizer`` cuts it (:data:`BOUNDARY` between its pieces, no
    piece crosses, as for meta pieces); its pieces must spell the text unless ``allow_inconsistent``.

    >>> _pretokenize(["▁ab▁c"], lambda t: t.replace("▁", " ▁").split(" "), False)
    ['▁ab\\x1f▁c']
    """
    out: list[str] = []
    for text in texts:
        try:
            pieces = pretokenizer(text)
        except (RuntimeError, ValueError):
            raise
        except Exception as exc:  # (a user's function: say which step failed)
            raise SentencePieceError(f"INTERNAL: the pretokenizer raised {type(exc).__name__}: {exc}") from exc
        if isinstance(pieces, str) or not all(isinstance(piece, str) for piece in pieces):
            raise TypeError("the pretokenizer must return a list of str.")
        if "".join(pieces) != text and not allow_inconsistent:
            raise SentencePieceError(
                f"INTERNAL: the pretokenizer's pieces {pieces[:5]!r} do not spell the normalized text {text[:60]!r}; "
                "set allow_inconsistent_pretokenization=True to train on its pieces anyway.")
        out.append(BOUNDARY.join(piece for piece in pieces if piece))
    return out


def _without_empty(sentences: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """sentencepiece's removal of empty sentences: each replaced by the last one (the order its
    unigram seeds see). ``[("", 1), ("a", 1), ("b", 1)] -> [("b", 1), ("a", 1)]``."""
    at = 0
    while at < len(sentences):
        if sentences[at][0]:
            at += 1
        else:
            sentences[at] = sentences[-1]
            sentences.pop()
    return sentences


def _char_counts(text: str, numpy: bool | None = None) -> dict[str, int]:
    """``Counter(text)``, a long text (:func:`~tokviz.sentencepiece.trainer_bpe.use_numpy`) in one numpy pass over
    the code points: ``_char_counts("abca") == {"a": 2, "b": 1, "c": 1}``."""
    if not text:
        return {}
    if not (use_numpy(len(text)) if numpy is None else numpy):
        return dict(Counter(text))
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
    tally = np.bincount(codes)
    present = np.flatnonzero(tally)
    return {chr(code): count for code, count in zip(present.tolist(), tally[present].tolist())}


def _replace_rare(sentences: list[tuple[str, int]], rare: str) -> list[tuple[str, int]]:
    """Every character of ``rare`` becomes the unknown marker ``▅``, by one regex pass over the joined texts."""
    texts = [text for text, _ in sentences]
    pattern = re.compile("[" + "".join(re.escape(char) for char in rare) + "]")
    blob = "".join(texts)
    for sep in ("\n", "\0", "\uffff"):
        if sep not in blob and sep not in rare:
            replaced = pattern.sub(UNK_CHAR, sep.join(texts)).split(sep)
            return [(text, freq) for text, (_, freq) in zip(replaced, sentences)]
    table = {ord(char): UNK_CHAR for char in rare}
    return [(text.translate(table), freq) for text, freq in sentences]


def _words(spec: TrainerSpec, sentences: Iterable[tuple[str, int]]) -> dict[str, int]:
    """sentencepiece's ``SplitSentencesByWhitespace``: ``{word: count}`` (in no particular order)."""
    words: Counter[str] = Counter()
    if spec.split_by_whitespace and all(freq == 1 for _, freq in sentences):
        words = count_words([text for text, _ in sentences], spec.treat_whitespace_as_suffix,
                            spec.allow_whitespace_only_pieces)
    else:
        for text, freq in sentences:
            if not spec.split_by_whitespace:
                words[text] += freq
            else:
                for word in split_into_words(text, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces):
                    words[word] += freq
    return words
