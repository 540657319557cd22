"""Server limits in one place: how much a user may upload, train on, render and keep cached.

tokviz runs live in classrooms and on shared servers, where one pasted novel or a
weird file must not take the server down for everyone. Every limit the app enforces
is defined here, each with the sentence the README's "Limits" section repeats, and
each can be overridden by an environment variable (read once, at import), so an
operator can raise or lower it without touching code (``TOKVIZ_MAX_UPLOAD_MB=200``).

A request above a training limit raises :class:`tokviz.errors.LimitExceededError`
*before* anything runs, with a sentence saying which limit and what to do:

>>> check_training_request(text_chars=12, words={"hello": 2})
>>> check_training_request(text_chars=MAX_TRAINING_CHARS + 1)
Traceback (most recent call last):
    ...
tokviz.errors.LimitExceededError: This corpus has 20,000,001 characters, above this server's training limit of 20,000,000 characters per training; train on a part of it (or ask the operator to raise TOKVIZ_MAX_TRAINING_CHARS).

The core library (models, trainers, Tokenizer) enforces none of these: like HF
``tokenizers`` it trains on whatever it is given. The pages call the checks.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tokviz.errors import LimitExceededError


def _env_int(name: str, default: int) -> int:
    """``TOKVIZ_MAX_UPLOAD_MB=5`` -> 5; a missing or unreadable value falls back to ``default``."""
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


#: Largest upload accepted, in bytes (default 50 MB; ``TOKVIZ_MAX_UPLOAD_MB``). A larger file is
#: refused with a message before it is decoded; Streamlit's own ``server.maxUploadSize`` in
#: ``.streamlit/config.toml`` is set to the same 50 MB so the browser refuses it first.
MAX_UPLOAD_BYTES: int = _env_int("TOKVIZ_MAX_UPLOAD_MB", 50) * 1024 * 1024

#: Largest tokenizer.json read, in bytes (default 50 MB; ``TOKVIZ_MAX_TOKENIZER_JSON_MB``): a larger
#: one is refused before it is parsed (real ones are 0.5-20 MB).
MAX_TOKENIZER_JSON_BYTES: int = _env_int("TOKVIZ_MAX_TOKENIZER_JSON_MB", 50) * 1024 * 1024

#: Most corpus characters one training may use (default 20 million, about 20 MB of English;
#: ``TOKVIZ_MAX_TRAINING_CHARS``): a larger corpus is refused with a message instead of training.
MAX_TRAINING_CHARS: int = _env_int("TOKVIZ_MAX_TRAINING_CHARS", 20_000_000)

#: Longest word (pre-token) one training accepts, in characters (default 10,000;
#: ``TOKVIZ_MAX_TRAINING_WORD_CHARS``). A line of megabytes without a break (a minified file,
#: one character repeated) is one huge word that the trainers would chew on for minutes;
#: SentencePiece's trainer skips such sentences (``max_sentence_length``), we say so instead.
MAX_TRAINING_WORD_CHARS: int = _env_int("TOKVIZ_MAX_TRAINING_WORD_CHARS", 10_000)

#: Time a user regular expression (Replace, Split) may run on one piece of text, in seconds
#: (default 1; ``TOKVIZ_PATTERN_TIMEOUT_MS``); a pattern that backtracks catastrophically stops
#: with :class:`tokviz.errors.PatternTimeoutError` instead of hanging the server.
PATTERN_TIMEOUT_SECONDS: float = _env_int("TOKVIZ_PATTERN_TIMEOUT_MS", 1_000) / 1000

#: Time all user regular expressions of one request may take together, in seconds (default 30;
#: ``TOKVIZ_PATTERN_BUDGET_SECONDS``): a pattern slow on every line (0.5 s each, under the limit
#: above) stops with :class:`tokviz.errors.PatternTimeoutError` instead of running for hours.
#: A plain pattern over a 20-million-character corpus takes about 10 s.
PATTERN_REQUEST_BUDGET_SECONDS: float = float(_env_int("TOKVIZ_PATTERN_BUDGET_SECONDS", 30))

#: Time the app may spend reading one uploaded tokenizer or training file, in seconds (default 20;
#: ``TOKVIZ_MAX_LOAD_SECONDS``). The pages read uploads in a child process (:mod:`tokviz.bounded`) that is
#: stopped past it. The largest files the limits accept (a 300,000-entry BPE with 299,450 merges) read
#: in 3-9 s on this project's 2-core machine under load; a file that takes longer is refused with a sentence.
MAX_LOAD_SECONDS: float = float(_env_int("TOKVIZ_MAX_LOAD_SECONDS", 20))

#: Memory the reading of one upload may add to its process, in MB (default 1,536; ``TOKVIZ_MAX_LOAD_MEMORY_MB``):
#: the child reading it stops past it, so no upload takes the app above its idle size by more than this
#: (issue 38's bound, 1.5 GB). The largest accepted file needs about 220 MB (bench/bench_hostile.py).
MAX_LOAD_MEMORY_MB: int = _env_int("TOKVIZ_MAX_LOAD_MEMORY_MB", 1_536)

#: Largest vocab size the Train page offers (``TOKVIZ_MAX_VOCAB``).
MAX_VOCAB_SIZE: int = _env_int("TOKVIZ_MAX_VOCAB", 50_000)

#: Most tokens drawn as spans; the rest is counted but not drawn, with a notice (``TOKVIZ_MAX_RENDERED_TOKENS``).
MAX_RENDERED_TOKENS: int = _env_int("TOKVIZ_MAX_RENDERED_TOKENS", 20_000)

#: Longest test text encoded and drawn on every rerun, in characters (default 100,000;
#: ``TOKVIZ_MAX_TEST_TEXT_CHARS``): a longer one is cut there, with a message (a pasted 5 MB
#: text would otherwise be re-encoded, for tens of seconds, on every click).
MAX_TEST_TEXT_CHARS: int = _env_int("TOKVIZ_MAX_TEST_TEXT_CHARS", 100_000)

#: Most characters of texts the Audit page audits a vocabulary with (``TOKVIZ_MAX_AUDIT_TEXT_CHARS``): a larger
#: corpus is cut there, with a message (1 MB audits in seconds to tens of seconds, bench/bench_audit.py).
MAX_AUDIT_TEXT_CHARS: int = _env_int("TOKVIZ_MAX_AUDIT_TEXT_CHARS", 2_000_000)

#: Corpora up to this many characters retrain live on every change (they train in well under
#: a second); larger ones wait for the Train button (``TOKVIZ_LIVE_TRAINING_MAX_CHARS``).
LIVE_TRAINING_MAX_CHARS: int = _env_int("TOKVIZ_LIVE_TRAINING_MAX_CHARS", 100_000)

#: Trained tokenizers kept in the server's cache (each holds a model and its history), shared by
#: all sessions and evicted least recently used, so memory stays bounded (``TOKVIZ_TRAINING_CACHE_ENTRIES``).
TRAINING_CACHE_ENTRIES: int = _env_int("TOKVIZ_TRAINING_CACHE_ENTRIES", 8)


def check_training_request(text_chars: int, words: Mapping[str, int] | Iterable[str] | None = None) -> None:
    """Raise :class:`LimitExceededError` if training on this corpus would exceed a limit.

    ``text_chars`` is the corpus length; ``words`` (optional) the pre-tokenized words, e.g.
    the word counts the page already has, to check the longest one.

    >>> check_training_request(5, ["a" * 10_001])
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: The corpus has a word (a run of text without a break) of 10,001 characters, above this server's limit of 10,000 characters per word; break long lines (add spaces or newlines) or pick a pipeline whose pre-tokenizer splits them.
    """
    if text_chars > MAX_TRAINING_CHARS:
        raise LimitExceededError(
            f"This corpus has {text_chars:,} characters, above this server's training limit of "
            f"{MAX_TRAINING_CHARS:,} characters per training; train on a part of it "
            "(or ask the operator to raise TOKVIZ_MAX_TRAINING_CHARS)."
        )
    if words is None:
        return
    longest = max(map(len, words), default=0)
    if longest > MAX_TRAINING_WORD_CHARS:
        raise LimitExceededError(
            f"The corpus has a word (a run of text without a break) of {longest:,} characters, above this "
            f"server's limit of {MAX_TRAINING_WORD_CHARS:,} characters per word; break long lines (add spaces "
            "or newlines) or pick a pipeline whose pre-tokenizer splits them."
        )


def check_vocab_request(vocab_size: int) -> None:
    """Raise :class:`LimitExceededError` for a vocab size above :data:`MAX_VOCAB_SIZE` (e.g. from a link).

    >>> check_vocab_request(1_000)
    >>> check_vocab_request(MAX_VOCAB_SIZE + 1)
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: A vocab size of 50,001 is above this server's limit of 50,000; it is set to 50,000.
    """
    if vocab_size > MAX_VOCAB_SIZE:
        raise LimitExceededError(
            f"A vocab size of {vocab_size:,} is above this server's limit of {MAX_VOCAB_SIZE:,}; it is set to {MAX_VOCAB_SIZE:,}."
        )


#: Bounds on the training options a link or the Custom form can set. Each option below scales a
#: training's time or memory with no ceiling of its own, so one link could hold a shared worker for
#: as long as the server's time bound (a link with ``n_sub_iterations=1000000000`` held it 10 minutes).
#: Options that only make a training cheaper (``min_frequency``, ``limit_alphabet``,
#: ``max_token_length``) need no bound; the corpus, the vocab size and each word have theirs above.
#:
#: - EM passes per pruning round (``n_sub_iterations``): each pass reads every word once; HF and
#:   SentencePiece use 2, so 10 (``TOKVIZ_MAX_SUB_ITERATIONS``) leaves room to experiment.
MAX_SUB_ITERATIONS: int = _env_int("TOKVIZ_MAX_SUB_ITERATIONS", 10)
#: - Longest seed piece of a Unigram training (``max_piece_length``): the seed holds substrings up to
#:   this length, so its memory grows with it; HF and SentencePiece use 16; 64 (``TOKVIZ_MAX_PIECE_LENGTH``).
MAX_PIECE_LENGTH: int = _env_int("TOKVIZ_MAX_PIECE_LENGTH", 64)
#: - Unigram's ``shrinking_factor``: the pruning rounds number log(seed / target) / log(1 / factor), each
#:   with its EM passes; at the default 0.75 a 1M seed reaches 8,000 in 17 rounds, at 0.95 in 95, at
#:   0.9999 in 48,000. Above 0.95 it is refused.
MAX_SHRINKING_FACTOR: float = 0.95
#: - Normalizers and pre-tokenizers of one pipeline, each (``TOKVIZ_MAX_PIPELINE_COMPONENTS``): every one
#:   is a pass over the whole corpus; real pipelines use at most 6.
MAX_PIPELINE_COMPONENTS: int = _env_int("TOKVIZ_MAX_PIPELINE_COMPONENTS", 16)
#: - ``continuing_subword_prefix`` / ``end_of_word_suffix``: written onto every symbol of every word
#:   (memory grows with it), "##" and "</w>" in practice; 16 characters.
MAX_AFFIX_CHARS: int = 16
#: - SentencePiece's ``max_sentence_length`` (bytes of the longest line it keeps): its default is 4,192;
#:   65,536 bytes. Special tokens and user-defined symbols are bounded as an uploaded tokenizer's added
#:   tokens are (:data:`MAX_ADDED_TOKENS` of :data:`MAX_TOKEN_CHARS` characters at most).
MAX_SENTENCE_BYTES: int = _env_int("TOKVIZ_MAX_SENTENCE_BYTES", 65_536)


def check_training_options(config: object, vocab_size: int) -> None:
    """Refuse a training whose options pass the bounds above (one sentence naming the option, its value and
    the bound). The app calls it before any training it runs; the library and the command line do not.

    >>> from tokviz.pipeline_config import PipelineConfig
    >>> check_training_options(PipelineConfig(model="Unigram"), 800)
    >>> check_training_options(PipelineConfig(model="Unigram", n_sub_iterations=1_000_000_000), 800)
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: n_sub_iterations is 1,000,000,000, above this server's limit of 10 (EM passes per pruning round; HF and SentencePiece use 2).
    """

    def refuse(option: str, value: object, bound: object, why: str) -> None:
        shown = f"{value:,}" if isinstance(value, int) else repr(value)
        limit = f"{bound:,}" if isinstance(bound, int) else bound
        raise LimitExceededError(f"{option} is {shown}, above this server's limit of {limit} ({why}).")

    get = lambda name, default=None: getattr(config, name, default)  # noqa: E731
    if not 1 <= int(vocab_size) <= MAX_VOCAB_SIZE:
        refuse("The vocab size", int(vocab_size), MAX_VOCAB_SIZE, "TOKVIZ_MAX_VOCAB")
    model = get("model")
    if model == "Unigram":
        if get("n_sub_iterations", 0) > MAX_SUB_ITERATIONS:
            refuse("n_sub_iterations", get("n_sub_iterations"), MAX_SUB_ITERATIONS, "EM passes per pruning round; HF and SentencePiece use 2")
        if get("max_piece_length", 0) > MAX_PIECE_LENGTH:
            refuse("max_piece_length", get("max_piece_length"), MAX_PIECE_LENGTH, "the longest seed piece; HF and SentencePiece use 16")
        if float(get("shrinking_factor", 0.75)) > MAX_SHRINKING_FACTOR:
            refuse("shrinking_factor", get("shrinking_factor"), MAX_SHRINKING_FACTOR, "closer to 1 means many more pruning rounds; HF uses 0.75")
    for what in ("normalizers", "pre_tokenizers"):
        if len(get(what, ())) > MAX_PIPELINE_COMPONENTS:
            refuse(f"The number of {what.replace('_', '-')}", len(get(what, ())), MAX_PIPELINE_COMPONENTS, "each is a pass over the corpus")
    for what in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model in ("BPE", "WordPiece") and get(what) and len(get(what)) > MAX_AFFIX_CHARS:
            refuse(f"The length of {what}", len(get(what)), MAX_AFFIX_CHARS, "it is written onto every symbol of every word")
    for what in ("special_tokens", "user_defined_symbols"):
        tokens = tuple(get(what, ()) or ())
        if what == "user_defined_symbols" and model != "SentencePiece":
            continue
        if len(tokens) > MAX_ADDED_TOKENS:
            refuse(f"The number of {what.replace('_', ' ')}", len(tokens), MAX_ADDED_TOKENS, "TOKVIZ_MAX_ADDED_TOKENS")
        if tokens and max(map(len, tokens)) > MAX_TOKEN_CHARS:
            refuse(f"The longest of the {what.replace('_', ' ')}", max(map(len, tokens)), MAX_TOKEN_CHARS, "characters; TOKVIZ_MAX_TOKEN_CHARS")
    if model == "SentencePiece" and get("max_sentence_length", 0) > MAX_SENTENCE_BYTES:
        refuse("max_sentence_length", get("max_sentence_length"), MAX_SENTENCE_BYTES, "bytes; sentencepiece's default is 4,192")


def check_test_text(text_chars: int) -> None:
    """Raise :class:`LimitExceededError` for a test text above :data:`MAX_TEST_TEXT_CHARS`.

    >>> check_test_text(MAX_TEST_TEXT_CHARS)
    """
    if text_chars > MAX_TEST_TEXT_CHARS:
        raise LimitExceededError(
            f"The test text has {text_chars:,} characters, above this server's limit of {MAX_TEST_TEXT_CHARS:,} "
            "for the text tokenized on every change; it is cut to that length."
        )


def check_tokenizer_json_size(size: int, name: str = "This tokenizer.json") -> None:
    """Raise :class:`LimitExceededError` for a tokenizer.json above :data:`MAX_TOKENIZER_JSON_BYTES`.

    >>> check_tokenizer_json_size(1_000)
    """
    if size > MAX_TOKENIZER_JSON_BYTES:
        raise LimitExceededError(
            f"{name} is {size / 1024 / 1024:,.1f} MB, above this server's limit of "
            f"{MAX_TOKENIZER_JSON_BYTES / 1024 / 1024:,.0f} MB for a tokenizer.json."
        )


# ---------------------------------------------------------------------- what an uploaded tokenizer may hold
# A tokenizer file is refused before its model is built when it holds more than these. The figures
# are peak Python memory (tracemalloc) of ``tokviz.loaders.load_bytes`` on generated files,
# measured 2026-11-24 on this project's machine (bench/bench_memory.py prints them again). Real
# tokenizers fit with room: GPT-2 50,257 entries / 50,000 merges, cl100k 100k, o200k and Llama 3
# 128k-200k, Gemma and XLM-R about 250k entries.

#: Most vocabulary entries of an uploaded tokenizer (tokenizer.json's model vocab, vocab.txt lines,
#: vocab.json entries, .tiktoken ranks, SentencePiece pieces; default 300,000; ``TOKVIZ_MAX_TOKENIZER_VOCAB``).
#: 100,000 entries ≈ 27 MB (WordPiece / WordLevel) to 42 MB (Unigram, its prefix table built),
#: measured on 2026-11-24; 300,000 ≈ 80-130 MB.
MAX_TOKENIZER_VOCAB: int = _env_int("TOKVIZ_MAX_TOKENIZER_VOCAB", 300_000)

#: Most BPE merges of an uploaded tokenizer (tokenizer.json, merges.txt, or derived from a .tiktoken
#: file; default 600,000; ``TOKVIZ_MAX_TOKENIZER_MERGES``). 100,000 entries + 100,000 merges ≈ 77 MB,
#: so a merge ≈ 500 bytes, measured on 2026-11-24; 600,000 merges ≈ 300 MB.
MAX_TOKENIZER_MERGES: int = _env_int("TOKVIZ_MAX_TOKENIZER_MERGES", 600_000)

#: Most added tokens of an uploaded tokenizer.json (default 5,000; ``TOKVIZ_MAX_ADDED_TOKENS``): each
#: one joins the matcher every text goes through. 100,000 added tokens ≈ 122 MB and 3 minutes to load,
#: 20,000 ≈ 5 s, 5,000 ≈ 0.6 s and 6 MB, measured on 2026-11-24 (real tokenizers have up to a few thousand).
MAX_ADDED_TOKENS: int = _env_int("TOKVIZ_MAX_ADDED_TOKENS", 5_000)

#: Longest token of an uploaded tokenizer, in characters (bytes for .tiktoken; default 1,024;
#: ``TOKVIZ_MAX_TOKEN_CHARS``). Real ones stay under a few hundred; a megabyte-long token would make
#: a .tiktoken file's merges (every split of every token) take hours.
MAX_TOKEN_CHARS: int = _env_int("TOKVIZ_MAX_TOKEN_CHARS", 1_024)

#: Most prefix characters of an uploaded Unigram vocabulary: the sum over pieces of
#: ``len(piece) * (len(piece) - 1) / 2`` (default 10 million; ``TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS``).
#: The Unigram model indexes every prefix of every piece, so 10,000 pieces of 1,000 characters
#: (10 MB of file) would hold 5 billion characters. 10 million ≈ 10 MB of prefix text plus at most
#: a few million table entries; a real 250k-piece SentencePiece model has about 3-6 million.
MAX_UNIGRAM_PREFIX_CHARS: int = _env_int("TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS", 10_000_000)

#: Most JSON values (objects, arrays, strings, numbers) in an uploaded tokenizer.json or vocab.json,
#: counted by a pre-scan of the bytes before they are parsed (default 3 million;
#: ``TOKVIZ_MAX_JSON_VALUES``). Parsing costs up to 22 bytes of memory per byte of file (a file of
#: ``[[],[],...]``: 100,000 values, 0.3 MB, ≈ 6.4 MB parsed), so the 50 MB file limit alone would let
#: one file hold about 1.1 GB; 3 million values ≈ 200 MB at most. A 250k-entry BPE tokenizer.json
#: with 500k merges has about 2 million.
MAX_JSON_VALUES: int = _env_int("TOKVIZ_MAX_JSON_VALUES", 3_000_000)


#: Deepest nesting of a JSON file's pipeline sections (default 40; ``TOKVIZ_MAX_JSON_DEPTH``). Real
#: tokenizer.json files nest 5-8 deep (a Sequence of normalizers inside the file is 4); each level of
#: a nested ``Sequence`` is a call of every encode and of every page that describes the pipeline, so a
#: file nested hundreds deep is refused with a sentence, not a ``RecursionError``.
MAX_JSON_DEPTH: int = _env_int("TOKVIZ_MAX_JSON_DEPTH", 40)

#: Most digits of one JSON number (default 100; ``TOKVIZ_MAX_JSON_NUMBER_DIGITS``). Python refuses to
#: read integers of more than 4,300 digits with a ``ValueError`` of its own; real files write at most
#: about 20 (ids, 64-bit integers, floats' shortest forms).
MAX_JSON_NUMBER_DIGITS: int = _env_int("TOKVIZ_MAX_JSON_NUMBER_DIGITS", 100)

#: Largest token id a file may use (default: :data:`MAX_TOKENIZER_VOCAB` + :data:`MAX_ADDED_TOKENS`
#: - 1, the most ids a tokenizer here can hold; ``TOKVIZ_MAX_TOKEN_ID``). Ids are counted from 0 and
#: fill tables, arrays and the Vocabulary view's integer columns: an id of 10**30 overflowed the
#: latter (pyarrow), and real tokenizers use ids below 260,000.
MAX_TOKEN_ID: int = _env_int("TOKVIZ_MAX_TOKEN_ID", MAX_TOKENIZER_VOCAB + MAX_ADDED_TOKENS - 1)

#: Longest padding a file may ask for, in tokens: a ``Fixed`` length or ``pad_to_multiple_of``
#: (default 131,072, the longest context of common models; ``TOKVIZ_MAX_PADDING_LENGTH``). Each padded
#: encoding holds seven lists of that length (ids, type ids, tokens, offsets, masks, words), about
#: 7 MB at 131,072; padding to 10**9 was a ``MemoryError``. A truncation length is bounded the same way.
MAX_PADDING_LENGTH: int = _env_int("TOKVIZ_MAX_PADDING_LENGTH", 131_072)

#: Most JSON containers in the pipeline sections (normalizer, pre-tokenizer, post-processor, decoder):
#: real ones hold fewer than 100; each component of a Sequence runs on every encode.
MAX_PIPELINE_CONTAINERS: int = _env_int("TOKVIZ_MAX_PIPELINE_CONTAINERS", 10_000)

#: How much longer a ``Replace`` or ``Prepend`` normalizer may make a text: at most this many times
#: the text it is given, plus :data:`MAX_TOKEN_CHARS` characters (default 8; ``TOKVIZ_MAX_NORMALIZER_GROWTH``).
#: Real pipelines replace a character by a marker (``' ' -> '▁'``, ``'\\n' -> '<n>'``: at most 3x on a
#: text of newlines) or prepend one marker; 8x leaves room for any of those, while a text of the
#: 100,000-character test-text limit can never become more than 800,000 characters (about 60 MB of
#: alignments in the pipeline), where three nested ``Replace('a', 'a' * 2000)`` wanted 8 * 10**15.
MAX_NORMALIZER_GROWTH: int = _env_int("TOKVIZ_MAX_NORMALIZER_GROWTH", 8)

#: Longest string in a tokenizer.json's pipeline sections other than the model's vocabulary
#: (patterns, ``Replace`` contents, ``Prepend`` markers, special tokens: :data:`MAX_TOKEN_CHARS`
#: characters, 1,024) and a ``Precompiled`` normalizer's charsmap (default 4 MB of base64;
#: ``TOKVIZ_MAX_CHARSMAP_CHARS``; SentencePiece's nmt_nfkc map is 240 KB).
MAX_CHARSMAP_CHARS: int = _env_int("TOKVIZ_MAX_CHARSMAP_CHARS", 4 * 1024 * 1024)


def _refuse(name: str, what: str, value: int, limit: int, unit: str, env: str) -> None:
    raise LimitExceededError(
        f"{name} has {value:,} {what}, above this server's limit of {limit:,} {unit} ({env})."
    )


def json_value_count(data: bytes | str) -> int:
    """An upper bound on the number of values ``json.loads(data)`` makes, without parsing.

    Every value but the first follows a ``,`` (in an array or object) or a ``:`` (an object's
    value) or opens a container; separators inside strings only make the bound looser.

    >>> json_value_count(b'{"a": [1, 2], "b": {}}')
    8
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return data.count(b",") + data.count(b":") + data.count(b"[") + data.count(b"{") + 1


def check_json_values(data: bytes | str, name: str = "This file", max_values: int | None = None, env: str = "TOKVIZ_MAX_JSON_VALUES") -> None:
    """Refuse JSON whose parse would hold more than ``max_values`` (default :data:`MAX_JSON_VALUES`) values
    (a pre-scan, before parsing).

    >>> check_json_values(b'{"hello": 1}')
    """
    limit = MAX_JSON_VALUES if max_values is None else max_values
    if isinstance(data, (bytes, bytearray)) and len(data) < limit:
        return  # (every value but the first takes a byte of its own: the count cannot reach the limit)
    count = json_value_count(data)
    if count > limit:
        _refuse(name, "JSON values (counted before reading it)", count, limit, "per file", env)


# ---------------------------------------------------------------------- what an uploaded training history may hold
# A history.json (``python -m tokviz train`` or Train's Export writes one) holds every step of a training, so its
# bounds are its own, not a tokenizer.json's. Measured on wikitext-2 trainings to 8,000 (2026-11-29): a BPE or
# WordPiece history holds about 41 JSON values per merge (the merge, its token and counts, the vocabulary); a
# Unigram history its EM steps, pruning rounds and snapshots of its pieces (90,000 values at 9,000 pieces).

#: Most merges of a BPE or WordPiece history (default 200,000; ``TOKVIZ_MAX_HISTORY_MERGES``). The Train page
#: trains up to :data:`MAX_VOCAB_SIZE` (50,000); 200,000 holds a real vocabulary trained elsewhere with the command
#: line (Llama 3's 128,000, o200k's 200,000).
MAX_HISTORY_MERGES: int = _env_int("TOKVIZ_MAX_HISTORY_MERGES", 200_000)

#: Most EM steps, and most pruning rounds, of a Unigram history (default 10,000; ``TOKVIZ_MAX_HISTORY_STEPS``):
#: a training within the options' bounds (:data:`MAX_SHRINKING_FACTOR` 0.95, :data:`MAX_SUB_ITERATIONS` 10) from
#: a million seed pieces to 8,000 makes about 95 rounds and 950 steps; HF's defaults make 17 rounds.
MAX_HISTORY_STEPS: int = _env_int("TOKVIZ_MAX_HISTORY_STEPS", 10_000)

#: Most JSON values of a history.json, counted before it is parsed (default 9,000,000;
#: ``TOKVIZ_MAX_HISTORY_JSON_VALUES``): 41 per merge for :data:`MAX_HISTORY_MERGES` merges, plus room for a large
#: Unigram history's snapshots. Parsing that many costs at most about 600 MB, in the child process the pages read
#: uploads in (:data:`MAX_LOAD_MEMORY_MB`); a tokenizer.json keeps :data:`MAX_JSON_VALUES`.
MAX_HISTORY_JSON_VALUES: int = _env_int("TOKVIZ_MAX_HISTORY_JSON_VALUES", 9_000_000)


def check_history_sizes(history: Any, name: str = "This training history") -> None:
    """Refuse a history.json's parsed ``"history"`` section holding more merges, EM steps or pruning rounds than
    the bounds above, before any of its records is built (sections of the wrong shape are left to the reader).

    >>> check_history_sizes({"merges": [[]] * 3, "em_steps": []})
    >>> check_history_sizes({"em_steps": [{}] * 10_001}, "big.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: big.json has 10,001 EM steps, above this server's limit of 10,000 per training history (TOKVIZ_MAX_HISTORY_STEPS).
    """
    if not isinstance(history, dict):
        return
    for key, what, limit, env in (("merges", "merges", MAX_HISTORY_MERGES, "TOKVIZ_MAX_HISTORY_MERGES"),
                                  ("em_steps", "EM steps", MAX_HISTORY_STEPS, "TOKVIZ_MAX_HISTORY_STEPS"),
                                  ("prune_rounds", "pruning rounds", MAX_HISTORY_STEPS, "TOKVIZ_MAX_HISTORY_STEPS")):
        section = history.get(key)
        if isinstance(section, list) and len(section) > limit:
            _refuse(name, what, len(section), limit, "per training history", env)


def line_count(data: bytes | str) -> int:
    """Lines of a text, counted without splitting it: ``line_count("a\\nb\\n") == 2``, ``line_count("a\\nb") == 2``."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    return data.count(newline) + (0 if not data or data.endswith(newline) else 1)


def check_tokenizer_vocab(count: int, name: str = "This tokenizer") -> None:
    """Refuse a vocabulary above :data:`MAX_TOKENIZER_VOCAB` entries.

    >>> check_tokenizer_vocab(MAX_TOKENIZER_VOCAB)
    >>> check_tokenizer_vocab(MAX_TOKENIZER_VOCAB + 1, "big.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: big.json has 300,001 vocabulary entries, above this server's limit of 300,000 per tokenizer (TOKVIZ_MAX_TOKENIZER_VOCAB).
    """
    if count > MAX_TOKENIZER_VOCAB:
        _refuse(name, "vocabulary entries", count, MAX_TOKENIZER_VOCAB, "per tokenizer", "TOKVIZ_MAX_TOKENIZER_VOCAB")


def check_tokenizer_merges(count: int, name: str = "This tokenizer") -> None:
    """Refuse more than :data:`MAX_TOKENIZER_MERGES` merges.

    >>> check_tokenizer_merges(MAX_TOKENIZER_MERGES)
    """
    if count > MAX_TOKENIZER_MERGES:
        _refuse(name, "merges", count, MAX_TOKENIZER_MERGES, "per tokenizer", "TOKVIZ_MAX_TOKENIZER_MERGES")


def check_added_tokens(count: int, name: str = "This tokenizer") -> None:
    """Refuse more than :data:`MAX_ADDED_TOKENS` added tokens.

    >>> check_added_tokens(MAX_ADDED_TOKENS)
    """
    if count > MAX_ADDED_TOKENS:
        _refuse(name, "added tokens", count, MAX_ADDED_TOKENS, "per tokenizer", "TOKVIZ_MAX_ADDED_TOKENS")


def check_token_chars(longest: int, name: str = "This tokenizer", unit: str = "characters") -> None:
    """Refuse a token longer than :data:`MAX_TOKEN_CHARS` (``unit`` is "bytes" for .tiktoken files).

    >>> check_token_chars(2_000, "x.tiktoken", "bytes")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: x.tiktoken has a token of 2,000 bytes, above this server's limit of 1,024 bytes per token (TOKVIZ_MAX_TOKEN_CHARS).
    """
    if longest > MAX_TOKEN_CHARS:
        raise LimitExceededError(
            f"{name} has a token of {longest:,} {unit}, above this server's limit of {MAX_TOKEN_CHARS:,} {unit} "
            "per token (TOKVIZ_MAX_TOKEN_CHARS)."
        )


def unigram_prefix_chars(pieces: Iterable[str]) -> int:
    """Characters of every proper prefix of every piece: ``["ab", "abc"] -> 1 + 3 = 4``.

    >>> unigram_prefix_chars(["ab", "abc"])
    4
    """
    return sum(n * (n - 1) // 2 for n in map(len, pieces))


def check_unigram_pieces(pieces: Iterable[str], name: str = "This tokenizer") -> None:
    """Refuse a Unigram vocabulary whose prefix table would exceed :data:`MAX_UNIGRAM_PREFIX_CHARS`.

    >>> check_unigram_pieces(["hello", "world"])
    """
    check_unigram_prefix_chars(unigram_prefix_chars(pieces), name)


def check_unigram_prefix_chars(total: int, name: str = "This tokenizer") -> None:
    """Refuse ``total`` prefix characters (:func:`unigram_prefix_chars`) above :data:`MAX_UNIGRAM_PREFIX_CHARS`.

    >>> check_unigram_prefix_chars(MAX_UNIGRAM_PREFIX_CHARS + 1)
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: This tokenizer has 10,000,001 characters in the prefixes of its pieces, above this server's limit of 10,000,000 per tokenizer (TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS).
    """
    if total > MAX_UNIGRAM_PREFIX_CHARS:
        _refuse(name, "characters in the prefixes of its pieces", total, MAX_UNIGRAM_PREFIX_CHARS,
                "per tokenizer", "TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS")


# ---------------------------------------------------------------------- the guarded JSON entry
# Every JSON file a user gives (tokenizer.json, vocab.json, history.json) is read here, so the same
# checks hold for all of them before anything is built: its size in values, its numbers, its strings
# (valid Unicode) and its nesting. A check's cost is one C-speed scan of the text; the precise (slower)
# look happens only when that scan finds something suspicious.

#: ``bytes.translate`` table: an ASCII digit becomes ``0``, any other byte ``x``, so a run of more digits than
#: :data:`MAX_JSON_NUMBER_DIGITS` is one C-speed ``find`` (a ``\d{101,}`` regex took 65 ms of ALBERT's 1.1 MB).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x78 for byte in range(256))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: A ``\uDxxx`` escape that is an escape (an even run of backslashes before it): a high surrogate with
#: the low one that must follow it (group "low" None when it does not), or a low one on its own.
_SURROGATES = re.compile(
    r"(?<!\\)(?:\\\\)*(?:\\u(?P<high>[dD][89abAB][0-9a-fA-F]{2})(?P<low>\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|\\u(?P<lone>[dD][c-fC-F][0-9a-fA-F]{2}))"
)


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def check_json_text(text: str, name: str = "This file", raw: bytes | None = None) -> None:
    """Refuse JSON text with a number of more than :data:`MAX_JSON_NUMBER_DIGITS` digits or a lone
    UTF-16 surrogate (``"\\ud800"`` alone is not a character; HF's reader refuses it too, and pyarrow
    raised on it in the Vocabulary view), before it is parsed.

    ``raw`` is the UTF-8 the text was decoded from, when there was one (it cannot hold a raw surrogate).
    Each check is one C-speed pass (about 3 ms a megabyte); the precise look happens only when a pass finds something.

    >>> check_json_text('{"a": 1, "emoji": "\\\\ud83d\\\\ude00"}')
    >>> check_json_text('{"a": "x\\\\ud800"}', "vocab.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: vocab.json holds a lone surrogate (\\ud800, line 1): half of a UTF-16 pair is not a character, so it is not valid Unicode text.
    """
    if raw is None:
        check_unicode(text, name)
        raw = text.encode("utf-8")
    if raw.translate(_DIGITS_AS_ZEROS).find(b"0" * (MAX_JSON_NUMBER_DIGITS + 1)) >= 0:
        _check_json_numbers(text, name)
    if _SURROGATE_ESCAPE.search(text) is not None:
        for match in _SURROGATES.finditer(text):
            lone = match["lone"] or (match["high"] if match["low"] is None else None)
            if lone is not None:
                raise LimitExceededError(
                    f"{name} holds a lone surrogate (\\u{lone.lower()}, line {_line_of(text, match.start())}): half of a "
                    "UTF-16 pair is not a character, so it is not valid Unicode text."
                )


def check_unicode(text: str, name: str = "This text") -> None:
    """Refuse a string holding a lone surrogate character (a link or form value, a str made in Python:
    UTF-8 bytes cannot hold one).

    >>> check_unicode("naïve 👍")
    >>> check_unicode("a" + chr(0xD800), "The link's value for special_tokens")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: The link's value for special_tokens holds a lone surrogate (\ud800, line 1): half of a UTF-16 pair is not a character, so it is not valid Unicode text.
    """
    try:
        text.encode("utf-8")  # (strict UTF-8 refuses a surrogate: one C-speed pass, where a regex took 3 ms a megabyte)
    except UnicodeEncodeError as problem:
        raise LimitExceededError(
            f"{name} holds a lone surrogate (\\u{ord(text[problem.start]):04x}, line {_line_of(text, problem.start)}): half of a "
            "UTF-16 pair is not a character, so it is not valid Unicode text."
        ) from None


def _check_json_numbers(text: str, name: str) -> None:
    """Parse ``text`` once with number hooks that refuse long literals (digit runs inside strings,
    which the quick scan also finds, are not numbers: a token may be ``"0000…"``)."""

    def refuse(literal: str) -> None:
        digits = sum(char.isdigit() for char in literal)
        if digits > MAX_JSON_NUMBER_DIGITS:
            raise LimitExceededError(
                f"{name} has a number of {digits:,} digits ({literal[:12]}…), above this server's limit of "
                f"{MAX_JSON_NUMBER_DIGITS:,} digits per number (TOKVIZ_MAX_JSON_NUMBER_DIGITS); no tokenizer file needs one."
            )

    def checked_int(literal: str) -> int:
        refuse(literal)
        return int(literal)

    def checked_float(literal: str) -> float:
        refuse(literal)
        return float(literal)

    try:
        json.loads(text, parse_int=checked_int, parse_float=checked_float)
    except (json.JSONDecodeError, RecursionError):  # malformed or too deep: the real read says so
        pass


def check_json_depth(value: Any, name: str = "This file", skip: Iterable[Any] = ()) -> None:
    """Refuse parsed JSON nested more than :data:`MAX_JSON_DEPTH` deep (walked without recursion;
    the containers in ``skip``, by identity, are not entered: a vocabulary's 300,000 entries are checked
    by their own shape).

    >>> check_json_depth({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}]}})
    >>> deep = {}
    >>> for _ in range(50): deep = {"type": "Sequence", "normalizers": [deep]}
    >>> check_json_depth(deep, "t.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.NestingError: t.json is nested too deeply: more than 40 levels (TOKVIZ_MAX_JSON_DEPTH), where real tokenizer files nest fewer than 10.
    """
    skipped = {id(item) for item in skip}
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise_too_deep(name)
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)) and id(child) not in skipped)
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)) and id(child) not in skipped)


def raise_too_deep(name: str = "This file", error: type[Exception] | None = None) -> None:
    """The one sentence for JSON nested too deeply, whether Python's parser or :func:`check_json_depth` found it
    (raised as ``error``, default :class:`~tokviz.errors.NestingError`)."""
    from tokviz.errors import NestingError

    raise (error or NestingError)(
        f"{name} is nested too deeply: more than {MAX_JSON_DEPTH} levels (TOKVIZ_MAX_JSON_DEPTH), where real tokenizer files "
        "nest fewer than 10."
    )


def parse_json(
    data: bytes | str,
    name: str = "This file",
    *,
    what: str = "JSON file",
    max_bytes: int | None = None,
    max_values: int | None = None,
    values_env: str = "TOKVIZ_MAX_JSON_VALUES",
    loads: Callable[[str], Any] = json.loads,
    error: type[Exception] | None = None,
) -> Any:
    """The guarded entry of every JSON file a user gives: size, values, numbers, Unicode and nesting
    checked (each with a sentence naming ``name``), then ``loads(text)``.

    ``what`` names the format in the messages ("tokenizer.json"); ``max_bytes`` defaults to
    :data:`MAX_UPLOAD_BYTES`, ``max_values`` :data:`MAX_JSON_VALUES` (its variable named by ``values_env``);
    a malformed file raises ``error`` (default
    :class:`~tokviz.errors.SerializationError`), a limit :class:`LimitExceededError`.

    >>> parse_json(b'{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> parse_json(b'{"a": 1', "x.json", what="vocab.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.SerializationError: This is not a valid vocab.json: the JSON is malformed at line 1, column 8 (Expecting ',' delimiter); the file is not valid JSON.
    >>> parse_json(b'[' * 5000 + b']' * 5000, "x.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.NestingError: x.json is nested too deeply: more than 40 levels (TOKVIZ_MAX_JSON_DEPTH), where real tokenizer files nest fewer than 10.
    """
    from tokviz.errors import SerializationError

    failure = SerializationError if error is None else error
    limit = MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    size = len(data) if isinstance(data, (bytes, bytearray)) else len(data)  # (characters: at most the bytes)
    if size > limit:
        raise LimitExceededError(
            f"{name} is {_size_text(size)}, above this server's limit of {_size_text(limit)} for a {what}."
        )
    raw = None
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as problem:
            raise failure(f"{name} is not UTF-8 text (byte {problem.start} cannot be read), so it cannot be a {what}.") from None
    else:
        text = data
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            check_unicode(text, name)  # (says where the lone surrogate is)
            raise
    check_json_values(raw, name, max_values, values_env)
    check_json_text(text, name, raw)
    try:
        return loads(text)
    except json.JSONDecodeError as problem:
        raise failure(
            f"This is not a valid {what}: the JSON is malformed at line {problem.lineno}, column {problem.colno} "
            f"({problem.msg}); the file is not valid JSON."
        ) from None
    except RecursionError:  # '[[[[…' past Python's own limit: the same sentence as a shallower excess
        raise_too_deep(name, error)


def _size_text(size: int) -> str:
    """``_size_text(1_000) == '1,000 bytes'``, ``_size_text(52_428_800) == '50.0 MB'``."""
    return f"{size:,} bytes" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.1f} MB"
