"""WordPiece training, two ways: the HF course's likelihood score and what HF really does.

WordPiece builds its vocabulary by merging pairs like BPE, but (in the HF course's
description, chapter 6.6) chooses the pair with the best *likelihood* score

    score(a, b) = freq(ab) / (freq(a) * freq(b))

so a pair whose parts rarely occur apart wins over a merely frequent one. Every
character but a word's first is written with the ``##`` continuation prefix:

    words {"hug": 10, "hugs": 5}: h ##u ##g (10), h ##u ##g ##s (5)
    freq: h 15, ##u 15, ##g 15, ##s 5;  pairs: (h,##u) 15, (##u,##g) 15, (##g,##s) 5
    scores: (h,##u) 15/225, (##u,##g) 15/225, (##g,##s) 5/75 = 1/15 each: a 3-way tie

>>> trainer = WordPieceTrainer(vocab_size=6, show_progress=False, tie_break="first_seen", scoring="likelihood")
>>> history = trainer.train_from_word_counts({"hug": 10, "hugs": 5})
>>> [(step.left, step.right, step.token) for step in history.merges]
[('h', '##u', 'hu'), ('hu', '##g', 'hug')]
>>> history.vocab
('##g', '##s', '##u', 'h', 'hu', 'hug')

(after the first merge, (hu, ##g) and (##g, ##s) still tie at 1/15: "hug" is met first).

- ``scoring="frequency"`` (default, as HF's ``WordPieceTrainer``, so a script moved from HF
  trains the same vocabulary): train BPE with ``continuing_subword_prefix="##"`` (pair
  counts, not scores; the alphabet is every character plain, plus the ``##`` forms the
  words need) and read the vocab as WordPiece.
- ``scoring="likelihood"``: the course's algorithm above, with its alphabet (each word's
  first character plain, the others ``##``-prefixed, sorted). Ask for it explicitly.

Tie-breaking (equal scores): ``tie_break="hf"`` takes the smallest ``(left id, right id)``,
ids being the special tokens, then the alphabet (likelihood: sorted as strings; frequency:
by code point, then the ``##`` forms in first-seen order), then merged tokens in creation
order; ``tie_break="first_seen"`` takes the pair met first when scanning the words in
first-seen order, left to right, as the course notebook does.

How it stays fast: like BPE (integer ids, incremental pair counts, an index pair -> words)
plus an index token -> pairs, because a merge lowers freq(a) and freq(b) and so raises the
score of every pair holding a or b anywhere in the corpus. Rather than re-push those
(thousands for "##s"), the token is marked dirty and a sentinel bounds its pairs' scores
(see :class:`LikelihoodQueue`); they are re-scored only when the bound reaches the top.

``max_token_length`` follows HF's rule (a pair is not counted when its token would have
``max_token_length`` characters or more); ``show_progress`` is accepted for HF
compatibility, progress goes to the ``progress`` callback. What this version leaves out:
the original Google WordPiece (a language-model likelihood over the whole corpus) is not
public; like the course, we use the per-pair score.
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tokviz.errors import TokvizError
from tokviz.history import MergeStep, ProgressCallback, TrainingHistory
from tokviz.models.merges import (
    PAIR_BITS, PAIR_MASK, MergeHistoryViews, MergeQueue, MergeTrainerOptions, PairCounts, Symbols, compute_alphabet, count_queue, first_occurrence,
    merge_loop, records_to_steps, tokenize_words,
)
from tokviz.models.trainer import check_word_counts, finish_history, paused_gc, with_model_options_of
from tokviz.word_counts import summarize_word_counts

if TYPE_CHECKING:  # pragma: no cover
    from tokviz.models.base import Model

__all__ = ["WordPieceTrainer", "WordPieceTrainingHistory"]

SCORINGS = ("likelihood", "frequency")


def _check_scoring(scoring: Any) -> str:
    if scoring not in SCORINGS:
        raise TokvizError(f"scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}.")
    return scoring
REFRESH_TOP = 16


@dataclass(frozen=True)
class WordPieceTrainingHistory(MergeHistoryViews, TrainingHistory):
    """Every merge with its score and the pairs it beat; ``model_at(k)`` is the vocab prefix."""

    merges: tuple[MergeStep, ...] = ()
    vocab: tuple[str, ...] = ()
    initial_vocab_size: int = 0
    scoring: str = "likelihood"
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100
    model_options: tuple[tuple[str, Any], ...] = ()

    #: What a trained WordPiece keeps from the user's model (HF transfers only the vocab
    #: and the continuing_subword_prefix).
    KEPT_MODEL_OPTIONS: ClassVar[tuple[str, ...]] = ("unk_token", "max_input_chars_per_word")

    def for_model(self, model: Any) -> "WordPieceTrainingHistory":
        """This history with the user's ``model``'s ``unk_token`` and ``max_input_chars_per_word``
        kept in ``model`` and every ``model_at(k)``, as HF's ``Tokenizer.train`` keeps them."""
        return with_model_options_of(self, model, "WordPiece", "WordPieceTrainer")

    def model_at(self, vocab_size: int) -> "Model":
        """The WordPiece model whose vocab is the first ``vocab_size`` tokens (no retraining)."""
        from tokviz.models.wordpiece.model import WordPiece

        options: dict[str, Any] = {"unk_token": self.unk_token, "max_input_chars_per_word": self.max_input_chars_per_word}
        options.update(self.model_options)
        return WordPiece(self.vocab_at(vocab_size), continuing_subword_prefix=self.continuing_subword_prefix, **options)


def course_alphabet(word_counts: Mapping[str, int], kept_chars: set[str], prefix: str) -> list[str]:
    """The course's alphabet: each word's first character, ``##`` + every later one, sorted.

    >>> course_alphabet({"hug": 1, "ugh": 1}, {"g", "h", "u"}, "##")
    ['##g', '##h', '##u', 'h', 'u']
    """
    tokens: set[str] = set()
    for word in word_counts:
        chars = [char for char in word if char in kept_chars]
        if chars:
            tokens.add(chars[0])
            tokens.update(prefix + char for char in chars[1:])
    return sorted(tokens)


class LikelihoodQueue(MergeQueue):
    """The course's WordPiece score on the merge engine: the pair with the best
    ``freq(ab) / (freq(a) * freq(b))``; pairs below ``min_frequency`` or whose token would reach
    ``max_token_length`` symbols are not candidates. Entries are ``(-score, tie, pair)`` with
    ``tie`` = the pair code ("hf") or ``(first word, position)`` ("first_seen"); an entry is
    valid when it equals the entry computed now.

    A merge lowers freq(left) and freq(right), raising the score of every pair holding them,
    anywhere in the corpus. Re-pushing all those pairs at every merge would cost millions of
    pushes ("##s" is in thousands of pairs). Instead the token is marked dirty and covered by
    sentinel entries, in two levels:
      1. bound 1 / freq(t), free to compute: count(t, x) <= freq(x), so score(t, x) <= 1 / freq(t);
      2. when that surfaces, the exact best score among t's pairs (one pass, no push);
    when level 2 surfaces, t's pairs are pushed with exact scores and t is clean again.
    Every score increase comes from a dirty token whose sentinel was computed after it, so the
    first valid pair entry popped is the true best. Sentinels sort before pair entries of equal
    score, so ties are still decided on exact scores.
    """

    EMPTY = "no pair left to merge (every word is a single token)"
    wants_lowered = True

    def __init__(self, corpus: PairCounts, min_frequency: int, max_token_length: int | None, tie_break: str) -> None:
        self.corpus = corpus
        self.min_frequency = min_frequency
        self.max_token_length = max_token_length
        self.first_seen = tie_break == "first_seen"
        self.exact_entries = self.first_seen or max_token_length is not None
        if min_frequency > 1 or max_token_length is not None:
            self.EMPTY = "no pair left that meets min_frequency / max_token_length"
        pair_counts = corpus.pair_counts
        self.token_freq = token_freq = [0] * len(corpus.token_len)
        for word, count in zip(corpus.words, corpus.counts):
            for token in word:
                token_freq[token] += count
        self.pairs_of: dict[int, set[int]] = {}
        for code in pair_counts:
            self.pairs_of.setdefault(code >> PAIR_BITS, set()).add(code)
            self.pairs_of.setdefault(code & PAIR_MASK, set()).add(code)
        self.dirty: set[int] = set()
        self.heap = [item for item in map(self._entry, pair_counts) if item is not None]
        heapq.heapify(self.heap)

    def _entry(self, code: int) -> tuple | None:
        corpus = self.corpus
        count = corpus.pair_counts.get(code, 0)
        if count <= 0 or count < self.min_frequency:
            return None
        left, right = code >> PAIR_BITS, code & PAIR_MASK
        if self.max_token_length is not None and corpus.token_len[left] + corpus.token_len[right] >= corpus.max_len:
            return None
        score = count / (self.token_freq[left] * self.token_freq[right])
        if self.first_seen:
            return (-score, *(first_occurrence(code, corpus.where, corpus.words, corpus.token_len) or (len(corpus.words), 0)), code)
        return (-score, code)

    def _sentinel(self, token: int, level: int, score: float) -> tuple:
        code = -1 - 2 * token - level
        return (-score, -1, -1, code) if self.first_seen else (-score, code)

    def _push_exact(self, token: int) -> None:
        heap = self.heap
        if self.exact_entries:
            for changed in self.pairs_of[token]:
                fresh = self._entry(changed)
                if fresh is not None:
                    heapq.heappush(heap, fresh)
            return
        pair_counts, token_freq, min_frequency = self.corpus.pair_counts, self.token_freq, self.min_frequency
        for changed in self.pairs_of[token]:  # _entry() inlined: the hot loop of "hf" ties
            count = pair_counts[changed]
            if count >= min_frequency:
                heapq.heappush(heap, (-count / (token_freq[changed >> PAIR_BITS] * token_freq[changed & PAIR_MASK]), changed))

    def _best_score(self, token: int) -> float:
        pair_counts, token_freq, min_frequency = self.corpus.pair_counts, self.token_freq, self.min_frequency
        best = 0.0
        for changed in self.pairs_of[token]:
            count = pair_counts[changed]
            if count >= min_frequency:
                score = count / (token_freq[changed >> PAIR_BITS] * token_freq[changed & PAIR_MASK])
                if score > best:
                    best = score
        return best

    def _refresh(self, token: int) -> None:
        """("hf" ties) Push exact entries for the token's REFRESH_TOP best pairs (and every
        pair tied with the last of them), and a sentinel bounding the rest, strictly lower:
        a token's many other pairs are only re-scored if the bound ever reaches the top."""
        pair_counts, token_freq, min_frequency, heap = self.corpus.pair_counts, self.token_freq, self.min_frequency, self.heap
        scored = [
            (-count / (token_freq[changed >> PAIR_BITS] * token_freq[changed & PAIR_MASK]), changed)
            for changed in self.pairs_of[token]
            if (count := pair_counts[changed]) >= min_frequency
        ]
        if len(scored) > 2 * REFRESH_TOP:
            cut = heapq.nsmallest(REFRESH_TOP, scored)[-1][0]
            rest_best = 0.0
            for item in scored:
                if item[0] <= cut:
                    heapq.heappush(heap, item)
                elif item[0] < rest_best:
                    rest_best = item[0]
            if rest_best < 0.0:
                heapq.heappush(heap, self._sentinel(token, 1, -rest_best))  # the token stays dirty
                return
        else:
            for item in scored:
                heapq.heappush(heap, item)
        self.dirty.discard(token)

    def _pop_valid(self) -> tuple | None:
        heap, dirty, exact_entries = self.heap, self.dirty, self.exact_entries
        pair_counts, token_freq, min_frequency = self.corpus.pair_counts, self.token_freq, self.min_frequency
        while heap:
            item = heapq.heappop(heap)
            code = item[-1]
            if code < 0:
                token, level = divmod(-1 - code, 2)
                if token not in dirty:
                    continue
                if not exact_entries:
                    self._refresh(token)
                    continue
                if level == 0:
                    bound = self._best_score(token)
                    if bound > 0.0:
                        heapq.heappush(heap, self._sentinel(token, 1, bound))
                    else:
                        dirty.discard(token)
                else:
                    dirty.discard(token)
                    self._push_exact(token)
                continue
            if exact_entries:
                fresh = self._entry(code)
            else:
                count = pair_counts.get(code, 0)
                if count <= 0 or count < min_frequency:
                    continue
                fresh = (-count / (token_freq[code >> PAIR_BITS] * token_freq[code & PAIR_MASK]), code)
            if fresh == item:
                return item
            # Worse than recorded (fewer occurrences now): no entry holds it yet. Better than
            # recorded: a dirty token's sentinel covers it (or already re-pushed it).
            if fresh is not None and fresh > item:
                heapq.heappush(heap, fresh)
        return None

    def _describe(self, entry: tuple) -> tuple[int, int, float]:
        code = entry[-1]
        return code, self.corpus.pair_counts[code], -entry[0]

    def merged(self, code: int, new_id: int, created: Iterable[int], lowered: set[int] | None, merged: int) -> None:
        pairs_of, token_freq = self.pairs_of, self.token_freq
        pair_counts = self.corpus.pair_counts
        left, right = code >> PAIR_BITS, code & PAIR_MASK
        if new_id == len(token_freq):
            token_freq.append(0)
        pairs_of.setdefault(new_id, set())
        for changed in created:
            pairs_of.setdefault(changed >> PAIR_BITS, set()).add(changed)
            pairs_of.setdefault(changed & PAIR_MASK, set()).add(changed)
        for changed in lowered or ():
            if pair_counts[changed] <= 0:  # dead pairs leave the index
                pairs_of[changed >> PAIR_BITS].discard(changed)
                pairs_of[changed & PAIR_MASK].discard(changed)
        pair_counts.pop(code, None)
        token_freq[left] -= merged
        token_freq[right] -= merged
        token_freq[new_id] += merged
        # freq(left) and freq(right) fell, so every pair holding them scores higher now, and the
        # new token's pairs are new: cover the first by sentinels, push the second.
        pairs_of[left].discard(code)
        pairs_of[right].discard(code)
        for token in (left, right):
            if token_freq[token] > 0 and pairs_of[token]:
                self.dirty.add(token)
                heapq.heappush(self.heap, self._sentinel(token, 0, 1.0 / token_freq[token]))
        self._push_exact(new_id)  # its pairs are new


class WordPieceTrainer(MergeTrainerOptions):
    """HF's ``trainers.WordPieceTrainer`` plus ``scoring`` and ``tie_break`` (module docstring).

    >>> WordPieceTrainer(vocab_size=100, show_progress=False).continuing_subword_prefix
    '##'
    """

    MODEL_TYPE = "WordPiece"
    PROGRESS_STAGES = 3

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Sequence[Any] = (),
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        continuing_subword_prefix: str = "##",
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
        tie_break: str = "hf",
        scoring: str = "frequency",
    ) -> None:
        continuing_subword_prefix = continuing_subword_prefix or ""
        self._set_options(locals())

    _TOKVIZ_FIELDS = {"tie_break": "hf", "scoring": "frequency"}
    _VALIDATORS = {**MergeTrainerOptions._VALIDATORS, "scoring": lambda name, value: _check_scoring(value)}

    def config(self) -> tuple[tuple[str, Any], ...]:
        return (*super().config(), ("scoring", self.scoring))

    def __getstate__(self) -> bytes:
        """HF's JSON form, a BpeTrainer inside: ``b'{"WordPieceTrainer":{"bpe_trainer":{...}}}'``."""
        body: dict[str, Any] = {"bpe_trainer": self._hf_state()}
        body.update(self._tokviz_state())
        return json.dumps({"WordPieceTrainer": body}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def _options_from_state(cls, body: dict[str, Any]) -> dict[str, Any]:
        inner = dict(body.get("bpe_trainer") or {})
        inner.update({name: body[name] for name in cls._TOKVIZ_FIELDS if name in body})
        return super()._options_from_state(inner)

    def __repr__(self) -> str:
        return f"WordPieceTrainer(WordPieceTrainer(bpe_trainer=BpeTrainer({self._debug_fields()})))"

    @paused_gc
    def train_from_word_counts(
        self,
        word_counts: Mapping[str, int],
        progress: ProgressCallback | None = None,
        *,
        prefixed_order: Sequence[str] = (),
    ) -> WordPieceTrainingHistory:
        """Train on ``{word: count}`` (first-seen order matters for ``tie_break="first_seen"``).

        ``prefixed_order`` (frequency scoring) numbers those ``##`` forms first, in that order,
        instead of in first-seen order: HF numbers them in its hash map's order, which changes
        from run to run, so replaying one HF run exactly needs its order (the parity test).
        """
        started = time.perf_counter()
        word_counts = check_word_counts(word_counts)
        prefix = self.continuing_subword_prefix or ""  # None (settable, as in HF) trains without a prefix
        symbols = Symbols.start(self.special_token_contents)
        chars = compute_alphabet(word_counts, self.initial_alphabet, self.limit_alphabet)
        if self.scoring == "frequency":
            alphabet = chars
            for char in alphabet:
                symbols.add(char, 1)
            for token in prefixed_order:
                symbols.add(token, 1)
            words, counts = tokenize_words(word_counts, symbols, prefix or None, self.end_of_word_suffix)
        else:
            alphabet = course_alphabet(word_counts, set(chars), prefix)
            for char in self.initial_alphabet:
                if char in chars and char not in alphabet:
                    alphabet.append(char)
            alphabet.sort()
            for token in alphabet:
                symbols.add(token, 1)
            words, counts = tokenize_words(
                word_counts, symbols, prefix or None, self.end_of_word_suffix, allowed=set(chars)
            )
        initial_size = len(symbols.id_to_token)
        if self.scoring == "frequency":
            queue = count_queue(self.tie_break)
        else:
            min_frequency, max_token_length, tie_break = self.min_frequency, self.max_token_length, self.tie_break
            queue = lambda corpus: LikelihoodQueue(corpus, min_frequency, max_token_length, tie_break)  # noqa: E731
        records, stop_reason = merge_loop(
            words, counts, symbols, self.vocab_size, self.min_frequency, self.max_token_length, prefix, progress, queue
        )
        steps = records_to_steps(records, symbols.id_to_token)
        vocab = tuple(symbols.id_to_token)
        history = WordPieceTrainingHistory(
            algorithm="WordPiece",
            model=None,  # type: ignore[arg-type]  # set by finish_history
            special_tokens=self.special_token_contents,
            alphabet=tuple(alphabet),
            word_counts=summarize_word_counts(word_counts),
            stop_reason=stop_reason,
            min_vocab_size=initial_size,
            max_vocab_size=len(vocab),
            trainer_config=self.config(),
            merges=steps,
            vocab=vocab,
            initial_vocab_size=initial_size,
            scoring=self.scoring,
            continuing_subword_prefix=prefix,
        )
        return finish_history(history, started)
