"""Corpus statistics: what a user pasted, in numbers a teacher can read out loud.

>>> stats = corpus_stats("a가 짧\\nab")
>>> (stats.characters, stats.utf8_bytes, stats.lines, stats.distinct_characters)
(7, 11, 2, 6)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CorpusStats:
    characters: int
    utf8_bytes: int
    lines: int
    non_empty_lines: int
    distinct_characters: int


def corpus_stats(text: str) -> CorpusStats:
    """Counts over the raw text (before any normalizer); lines as ``str.splitlines`` sees them."""
    lines = text.splitlines()
    return CorpusStats(
        characters=len(text),
        utf8_bytes=len(text.encode("utf-8", errors="surrogatepass")),
        lines=len(lines),
        non_empty_lines=sum(1 for line in lines if line.strip()),
        distinct_characters=len(set(text)),
    )
