"""Shared fixtures: tiny literal corpora, the built-in sample, and the shared corpora.

The shared corpora live beside the project root (``../shared/corpora``) on the team's
machines and in CI. A user's own clone may not have them: tests that need them are
skipped with a reason that says so, and everything else still runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# AppTest runs the pages in this process: trainings there run in the page's thread (explicit, quick, and
# the call-counting tests see them). The Dask path is tested in tests/test_jobs.py and by the app
# servers of tests/e2e and tests/test_replicas.py, which start with the default backend (Dask).
os.environ.setdefault("TOKVIZ_TRAINING_BACKEND", "thread")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPORA = PROJECT_ROOT.parent / "shared" / "corpora"
SHARED_CORPUS_FILES = (
    "tinyshakespeare.txt",
    "grimm_tales.txt",
    "wikitext2_valid.txt",
    "wikitext2_test.txt",
    "big.txt",
)

#: The corpus of the Hugging Face course, chapter 6 (sections 5-7).
COURSE_CORPUS = (
    "This is the Hugging Face course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
)

#: Hand-written hard cases for parity tests: scripts, combining marks, emoji, controls.
HARD_STRINGS = (
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "a가 짧",
    "Hello, how are  you?",
    "Let's test my pre-tokenizer.",
    "Héllò hôw are ü?",
    "e\u0301le\u0300ve",  # combining accents
    "ﬁ ① ㎞ Ａｂｃ",  # compatibility characters (NFKC changes them)
    "中文分词测试，包括标点。",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 문장입니다. 짧은 테스트!",
    "مرحبا بالعالم، كيف حالك؟",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🇫🇷 flag",
    "tabs\tand\ttabs\t\tdouble",
    "line one\nline two\r\nline three",
    "control\x00nul\x01\x07bell\x7fdel",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "bidi \u202eevil\u202c text",
    "numbers 1234567 3.14159 -42 1,000,000",
    "def f(x):\n    return x**2  # square",
    "<script>alert('x')</script> & \"quotes\"",
    "ÀÉÎÕÜ àéîõü ß ẞ İstanbul",
    "   leading and trailing   ",
    "@-@ <unk> wikitext @,@ style",
)


def _read_shared(name: str) -> str:
    path = SHARED_CORPORA / name
    if not path.is_file():
        pytest.skip(f"shared corpus {path} is not present (it lives beside the project root on the team's machines and in CI)")
    return path.read_text(encoding="utf-8-sig")


@pytest.fixture(scope="session")
def shared_corpora_dir() -> Path:
    """The folder of the shared corpora; skips the test when it is absent."""
    if not SHARED_CORPORA.is_dir():
        pytest.skip(f"{SHARED_CORPORA} is not present (shared corpora live beside the project root)")
    return SHARED_CORPORA


@pytest.fixture(scope="session")
def read_shared_corpus():
    """``read_shared_corpus("grimm_tales.txt") -> str`` (BOM stripped); skips when absent."""
    return _read_shared


@pytest.fixture(scope="session")
def benchmark_corpus_text() -> str:
    """All five shared corpora concatenated in the documented order (6.8 MB)."""
    return "".join(_read_shared(name) for name in SHARED_CORPUS_FILES)


@pytest.fixture(scope="session")
def shared_corpus_lines() -> list[str]:
    """Non-empty lines sampled evenly from every shared corpus: 60 per file (300 in all)."""
    lines: list[str] = []
    for name in SHARED_CORPUS_FILES:
        file_lines = [line for line in _read_shared(name).splitlines() if line.strip()]
        step = max(1, len(file_lines) // 60)
        lines.extend(file_lines[::step][:60])
    return lines


@pytest.fixture(scope="session")
def course_corpus() -> list[str]:
    return list(COURSE_CORPUS)


@pytest.fixture(scope="session")
def hard_strings() -> tuple[str, ...]:
    return HARD_STRINGS
