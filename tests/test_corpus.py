from __future__ import annotations

from tokviz.corpus import CorpusStats, corpus_stats


def test_korean_counts_characters_and_bytes_separately() -> None:
    # 'a가 짧' is 4 characters and 8 UTF-8 bytes (1 + 3 + 1 + 3).
    assert corpus_stats("a가 짧") == CorpusStats(characters=4, utf8_bytes=8, lines=1, non_empty_lines=1, distinct_characters=4)


def test_lines_and_blank_lines() -> None:
    stats = corpus_stats("one\n\n two\r\nthree")
    assert (stats.lines, stats.non_empty_lines) == (4, 3)


def test_empty_text() -> None:
    assert corpus_stats("") == CorpusStats(0, 0, 0, 0, 0)
