"""Unigram training: start from many candidate pieces, then EM and pruning down to the target.

Two methods:

``method="em"`` — the SentencePiece / HF ``UnigramTrainer`` algorithm:

1. seed pieces: every character, plus the frequent substrings (occurring at least twice
   among the unique words, right-maximal, 2..``max_piece_length`` characters), ranked by
   occurrences * length, at most ``seed_size`` in all; log-probabilities from those counts;
2. EM, ``n_sub_iterations`` times: the E-step runs forward-backward on every word's
   lattice to get each piece's expected count (weighted by word counts); the M-step drops
   pieces expected less than 0.5 times and sets ``score = digamma(count) - digamma(total)``
   (the Bayesian / DP variant SentencePiece uses: a sparse prior);
3. pruning: for each piece, the loss = how much the corpus log-likelihood drops if every
   Viterbi use of it is replaced by its second-best segmentation; keep the pieces without
   alternative (single characters...), then the highest losses, down to
   ``max(shrinking_factor * size, 1.1 * vocab_size)``; back to 2 until the size is at most
   ``1.1 * vocab_size``;
4. finalize as HF: all required characters (those of the corpus and ``initial_alphabet``)
   kept, missing ones scored just below the minimum; then pieces in order up to
   ``vocab_size`` minus the special tokens; sorted by score; special tokens first (the
   unk token added first when it is not among them).

HF quirks reproduced on purpose (they change which pieces survive): substring counts
come from the unique words, each counted ONCE, whatever its frequency (characters are
weighted); the loss uses ``len(pieces) - 1`` where SentencePiece uses the number of
alternatives; a piece whose Viterbi frequency is 0 is dropped at the next pruning.

``method="course"`` — the simplified version of the HF course (chapter 6, section 7):
seed = the characters plus the most frequent substrings (300 tokens in all), score =
``-log(freq / total)``, loss = sum over words of ``freq * best-segmentation cost``; each
round removes the 10% of pieces whose removal raises the loss least (never a single
character), then recomputes the scores from the seed frequencies; no EM. It is exact
but O(vocab * corpus) per round: meant for the course's four sentences and small texts.
Two deliberate differences from the notebook: the last round removes only what reaches
the target (the notebook's loop overshoots, 108 -> 98 for a target of 100), and special
tokens are placed first as in the em method. ``max_piece_length`` does not apply (the
course has no limit).

Both return a :class:`UnigramTrainingHistory` (what SentencePiece logs per EM step, every
pruning round with every removed piece and its loss increase, the final pieces).
This version leaves out SentencePiece's sentence-level options (character coverage,
script / digit / whitespace splitting rules: the pre-tokenizer does that in HF) and
multithreading; the em method is vectorised with numpy instead (see ``_em.py``).
"""

from __future__ import annotations

import math
import operator
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from tokviz.errors import EmptyCorpusError, VocabSizeError
from tokviz.history import EmStep, ProgressCallback, PruneRound, TrainingHistory, WordCountSummary
from tokviz.models.unigram import _em
from tokviz.models.unigram.model import Unigram
from tokviz.models.trainer import Trainer, check_bool, check_count, check_float, check_initial_alphabet, check_optional_str

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_METHODS = ("em", "course")

#: Characters of the unique words per lattice chunk. The em method keeps every lattice node of the
#: corpus (about four per character, 25 bytes each) and walks them a chunk of words at a time, so a
#: pass's temporaries (scores, marginals, forward and backward tables, the construction's sort keys)
#: are bounded by a chunk instead of growing with the corpus; a corpus smaller than one chunk is
#: trained exactly as one set of lattices.
CHUNK_CHARACTERS = 1 << 20


@dataclass(slots=True)
class _Chunk:
    """The lattices of the words ``[first_word, end_word)``, positions relative to ``offset`` in the flat string."""

    lattices: _em.LatticeSet
    offset: int
    end: int
    counts: np.ndarray  # the chunk's word counts


def _lattice_chunks(seeds: _em.Seeds, counts: np.ndarray, chunk_characters: int) -> list[_Chunk]:
    """Cut the words into runs of at most ``chunk_characters`` flat positions (a longer word is a run
    of its own) and build each run's :class:`~tokviz.models.unigram._em.LatticeSet`.

    Two words of 3 characters and a chunk of 8 positions -> one chunk (positions 0-7, separators
    included); a chunk of 4 -> two. The runs are built from the last to the first, each one's nodes
    freed from ``seeds`` once its lattices hold them, so the nodes are never held twice.
    """
    ends = seeds.last + 1
    cuts = [0]
    while cuts[-1] < len(ends):
        offset = int(seeds.first[cuts[-1]])
        cuts.append(max(cuts[-1] + 1, int(np.searchsorted(ends, offset + chunk_characters, side="right"))))
    chunks: list[_Chunk] = []
    for word, stop in reversed(list(zip(cuts, cuts[1:]))):
        offset, end = int(seeds.first[word]), int(ends[stop - 1])
        start, node_end, seed, single = seeds.nodes(offset, end)
        seeds.release_from(offset)
        start -= offset
        node_end -= offset
        lattices = _em.LatticeSet(start, node_end, seed, single, seeds.first[word:stop] - offset,
                                  seeds.last[word:stop] - offset, end - offset)
        del start, node_end, seed, single
        chunks.append(_Chunk(lattices, offset, end, counts[word:stop]))
    chunks.reverse()
    return chunks


# -- history --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VocabSnapshot:
    """A vocabulary the trainer held after an EM phase (or a course round), ranked for pruning.

    ``pieces`` are ``(piece, score)`` pairs in the order a pruning to a smaller size keeps
    them: first the pieces that are never pruned, then by decreasing loss increase (for the
    last snapshot: HF's finalize order). ``round`` is the pruning round that followed.
    """

    round: int
    pieces: tuple[tuple[str, float], ...]
    #: the loss increase the pruning computed for each candidate piece (not only the removed ones)
    losses: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class UnigramTrainingHistory(TrainingHistory):
    """Everything a Unigram training did.

    ``em_steps``: one :class:`EmStep` per EM sub-iteration; ``prune_rounds``: one
    :class:`PruneRound` per pruning round (for ``method="course"``: ``removed`` lists every
    piece removed that round with the loss increase that condemned it);
    ``final_pieces``: the trained model's ``(piece, log-probability)`` pairs;
    ``snapshots``: the vocabularies ``model_at`` derives from; ``initial_loss``: the
    course's loss of the seed model (``None`` for em).

    Sizes in ``em_steps`` and ``prune_rounds`` are what HF / SentencePiece log: for em the
    trainer's piece list, which includes its temporary ``<UNK>`` and not yet the special
    tokens or missing required characters; for course, the model's size with the special
    tokens. Only ``model_at`` and ``model`` speak in final vocab sizes.
    """

    method: str = "em"
    em_steps: tuple[EmStep, ...] = ()
    prune_rounds: tuple[PruneRound, ...] = ()
    final_pieces: tuple[tuple[str, float], ...] = ()
    snapshots: tuple[VocabSnapshot, ...] = ()
    initial_loss: float | None = None
    required_chars: tuple[str, ...] = ()
    unk_token: str | None = None

    def for_model(self, model: Any) -> "UnigramTrainingHistory":
        """This history, after checking that ``model`` is a Unigram: HF's UnigramTrainer
        raises ("UnigramTrainer can only train a Unigram") rather than swap another model."""
        from tokviz.models.trainer import check_trains

        check_trains(model, "Unigram", "UnigramTrainer")
        return self

    def model_at(self, vocab_size: int) -> Unigram:
        """The model at ``vocab_size``, derived from the record without retraining.

        Exactly: take the smallest recorded vocabulary (a snapshot after an EM phase, or
        at the start of a course round) that still holds at least ``vocab_size`` tokens
        once the special tokens and required characters are counted; keep its pieces in
        the order the pruning criterion ranks them (never-pruned pieces, then decreasing
        loss increase) until ``vocab_size`` is reached, with the scores they had in that
        snapshot; then finalize as the trainer does (em: HF's finalize — required
        characters, sort by score, special tokens first; course: scores recomputed from
        the seed frequencies of the kept pieces). At the trained size this returns
        ``self.model``. Sizes outside ``[min_vocab_size, max_vocab_size]`` are clamped.
        """
        try:
            vocab_size = operator.index(vocab_size)  # ints, numpy ints; not floats or bools
        except TypeError:
            raise VocabSizeError(f"The vocab size must be a whole number, got {vocab_size!r}.") from None
        if isinstance(vocab_size, bool):
            raise VocabSizeError(f"The vocab size must be a whole number, got {vocab_size!r}.")
        target = min(max(vocab_size, self.min_vocab_size), self.max_vocab_size)
        if target == self.model.get_vocab_size():
            return self.model  # type: ignore[return-value]
        sizes = [self._snapshot_size(s) for s in self.snapshots]
        usable = [i for i, size in enumerate(sizes) if size >= target]
        chosen = self.snapshots[min(usable, key=lambda i: sizes[i])] if usable else self.snapshots[0]
        specials = _special_list(self.special_tokens, self.unk_token)
        if self.method == "course":
            seed_freqs = dict(dict(self.extra).get("seed_freqs", ()))
            return _course_model(chosen.pieces, target - len(specials), seed_freqs, specials, self.unk_token)
        return _finalize(chosen.pieces, self.required_chars, self.special_tokens, self.unk_token, target)

    def _snapshot_size(self, snapshot: VocabSnapshot) -> int:
        pieces = {piece for piece, _ in snapshot.pieces if piece != "<UNK>"} | set(self.required_chars)
        return len(pieces) + len(_special_list(self.special_tokens, self.unk_token))

    def to_frame(self) -> "pd.DataFrame":
        """One row per EM step: round, sub_iteration, vocab_size, objective, num_tokens.

        For ``method="course"`` (no EM): one row per pruning round (see :meth:`prune_frame`).
        """
        import pandas as pd

        if self.method == "course":
            return self.prune_frame()
        return pd.DataFrame(
            [(s.round, s.sub_iteration, s.vocab_size, s.objective, s.num_tokens) for s in self.em_steps],
            columns=["round", "sub_iteration", "vocab_size", "objective", "num_tokens"],
        )

    def prune_frame(self) -> "pd.DataFrame":
        """One row per pruning round: round, size_before, size_after, removed, top removed pieces."""
        import pandas as pd

        rows = []
        for r in self.prune_rounds:
            worst = sorted(r.removed, key=lambda item: -item[1])[:5]
            rows.append((r.round, r.size_before, r.size_after, len(r.removed), ", ".join(p for p, _ in worst)))
        return pd.DataFrame(rows, columns=["round", "size_before", "size_after", "removed", "highest_loss_removed"])

    def removed_frame(self) -> "pd.DataFrame":
        """Every removed piece: round, piece, loss_increase."""
        import pandas as pd

        return pd.DataFrame(
            [(r.round, piece, loss) for r in self.prune_rounds for piece, loss in r.removed],
            columns=["round", "piece", "loss_increase"],
        )


# -- shared helpers -------------------------------------------------------------------------


def _special_list(special_tokens: Sequence[str], unk_token: str | None) -> list[str]:
    """Special tokens as HF places them: the unk token first when it is not among them."""
    specials = list(special_tokens)
    if unk_token is not None and unk_token not in specials:
        specials.insert(0, unk_token)
    return specials


def _finalize(
    pieces: Sequence[tuple[str, float]],
    required_chars: Sequence[str],
    special_tokens: Sequence[str],
    unk_token: str | None,
    vocab_size: int,
) -> Unigram:
    """HF's ``finalize``: required characters, pieces in order up to the size, sort, specials.

    ``[("<UNK>", nan), ("ab", -1.0), ("a", -2.0)]`` with required ``["a", "b"]``, size 3 ->
    pieces a (-2.0), b (min - 0.0 = -2.0, missing), ab (-1.0) sorted by score: ab, a, b.
    """
    finite = [score for _, score in pieces if not math.isnan(score)]
    min_score = min(finite) if finite else 0.0
    existing = dict(pieces)
    penalty = 0.0
    out: list[tuple[str, float]] = []
    inserted = {"<UNK>"}  # the trainer's temporary unknown piece never survives
    for char in required_chars:
        inserted.add(char)
        if char in existing:
            out.append((char, existing[char]))
        else:
            out.append((char, min_score + penalty))
            penalty += 0.0001
    specials = _special_list(special_tokens, unk_token)
    budget = vocab_size - len(specials)
    for piece, score in pieces:
        if piece in inserted:
            continue
        if len(out) >= budget:
            break
        inserted.add(piece)
        out.append((piece, 0.0 if math.isnan(score) else score))
    out.sort(key=lambda item: -item[1])  # stable, like Rust's sort_by
    unk_id = specials.index(unk_token) if unk_token is not None else None
    return Unigram([(s, 0.0) for s in specials] + out, unk_id=unk_id)


def _summary(words: Sequence[str], counts: Sequence[int]) -> WordCountSummary:
    chars: set[str] = set()
    for word in words:
        chars.update(word)
    ranked = sorted(zip(words, counts), key=lambda item: -item[1])[:20]
    return WordCountSummary(
        total_words=int(sum(counts)),
        unique_words=len(words),
        total_characters=int(sum(len(w) * c for w, c in zip(words, counts))),
        distinct_characters=len(chars),
        top_words=tuple(ranked),
    )


# -- the trainer ----------------------------------------------------------------------------


def _check_method(name: str, value: Any) -> str:
    if value not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {value!r}")
    return value


def _check_shrinking_factor(name: str, value: Any) -> float:
    value = check_float(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"shrinking_factor must be between 0 and 1 (exclusive), got {value!r}")
    return value


class UnigramTrainer(Trainer):
    """``UnigramTrainer(vocab_size=8000, ...)`` as in HF, plus ``method`` ("em" or "course").

    >>> history = UnigramTrainer(vocab_size=12, method="em").train_from_word_counts({"▁hug": 10, "▁pug": 5, "▁hugs": 5})
    >>> history.model.tokenize("▁hugs")[0].value
    '▁hug'
    """

    MODEL_TYPE = "Unigram"
    PROGRESS_STAGES = 2

    _HF_FIELDS = (
        "show_progress", "vocab_size", "n_sub_iterations", "shrinking_factor", "special_tokens", "initial_alphabet",
        "unk_token", "max_piece_length", "seed_size", "words",
    )
    _HF_CONSTANTS = {"words": {}}
    _TOKVIZ_FIELDS = {"method": "em"}
    _VALIDATORS = {
        "vocab_size": lambda name, value: check_count(name, value, 1),
        "show_progress": check_bool,
        "shrinking_factor": _check_shrinking_factor,
        "unk_token": check_optional_str,
        "max_piece_length": lambda name, value: check_count(name, value, 1),
        "n_sub_iterations": lambda name, value: check_count(name, value, 1),
        "seed_size": lambda name, value: check_count(name, value, 1),
        "initial_alphabet": check_initial_alphabet,
        "method": _check_method,
    }

    def __init__(
        self,
        vocab_size: int = 8000,
        show_progress: bool = True,
        special_tokens: Sequence[Any] = (),
        initial_alphabet: Sequence[str] = (),
        shrinking_factor: float = 0.75,
        unk_token: str | None = None,
        max_piece_length: int = 16,
        n_sub_iterations: int = 2,
        seed_size: int = 1_000_000,
        method: str = "em",
    ) -> None:
        self._set_options(locals())

    # ------------------------------------------------------------------------------

    def _config(self) -> tuple[tuple[str, Any], ...]:
        return (
            ("vocab_size", self.vocab_size),
            ("special_tokens", self.special_token_contents),
            ("shrinking_factor", self.shrinking_factor),
            ("unk_token", self.unk_token),
            ("max_piece_length", self.max_piece_length),
            ("n_sub_iterations", self.n_sub_iterations),
            ("seed_size", self.seed_size),
            ("initial_alphabet", tuple(self.initial_alphabet)),
            ("method", self.method),
        )

    def train_from_word_counts(
        self, word_counts: Mapping[str, int], progress: ProgressCallback | None = None
    ) -> UnigramTrainingHistory:
        """Train on pre-tokenized word counts (``{"▁hug": 10, ...}``), in their given order."""
        started = time.perf_counter()
        items = [(w, int(c)) for w, c in word_counts.items() if w and int(c) > 0]
        if not items:
            raise EmptyCorpusError("The corpus is empty after normalization and pre-tokenization: there is nothing to train on.")
        words = [w for w, _ in items]
        counts = [c for _, c in items]
        chars: set[str] = set(self.initial_alphabet)
        for word in words:
            chars.update(word)
        # HF iterates a HashSet here (random order); code point order makes ours reproducible.
        required = tuple(sorted(chars))
        specials = _special_list(self.special_token_contents, self.unk_token)
        min_size = len(required) + len(specials)
        if self.vocab_size < min_size:
            raise VocabSizeError(
                f"A vocab size of {self.vocab_size} is too small: the corpus has {len(required)} distinct characters"
                f" and there are {len(specials)} special tokens, so at least {min_size} are needed."
            )
        if self.method == "course":
            fields = self._train_course(words, counts, required, progress)
        else:
            fields = self._train_em(words, counts, required, progress)
        return UnigramTrainingHistory(
            algorithm="unigram",
            special_tokens=self.special_token_contents,
            alphabet=required,
            word_counts=_summary(words, counts),
            min_vocab_size=min_size,
            trainer_config=self._config(),
            seconds=time.perf_counter() - started,
            required_chars=required,
            unk_token=self.unk_token,
            method=self.method,
            **fields,
        )

    # -- method="em" ----------------------------------------------------------------

    def _train_em(self, words: list[str], counts_list: list[int], required: tuple[str, ...],
                  progress: ProgressCallback | None) -> dict[str, Any]:
        report = progress or (lambda phase, done, total: None)
        report("seed pieces", 0, 1)
        counts = np.asarray(counts_list, dtype=np.float64)
        total_count = float(counts.sum())
        seeds = _em.find_seeds(words, np.asarray(counts_list, dtype=np.int64), self.max_piece_length, self.seed_size)
        names = seeds.pieces
        n_seeds = len(names)
        report("seed pieces", 1, 1)
        chunks = _lattice_chunks(seeds, counts, CHUNK_CHARACTERS)
        seeds.release_nodes()  # the lattices hold them now, in their own order
        seed_total = float(np.nansum(seeds.counts[1:]))
        score = np.full(n_seeds, np.nan)
        score[1:] = np.log(seeds.counts[1:]) - math.log(seed_total)
        order = np.arange(n_seeds)  # current piece ids -> seed indices; id 0 is <UNK>
        alive = np.ones(n_seeds, dtype=bool)
        lengths = np.array([len(p) for p in names])
        lengths[0] = 1

        desired = self.vocab_size * 11 // 10
        expected_loops = max(1, int((math.log(desired) - math.log(max(n_seeds, 1))) / math.log(self.shrinking_factor)) + 1)
        expected_updates = expected_loops * self.n_sub_iterations
        em_steps: list[EmStep] = []
        prune_rounds: list[PruneRound] = []
        snapshots: list[VocabSnapshot] = []
        round_index = 0
        # progress: 4 ticks per EM step (forward, backward, Viterbi, M-step), 3 per pruning
        work_total = expected_updates * 4 + max(0, expected_loops - 1) * 3
        work_done = 0

        def tick() -> None:
            nonlocal work_done
            work_done += 1
            report("EM training", min(work_done, work_total - 1), work_total)

        def beat() -> None:
            """Report between chunks (the same figure): a job that waits for progress hears from us often."""
            report("EM training", min(work_done, work_total - 1), work_total)

        def node_scores(lattices: _em.LatticeSet) -> tuple[np.ndarray, np.ndarray]:
            """Effective piece and score of every node (dropped characters become <UNK>)."""
            finite = score[order[1:]]
            unk_score = (float(np.min(finite)) if len(finite) else 0.0) - _em.UNK_PENALTY
            effective = np.where(alive[lattices.seed], lattices.seed, 0)
            table = score.copy()
            table[0] = unk_score
            return effective, table[effective]

        while True:
            for sub_iteration in range(self.n_sub_iterations):
                expected = np.zeros(n_seeds)
                log_likelihood = 0.0
                num_tokens = 0
                for chunk in chunks:
                    lattices = chunk.lattices
                    effective, scores = node_scores(lattices)
                    alpha = lattices.forward(scores)
                    beta = lattices.backward(scores)
                    log_z = alpha[lattices.last]
                    # weight * exp(alpha[start] + score + beta[end] - log_z[doc]), one temporary at a time
                    marginal = alpha[lattices.start]
                    marginal += scores
                    marginal += beta[lattices.end]
                    doc = lattices.doc
                    marginal -= log_z[doc]
                    np.exp(marginal, out=marginal)
                    marginal *= chunk.counts[doc]
                    expected += np.bincount(effective, weights=marginal, minlength=n_seeds)
                    del marginal, alpha, beta, doc
                    log_likelihood += float((chunk.counts * log_z).sum())
                    _, back = lattices.viterbi(scores)
                    docs, _ = lattices.backtrack(back)
                    num_tokens += int(len(docs))
                    del effective, scores, back, docs
                    beat()
                tick()
                tick()
                objective = -log_likelihood / total_count
                tick()
                # M-step: drop rare pieces, Bayesian update of the others
                freq = expected[order]
                keep = freq >= 0.5
                keep[0] = True
                kept_freq = freq[keep][1:]
                log_total = float(_em.digamma(np.array([kept_freq.sum()]))[0])
                dropped = order[~keep]
                alive[dropped] = False
                score[dropped] = np.nan
                order = order[keep]
                score[order[1:]] = _em.digamma(kept_freq) - log_total
                for chunk in chunks:
                    chunk.lattices.filter(alive[chunk.lattices.seed] | chunk.lattices.single)
                em_steps.append(EmStep(round_index, sub_iteration, len(order), objective, num_tokens))
                tick()
            if len(order) <= desired:
                break
            size_before = len(order)
            new_order, ranked, removed, losses = self._prune(order, score, alive, names, lengths, seeds, chunks,
                                                             total_count, node_scores, tick, beat)
            snapshots.append(VocabSnapshot(round_index, tuple((names[i], float(score[i])) for i in ranked), losses))
            prune_rounds.append(PruneRound(round_index, size_before, len(new_order), removed))
            removed_ids = np.setdiff1d(order, new_order)
            alive[removed_ids] = False
            score[removed_ids] = np.nan
            order = new_order
            for chunk in chunks:
                chunk.lattices.filter(alive[chunk.lattices.seed] | chunk.lattices.single)
            round_index += 1
        report("EM training", work_total, work_total)
        final_pieces = tuple((names[i], float(score[i])) for i in order)
        snapshots.append(VocabSnapshot(round_index, final_pieces))
        model = _finalize(final_pieces, required, self.special_token_contents, self.unk_token, self.vocab_size)
        report("finalize", 1, 1)
        stop = (
            f"reached the target vocab size of {self.vocab_size}"
            if model.get_vocab_size() >= self.vocab_size
            else f"the corpus supports only {model.get_vocab_size()} tokens (target {self.vocab_size})"
        )
        max_size = len({p for p, _ in snapshots[0].pieces if p != "<UNK>"} | set(required)) + len(
            _special_list(self.special_token_contents, self.unk_token))
        return dict(
            model=model,
            stop_reason=stop,
            max_vocab_size=max(max_size, model.get_vocab_size()),
            em_steps=tuple(em_steps),
            prune_rounds=tuple(prune_rounds),
            final_pieces=tuple(model.vocab),
            snapshots=tuple(snapshots),
        )

    def _prune(
        self,
        order: np.ndarray,
        score: np.ndarray,
        alive: np.ndarray,
        names: list[str],
        lengths: np.ndarray,
        seeds: _em.Seeds,
        chunks: list[_Chunk],
        total_count: float,
        node_scores: Callable[[_em.LatticeSet], tuple[np.ndarray, np.ndarray]],
        tick: Callable[[], None],
        beat: Callable[[], None],
    ) -> tuple[np.ndarray, list[int], tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
        """One HF pruning round.

        Returns the new piece order (``[<UNK>, kept without alternative..., best losses...]``),
        every piece ranked for ``model_at``, the removed pieces with their loss increase
        (0.0 for pieces no Viterbi path uses) and every candidate's loss increase.
        """
        # 1. second-best segmentation of every multi-character piece, in its own lattice (cut from
        #    the chunk that holds the occurrence the seed search recorded);
        # 2. Viterbi frequency of every piece over the corpus
        multi = order[1:][lengths[order[1:]] >= 2]
        occurrence = seeds.occurrence[multi]
        self_best = np.zeros(len(multi), dtype=bool)
        alt_doc_parts, alt_piece_parts = [], []
        freq = np.zeros(len(names))
        for chunk in chunks:
            effective, scores = node_scores(chunk.lattices)
            inside = np.flatnonzero((occurrence >= chunk.offset) & (occurrence < chunk.end))
            docs, pieces, best_alone = self._alternatives(multi[inside], occurrence[inside] - chunk.offset, score, lengths,
                                                          chunk.lattices, effective, scores)
            alt_doc_parts.append(inside[docs])
            alt_piece_parts.append(pieces)
            self_best[inside] = best_alone
            _, back = chunk.lattices.viterbi(scores)
            docs, nodes = chunk.lattices.backtrack(back)
            freq += np.bincount(effective[nodes], weights=chunk.counts[docs], minlength=len(names))
            del effective, scores, back, docs, nodes
            beat()
        alt_docs, alt_pieces = np.concatenate(alt_doc_parts), np.concatenate(alt_piece_parts)
        tick()
        tick()
        total = float(freq.sum())
        log_total = math.log(total)
        n_pieces = len(order)
        # 3. loss of each candidate
        has_alt = np.zeros(len(names), dtype=bool)
        has_alt[multi[self_best]] = True
        always_keep = np.ones(len(names), dtype=bool)
        always_keep[multi[~self_best]] = False
        # HF: logsum_alt = log(sum + freq * (alternatives.len() - 1)) where `alternatives`
        # is the outer vector (one entry per piece): so it is len(pieces) - 1, not the
        # number of alternative pieces as in SentencePiece. Kept for parity.
        seg_doc_piece = multi[alt_docs]
        f_piece = freq[seg_doc_piece]
        logsum_alt = np.log(total + f_piece * (n_pieces - 1))
        with np.errstate(divide="ignore"):  # zero-frequency pieces are dropped below anyway
            terms = np.log(freq[alt_pieces] + f_piece) - logsum_alt
        logprob_alt = np.bincount(alt_docs, weights=terms, minlength=len(multi))
        kept_first: list[int] = []
        candidates: list[tuple[int, float]] = []
        zero_removed: list[int] = []
        alt_logprob = np.zeros(len(names))
        alt_logprob[multi] = logprob_alt
        freq_list = freq.tolist()
        for piece in order[1:].tolist():
            f = freq_list[piece]
            if f == 0.0 and not always_keep[piece]:
                zero_removed.append(piece)
            elif not has_alt[piece]:
                kept_first.append(piece)
            elif f == 0.0:
                zero_removed.append(piece)
            else:
                loss = (f / total_count) * ((math.log(f) - log_total) - alt_logprob[piece])
                candidates.append((piece, loss))
        desired = self.vocab_size * 11 // 10
        pruned_size = max(desired, int(n_pieces * self.shrinking_factor))
        candidates.sort(key=lambda item: -item[1])  # stable: ties keep id order, as HF
        tick()
        room = max(0, pruned_size - 1 - len(kept_first))
        new_order = np.array([0] + kept_first + [p for p, _ in candidates[:room]], dtype=np.int64)
        removed = tuple((names[p], float(loss)) for p, loss in candidates[room:]) + tuple(
            (names[p], 0.0) for p in zero_removed)
        ranked = new_order.tolist() + [p for p, _ in candidates[room:]] + zero_removed
        losses = tuple((names[p], float(loss)) for p, loss in candidates)
        return new_order, ranked, removed, losses

    def _alternatives(
        self,
        multi: np.ndarray,
        occ: np.ndarray,
        score: np.ndarray,
        lengths: np.ndarray,
        lattices: _em.LatticeSet,
        effective: np.ndarray,
        scores: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each multi-character piece: its best segmentation into at least two nodes.

        The lattice of a piece is the part of a word lattice covering one occurrence of it
        (the corpus nodes inside that span), minus the node of the piece itself. Returns
        (document index, alternative piece) pairs and whether the piece alone beats its
        best split (then HF's 2-best gives that split as the alternative).
        """
        if not len(multi):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        span = lengths[multi]
        # (Index arrays here are as long as the nodes inside every occurrence: kept int32 and
        # dropped as soon as used, since this is the trainer's peak of memory.)
        itype = lattices.start.dtype
        by_start = np.argsort(lattices.start, kind="stable").astype(itype)
        starts_sorted = lattices.start[by_start]
        lo = np.searchsorted(starts_sorted, occ)
        hi = np.searchsorted(starts_sorted, occ + span)
        del starts_sorted
        cnt = hi - lo
        doc = np.repeat(np.arange(len(multi), dtype=itype), cnt)
        offsets = np.cumsum(cnt) - cnt
        where = np.arange(int(cnt.sum()), dtype=np.int64)
        where -= np.repeat(offsets - lo, cnt)
        picked = by_start[where]
        del by_start, where
        s, e = lattices.start[picked], lattices.end[picked]
        o, L = occ[doc], span[doc]
        ok = (e <= o + L) & ~((s == o) & (e == o + L))
        del L
        picked, doc, s, e, o = picked[ok], doc[ok], s[ok], e[ok], o[ok]
        del ok
        base = np.cumsum(span + 1) - (span + 1)
        local_s = base[doc] + (s - o)
        del s
        local_e = base[doc] + (e - o)
        del e, o
        pieces_set = _em.LatticeSet(local_s, local_e, effective[picked], lattices.single[picked],
                                    base, base + span, int(base[-1] + span[-1] + 1))
        del local_s, local_e
        table = np.zeros(len(score))
        table[effective[picked]] = scores[picked]
        node_sc = table[pieces_set.seed]
        best, back = pieces_set.viterbi(node_sc)
        self_best = score[multi] >= best[base + span]
        docs, nodes = pieces_set.backtrack(back, np.flatnonzero(self_best))
        return docs, pieces_set.seed[nodes], self_best

    # -- method="course" ------------------------------------------------------------

    def _train_course(self, words: list[str], counts: list[int], required: tuple[str, ...],
                      progress: ProgressCallback | None) -> dict[str, Any]:
        report = progress or (lambda phase, done, total: None)
        word_freqs = list(zip(words, counts))
        char_freqs: dict[str, int] = {}
        sub_freqs: dict[str, int] = {}
        for word, freq in word_freqs:
            for i in range(len(word)):
                char_freqs[word[i]] = char_freqs.get(word[i], 0) + freq
                for j in range(i + 2, len(word) + 1):  # the course has no length limit
                    sub_freqs[word[i:j]] = sub_freqs.get(word[i:j], 0) + freq
        ranked_subs = sorted(sub_freqs.items(), key=lambda item: item[1], reverse=True)
        seed_total = max(300, len(char_freqs))
        token_freqs = dict(list(char_freqs.items()) + ranked_subs[: seed_total - len(char_freqs)])
        specials = _special_list(self.special_token_contents, self.unk_token)
        target = self.vocab_size - len(specials)
        costs = _course_costs(token_freqs)
        initial_loss = _course_loss(word_freqs, costs)
        prune_rounds: list[PruneRound] = []
        snapshots: list[VocabSnapshot] = []
        round_index = 0
        expected_rounds = max(1, math.ceil(math.log(max(target, 1) / len(token_freqs)) / math.log(0.9))) if len(token_freqs) > target else 1
        while len(costs) > target:
            losses = _course_scores(
                word_freqs, costs,
                lambda i, n: report("course pruning", round_index * 1000 + 1000 * i // n, expected_rounds * 1000))
            ranked = sorted(losses.items(), key=lambda item: item[1])
            n_remove = min(int(len(costs) * 0.1), len(costs) - target)
            n_remove = max(n_remove, 1) if ranked else 0
            if not n_remove:
                break
            # Snapshot: scores as log-probabilities, pieces ranked by what pruning keeps first.
            keep_first = [t for t in costs if len(t) == 1]
            by_loss = [t for t, _ in sorted(losses.items(), key=lambda item: -item[1])]
            snapshots.append(VocabSnapshot(round_index, tuple((t, -costs[t]) for t in keep_first + by_loss),
                                           tuple(losses.items())))
            removed = ranked[:n_remove]
            for token, _ in removed:
                token_freqs.pop(token)
            prune_rounds.append(PruneRound(round_index, len(costs) + len(specials),
                                           len(token_freqs) + len(specials), tuple(removed)))
            costs = _course_costs(token_freqs)
            round_index += 1
        report("course pruning", expected_rounds * 1000, expected_rounds * 1000)
        snapshots.append(VocabSnapshot(round_index, tuple((t, -c) for t, c in costs.items())))
        model = _course_model(snapshots[-1].pieces, len(costs), token_freqs, specials, self.unk_token)
        stop = (
            f"reached the target vocab size of {self.vocab_size}"
            if model.get_vocab_size() >= self.vocab_size
            else f"the corpus supports only {model.get_vocab_size()} tokens (target {self.vocab_size})"
        )
        seed_freqs = dict(list(char_freqs.items()) + ranked_subs[: seed_total - len(char_freqs)])
        return dict(
            model=model,
            stop_reason=stop,
            max_vocab_size=len(seed_freqs) + len(specials),
            prune_rounds=tuple(prune_rounds),
            final_pieces=tuple(model.vocab),
            snapshots=tuple(snapshots),
            initial_loss=initial_loss,
            extra=(("seed_freqs", tuple(seed_freqs.items())),),
        )


# -- the course's functions (HF course, chapter 6, section 7) -------------------------------


def _course_costs(token_freqs: Mapping[str, int]) -> dict[str, float]:
    """``-log(freq / total)`` per token: ``{"a": 3, "b": 1} -> {"a": 0.2877, "b": 1.3863}``."""
    total = sum(token_freqs.values())
    return {token: -math.log(freq / total) for token, freq in token_freqs.items()}


def course_encode_word(word: str, costs: Mapping[str, float]) -> tuple[list[str], float | None]:
    """The course's ``encode_word``: cheapest segmentation and its cost (the course starts at 1).

    ``course_encode_word("ab", {"a": 1.0, "b": 1.0, "ab": 1.5}) -> (['ab'], 2.5)``;
    ``(['<unk>'], None)`` when no segmentation exists.
    """
    best: list[tuple[int, float] | None] = [(0, 1.0)] + [None] * len(word)
    for start in range(len(word)):
        here = best[start]
        if here is None:
            continue
        for end in range(start + 1, len(word) + 1):
            cost = costs.get(word[start:end])
            if cost is None:
                continue
            candidate = cost + here[1]
            current = best[end]
            if current is None or current[1] > candidate:
                best[end] = (start, candidate)
    last = best[-1]
    if last is None or not word:
        return ["<unk>"], None
    tokens: list[str] = []
    end = len(word)
    while end > 0:
        entry = best[end]
        assert entry is not None  # every position on the best path was reached
        tokens.append(word[entry[0]:end])
        end = entry[0]
    tokens.reverse()
    return tokens, last[1]


def _course_loss(word_freqs: Iterable[tuple[str, int]], costs: Mapping[str, float]) -> float:
    loss = 0.0
    for word, freq in word_freqs:
        _, cost = course_encode_word(word, costs)
        loss += freq * (cost if cost is not None else 0.0)
    return loss


def _course_scores(word_freqs: Sequence[tuple[str, int]], costs: Mapping[str, float],
                   on_token: Callable[[int, int], None] | None = None) -> dict[str, float]:
    """Loss increase when each multi-character token is removed (the course's ``compute_scores``)."""
    base = _course_loss(word_freqs, costs)
    scores: dict[str, float] = {}
    for index, token in enumerate(costs):
        if on_token is not None:
            on_token(index, len(costs))
        if len(token) == 1:
            continue
        without = dict(costs)
        without.pop(token)
        scores[token] = _course_loss(word_freqs, without) - base
    return scores


def _course_model(pieces: Sequence[tuple[str, float]], n_pieces: int, seed_freqs: Mapping[str, int],
                  specials: Sequence[str], unk_token: str | None) -> Unigram:
    """Keep the first ``n_pieces`` (characters always), rescore from seed frequencies."""
    chars = [p for p, _ in pieces if len(p) == 1]
    rest = [p for p, _ in pieces if len(p) > 1]
    kept = chars + rest[: max(0, n_pieces - len(chars))]
    freqs = {p: seed_freqs.get(p, 1) for p in kept}
    total = sum(freqs.values())
    vocab = [(s, 0.0) for s in specials] + [(p, math.log(f / total)) for p, f in freqs.items()]
    unk_id = list(specials).index(unk_token) if unk_token is not None else None
    return Unigram(vocab, unk_id=unk_id)
