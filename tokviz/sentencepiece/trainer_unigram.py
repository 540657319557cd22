"""SentencePiece's unigram trainer (``unigram_model_trainer.cc``), with its history.

This follows the ``sentencepiece`` package the tests compare with (0.2.3), whose trainer
differs from older releases in two places marked (new) below.

1. **Seeds**: every character, then the substrings (2..``max_sentencepiece_length`` chars, valid
   pieces, occurring at least twice and followed by at least two different UTF-8 *bytes*, as the
   internal nodes of sentencepiece's byte-level suffix array are: ``é`` and ``è`` share their
   first byte, so a substring followed only by those two is no seed) ranked by
   ``occurrences * length``, where occurrences count every occurrence in the corpus (HF counts
   each distinct word once: the main reason its vocabularies differ from sentencepiece's) and a
   piece X ending 2+ sentences also gets the occurrences of ``X\\0`` when what follows those
   ``\\0`` differs (the suffix array runs over the sentences each ended by ``\\0``, in
   sentencepiece's order: empty sentences replaced by the last one, so the end of the text
   follows the last sentence); the
   top ``seed_sentencepiece_size`` of them join the characters; score = ``log(count / total)``.
2. **EM** on the words: E-step = expected piece counts from forward-backward marginals, M-step
   drops pieces expected less than 0.5 times and sets ``digamma(count) - digamma(total)``.
3. **Prune** after every EM round: a piece whose best segmentation is itself
   gets as alternative its best split; its loss is ``F * (log p(piece) - sum log p'(alt))``
   with the alternatives' counts raised by the piece's count (sentencepiece's formula, with
   ``len(alternatives) - 1``); pieces never on a Viterbi path or beaten by a split go first;
   keep ``max(1.1 * vocab_size, shrinking_factor * size)``. Stop as soon as a pruning reaches
   ``1.1 * vocab_size`` (new: no EM round after the last pruning), then drop the pieces whose
   best split scores strictly more than themselves (new: "unreachable" pieces).
4. **Finalize**: the required characters, then the best-scoring pieces up to the size.

Tie-breaking and precision, as sentencepiece does them (what makes the same pieces come out):

- seeds of equal ``occurrences * length``: the longer UTF-8 string first, then the smaller;
  the characters first, by count (highest first), then by character;
- sentencepiece keeps its scores, expected counts and losses in ``float`` (float32), and so
  does this trainer, step for step: the E-step runs on whole words (not on the chunks the seeds
  come from) in sentencepiece's word order (count, highest first, then the word); forward and
  backward fold each position's nodes one by one with its ``LogSumExp`` (float32 difference,
  double ``log1p(exp)``, stored as a float; nodes ending at a position earliest start first,
  nodes starting at one shortest first); each node's ``freq * exp(alpha + score + beta - Z)``
  (exponent summed in float32 left to right) is added to a float32 count in word order,
  position by position (``np.add.at``: one double addition rounded to float each); Viterbi sums
  in float32; seed scores, M-step scores (digamma in double, stored as float; the counts' sum
  accumulated as a float in list order) and pruning losses are rounded at the same steps, so two
  losses equal in float32 tie here too;
- a pruning keeps first the pieces without a loss (characters, pieces with no split), in list
  order, then the candidates by loss, highest first, ties by their place in the list; that
  new list order is kept (``position``) for the next pruning's ties, and its first piece takes
  the counts of unknown nodes (the trainer model's unknown id is 0);
- a piece's alternatives are its best split left to right, their float32 log-probabilities
  summed in that order;
- finalize: by score (highest first), ties by piece (UTF-8 byte order, the same as code points).

Where this can still differ: with several threads sentencepiece sums each thread's share of the
words apart, then the shares (tokviz sums as one thread); the unknown node of a dropped
character is folded first among the nodes starting at its position in backward, where
sentencepiece folds it last (only when a longer piece starts there too); Viterbi ties made by
float32 rounding of ``best + score`` pick the best predecessor per position here, per following
node in sentencepiece.

Measured against sentencepiece 0.2.3 with ``num_threads=1`` (same pieces with the same scores, in
the same order, held-out token counts equal): botchan.txt at 1,000 and 4,000 (8,000: refused by
sentencepiece too); big.txt's first 6,000 lines at 1,000 and 4,000, first 20,000 at 8,000;
tinyshakespeare at 1,000, 4,000, 8,000; wikitext2_valid at 4,000.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from tokviz.history import EmStep, PruneRound
from tokviz.models.unigram import _em
from tokviz.sentencepiece.pieces import UNK_CHAR, PieceRules
from tokviz.sentencepiece.trainer_bpe import sorted_chars

__all__ = ["UnigramResult", "train_unigram"]

UNK_PENALTY = 10.0


@dataclass(frozen=True, slots=True)
class UnigramResult:
    """Final ``(piece, score)`` pairs (best first), the EM steps, the prune rounds and the vocabulary before each pruning."""

    pieces: tuple[tuple[str, float], ...]
    em_steps: tuple[EmStep, ...]
    prune_rounds: tuple[PruneRound, ...]
    snapshots: tuple[tuple[tuple[str, float], ...], ...]
    stop_reason: str


def _lead_byte(char: str) -> str:
    """The first UTF-8 byte of ``char`` (as a one-character string): sentencepiece's suffix array is over
    bytes, so a substring followed only by characters sharing their first byte (``é`` and ``è``) is no
    internal node of it. ``_lead_byte("é") == "\xc3"``."""
    code = ord(char)
    if code < 0x80:
        return char
    if code < 0x800:
        return chr(0xC0 | code >> 6)
    if code < 0x10000:
        return chr(0xE0 | code >> 12)
    return chr(0xF0 | code >> 18)


def _seeds(contexts: Mapping[tuple[str, str], int], rules: PieceRules, seed_size: int) -> list[tuple[str, float]]:
    """Seed pieces from ``{(chunk, the character after it in its sentence): count}``; after a sentence's
    last chunk: ``"\\0"`` and the first character of the next sentence (nothing after the last one)."""
    max_len = rules.max_sentencepiece_length
    # sentencepiece's suffix array runs over the sentences each ended by "\0", and a substring
    # ending in "\0" counts for the piece without it: a sentence ending X (2+ times) adds those
    # occurrences to X when what follows the "\0"s differs (the next sentences' first bytes, or the
    # end of the text after the last one)
    end_occurrences: dict[str, int] = {}
    end_follow: dict[str, str | None] = {}
    for (chunk, after), count in contexts.items():
        if after[:1] != "\0":
            continue
        after_end = _lead_byte(after[1]) if len(after) > 1 else ""  # ("": the end of the text)
        for start in range(max(0, len(chunk) - max_len), len(chunk) - 1):
            sub = chunk[start:]
            if sub in end_follow:
                end_occurrences[sub] += count
                if end_follow[sub] != after_end:
                    end_follow[sub] = None
            else:
                end_occurrences[sub] = count
                end_follow[sub] = after_end
    occurrences: dict[str, int] = {}
    follow: dict[str, str | None] = {}  # the one character that always follows, None when several do
    all_chars: dict[str, int] = {}
    missing: Any = object()
    follow_get = follow.get
    # each chunk once, with its total count and the first byte of what follows it (None: several)
    by_chunk: dict[str, list[Any]] = {}
    for (chunk, after), count in contexts.items():
        lead = _lead_byte(after[0])
        entry = by_chunk.get(chunk)
        if entry is None:
            by_chunk[chunk] = [count, lead]
        else:
            entry[0] += count
            if entry[1] != lead:
                entry[1] = None
    for chunk, (count, tail) in by_chunk.items():
        n = len(chunk)
        for char in chunk:
            all_chars[char] = all_chars.get(char, 0) + count
        # what follows each place, as first bytes (the chunk itself when it is ASCII; "\uffff", no
        # byte, stands for several followers at the end, set below)
        leads = (chunk if chunk.isascii() else "".join(map(_lead_byte, chunk))) + (tail or "\uffff")
        for start in range(n - 1):
            for end in range(start + 2, min(n, start + max_len) + 1):
                sub = chunk[start:end]
                prev = follow_get(sub, missing)
                if prev is missing:  # (a first occurrence: one look-up and two stores)
                    follow[sub] = leads[end]
                    occurrences[sub] = count
                else:
                    occurrences[sub] += count
                    if prev is not None and prev != leads[end]:
                        follow[sub] = None
        if tail is None:
            for start in range(max(0, n - max_len), n - 1):
                follow[chunk[start:]] = None
    candidates: list[tuple[int, str]] = []
    for sub, occ in occurrences.items():
        if occ < 2 or follow[sub] is not None:  # not an internal node of the suffix tree
            occ = 0
        if end_follow.get(sub, "") is None and end_occurrences[sub] >= 2:
            occ += end_occurrences[sub]
        if not occ or not rules.is_valid(sub):
            continue
        candidates.append((occ * len(sub), sub))
    # sentencepiece 0.2.3's order: score, then the longer UTF-8 string, then the smaller one
    candidates.sort(key=lambda item: (-item[0], -len(item[1].encode("utf-8")), item[1]))
    seeds = [(c, float(n)) for c, n in sorted_chars(all_chars)]
    seeds += [(sub, float(score)) for score, sub in candidates[:seed_size]]
    # ToLogProb: the counts held as floats, their sum and logs in double, each score stored as a float
    seeds = [(piece, float(np.float32(score))) for piece, score in seeds]
    log_total = math.log(sum(score for _, score in seeds))
    return [(piece, float(np.float32(math.log(score) - log_total))) for piece, score in seeds]


def train_unigram(contexts: Mapping[tuple[str, str], int], required_chars: Mapping[str, int], vocab_size: int, meta_size: int,
                  rules: PieceRules, *, words: Mapping[str, int] | None = None, seed_size: int = 1_000_000,
                  shrinking_factor: float = 0.75, num_sub_iterations: int = 2,
                  progress: Callable[[str, int, int], None] | None = None) -> UnigramResult:
    """Train on ``{(chunk, next character): count}`` (words cut where pieces cannot cross, with the
    character that follows each in its sentence, for the seeds) and ``words`` (``{word: count}``,
    sentencepiece's sentences after its whitespace split, unknown markers included, for EM; the
    chunks when not given); ``vocab_size`` counts meta pieces.

    Each :class:`EmStep` records what sentencepiece logs: the objective is the negative
    log-likelihood per word and ``num_tokens`` the tokens of the Viterbi segmentation of the whole
    corpus."""
    report = progress or (lambda phase, done, total: None)
    if words is None:
        words = {}
        for (chunk, _), count in contexts.items():
            words[chunk] = words.get(chunk, 0) + int(count)  # type: ignore[index]
    # sentencepiece's order of its words (``Sorted``): by count, highest first, then by word;
    # its float32 sums of expected counts go in this order
    ordered = sorted(((w, int(c)) for w, c in words.items() if w and c > 0), key=lambda item: (-item[1], item[0]))
    chunks = [w for w, _ in ordered]
    counts = np.asarray([c for _, c in ordered], dtype=np.float64)
    total_count = float(counts.sum())
    report("seed pieces", 0, 1)
    seed_pairs = _seeds(contexts, rules, seed_size)
    # the last "seed" stands for sentencepiece's unknown node (the unknown marker, a tab): never a piece
    names = [p for p, _ in seed_pairs] + [UNK_CHAR]
    index = {p: i for i, p in enumerate(names[:-1])}
    n_seeds = len(names)
    unknown_seed = n_seeds - 1
    score = np.array([s for _, s in seed_pairs] + [0.0], dtype=np.float64)
    lengths = np.array([len(p) for p in names], dtype=np.int64)
    # flat string of chunks and every node (substring that is a seed) of every chunk
    # (int64 arrays, not lists: millions of nodes as int objects would double the peak memory)
    flat_first = array("q")
    starts = array("q")
    ends = array("q")
    seeds = array("q")
    occurrence = np.full(n_seeds, -1, dtype=np.int64)
    pos = 0
    max_len = rules.max_sentencepiece_length
    # every seed and (as -1) every string a longer seed starts with: a walk from a start stops at
    # the first substring that is neither (4 look-ups a start instead of up to max_len)
    prefix_index = dict.fromkeys([name[:cut] for name in names for cut in range(1, len(name))], -1)
    prefix_index.update(index)
    lookup = prefix_index.get
    for chunk in chunks:
        flat_first.append(pos)
        n = len(chunk)
        for start in range(n):
            for end in range(start + 1, min(n, start + max_len) + 1):
                seed = lookup(chunk[start:end])
                if seed is None:
                    if end == start + 1:  # (no piece has this character: an unknown node)
                        starts.append(pos + start)
                        ends.append(pos + end)
                        seeds.append(unknown_seed)
                    break
                if seed >= 0:
                    starts.append(pos + start)
                    ends.append(pos + end)
                    seeds.append(seed)
                    if occurrence[seed] < 0:
                        occurrence[seed] = pos + start
        pos += n + 1
    first = np.frombuffer(flat_first, dtype=np.int64)
    last = first + np.asarray([len(c) for c in chunks], dtype=np.int64)
    node_start = np.frombuffer(starts, dtype=np.int64)
    node_end = np.frombuffer(ends, dtype=np.int64)
    node_seed = np.frombuffer(seeds, dtype=np.int64)
    lattices = _em.LatticeSet(node_start, node_end, node_seed, node_end - node_start == 1, first, last, pos)
    report("seed pieces", 1, 1)
    alive = np.ones(n_seeds, dtype=bool)
    alive[unknown_seed] = False
    score = _unknown_scores(score, alive)
    # where each piece stands in sentencepiece's list (it reorders the list at each pruning; ties
    # between equal float32 losses go by this place, and the first piece takes the unknowns' counts)
    position = np.arange(n_seeds, dtype=np.int64)
    desired = int(vocab_size * 1.1)
    em_steps: list[EmStep] = []
    prune_rounds: list[PruneRound] = []
    snapshots: list[tuple[tuple[str, float], ...]] = []
    round_index = 0

    counts32 = counts.astype(np.float32)
    while True:
        for sub_iteration in range(num_sub_iterations):
            expected32, objective = _e_step(lattices, score, alive, position, counts, counts32, total_count)
            _, back = lattices.viterbi(score.astype(np.float32)[lattices.seed])
            docs, _ = lattices.backtrack(back)
            keep = alive & (expected32 >= 0.5)

            # single characters always keep a node (sentencepiece adds unknown nodes instead)
            dropped = alive & ~keep
            alive = keep
            # sentencepiece's M-step in its float variables: the counts and their sum (in list order)
            # are floats, digamma runs in double, the score is stored as a float
            in_order = np.flatnonzero(alive)
            in_order = in_order[np.argsort(position[in_order], kind="stable")]
            kept_total = np.add.accumulate(expected32[in_order])[-1] if len(in_order) else np.float32(0)
            log_total = float(np.float32(_em.digamma(np.array([float(kept_total)]))[0]))
            score = _em.digamma(np.maximum(expected32.astype(np.float64), 1e-300)) - log_total
            with np.errstate(over="ignore"):  # (dead pieces: -inf, replaced below)
                score = np.where(alive, score.astype(np.float32).astype(np.float64), np.nan)
            unk_score = float(np.nanmin(score)) - UNK_PENALTY
            score = np.where(alive, score, unk_score)  # a dropped character is an unknown node
            if dropped.any():
                lattices.filter(alive[lattices.seed] | lattices.single)
            em_steps.append(EmStep(round_index, sub_iteration, int(alive.sum()), objective, int(counts[docs].sum())))
            report("EM training", len(em_steps), len(em_steps) + 1)
        # sentencepiece >= 0.2.1 prunes after every EM round, the last one too, and stops once
        # the pruned vocabulary is small enough (no EM after the last pruning)
        size = int(alive.sum())
        order = np.flatnonzero(alive)
        snapshots.append(tuple((names[i], float(score[i])) for i in order))
        new_alive, removed = _prune(order[np.argsort(position[order], kind="stable")], score, alive, names, lengths, occurrence,
                                    lattices, counts, desired, shrinking_factor, position)
        prune_rounds.append(PruneRound(round_index, size, int(new_alive.sum()), removed))
        alive = new_alive
        score = _unknown_scores(score, alive)
        lattices.filter(alive[lattices.seed] | lattices.single)
        round_index += 1
        if int(alive.sum()) <= desired:
            break
    # then a piece that its own best split beats can never be the Viterbi choice: it goes
    order = np.flatnonzero(alive)
    multi = order[lengths[order] >= 2]
    _, _, self_best = _alternatives(multi, score, lengths, occurrence, lattices, strict=True)
    unreachable = multi[~self_best]
    if len(unreachable):
        prune_rounds.append(PruneRound(round_index, len(order), len(order) - len(unreachable),
                                       tuple((names[i], 0.0) for i in unreachable.tolist())))
        alive[unreachable] = False
        score = _unknown_scores(score, alive)
        lattices.filter(alive[lattices.seed] | lattices.single)
    # finalize: required characters first, then the best scores
    target = vocab_size - meta_size
    final: dict[str, float] = {}
    alive_scores = {names[i]: float(score[i]) for i in np.flatnonzero(alive)}
    min_score = min(alive_scores.values()) if alive_scores else 0.0
    penalty = 0.0
    for char, _ in sorted_chars(required_chars):
        if char in alive_scores:
            final[char] = alive_scores[char]
        else:
            final[char] = min_score + penalty
            penalty += 0.0001
    for piece, piece_score in sorted(alive_scores.items(), key=lambda item: (-item[1], item[0])):
        if piece in final:
            continue
        if len(final) >= target:
            break
        final[piece] = piece_score
    pieces = tuple(sorted(final.items(), key=lambda item: (-item[1], item[0])))
    snapshots.append(pieces)
    stop = f"reached the target vocab size of {vocab_size}" if len(pieces) >= target else \
        f"the corpus supports only {len(pieces) + meta_size} pieces (target {vocab_size})"
    return UnigramResult(pieces, tuple(em_steps), tuple(prune_rounds), tuple(snapshots), stop)


def _prune(order: np.ndarray, score: np.ndarray, alive: np.ndarray, names: list[str], lengths: np.ndarray,
           occurrence: np.ndarray, lattices: _em.LatticeSet, counts: np.ndarray, desired: int,
           shrinking_factor: float, position: np.ndarray | None = None
           ) -> tuple[np.ndarray, tuple[tuple[str, float], ...]]:
    """One pruning (``order``: the live pieces in sentencepiece's list order). The losses are computed
    in float32, operation by operation as sentencepiece's ``float`` variables hold them, and sorted
    highest first, ties by the place in the list; ``position`` (if given) is set to the new list:
    the pieces kept without a loss first, then the kept candidates by loss."""
    scores = score.astype(np.float32)[lattices.seed]
    multi = order[lengths[order] >= 2]
    alt_docs, alt_pieces, self_best = _alternatives(multi, score, lengths, occurrence, lattices)
    _, back = lattices.viterbi(scores)
    docs, nodes = lattices.backtrack(back)
    freq = np.bincount(lattices.seed[nodes], weights=counts[docs], minlength=len(names))
    # unknown nodes count for the first piece (sentencepiece's unknown id 0 in its trainer model)
    unknown = ~alive & (lengths == 1)
    first_alive = int(order[0])
    freq[first_alive] += float(freq[unknown].sum())
    freq[unknown] = 0.0
    alt_pieces = np.where(unknown[alt_pieces], first_alive, alt_pieces)
    f32 = freq.astype(np.float32)  # (token counts: whole numbers, exact in float32 below 2**24)
    total = np.float32(float(freq.sum()))  # (std::accumulate from 0.0: a double sum, kept in a float)
    log_total = np.float32(math.log(float(total)))
    has_alt = np.zeros(len(names), dtype=bool)
    has_alt[multi[self_best]] = True
    removable = np.zeros(len(names), dtype=bool)
    removable[multi[~self_best]] = True
    # each piece's alternatives together, left to right (backtrack gives them last first, round by round)
    grouped = np.lexsort((-np.arange(len(alt_docs)), alt_docs))
    alt_docs, alt_pieces = alt_docs[grouped], alt_pieces[grouped]
    n_alt = np.bincount(alt_docs, minlength=len(multi))
    f_piece = f32[multi]  # per multi-character piece
    logsum_alt = np.log((total + f_piece * (n_alt - 1).astype(np.float32)).astype(np.float64)).astype(np.float32)
    with np.errstate(divide="ignore"):
        terms = np.log((f32[alt_pieces] + f_piece[alt_docs]).astype(np.float64)) - logsum_alt[alt_docs].astype(np.float64)
    # logprob_alt += term, alternative by alternative, in a float
    logprob_alt = np.zeros(len(multi), dtype=np.float32)
    rank = np.arange(len(alt_docs)) - (np.cumsum(n_alt) - n_alt)[alt_docs]
    for k in range(int(n_alt.max(initial=0))):
        at = rank == k
        docs_k = alt_docs[at]
        logprob_alt[docs_k] = (logprob_alt[docs_k].astype(np.float64) + terms[at]).astype(np.float32)
    logprob_sp = (np.log(np.maximum(f_piece, 1).astype(np.float64)) - np.float64(log_total)).astype(np.float32)
    share = f_piece / total  # float32
    losses = np.zeros(len(names), dtype=np.float32)
    with np.errstate(invalid="ignore"):  # (a piece no path uses: 0 * inf; it is removed below)
        losses[multi] = share * (logprob_sp - logprob_alt)
    kept: list[int] = []
    candidates: list[tuple[int, float]] = []
    removed: list[tuple[str, float]] = []
    for piece in order.tolist():
        if freq[piece] == 0.0 or removable[piece]:
            removed.append((names[piece], 0.0))
        elif not has_alt[piece]:
            kept.append(piece)
        else:
            candidates.append((piece, float(losses[piece])))
    pruned_size = max(desired, int(shrinking_factor * len(order)))
    place = {piece: at for at, piece in enumerate(order.tolist())}
    candidates.sort(key=lambda item: (-item[1], place[item[0]]))
    room = max(0, pruned_size - len(kept))
    new_alive = np.zeros_like(alive)
    new_alive[kept] = True
    new_alive[[p for p, _ in candidates[:room]]] = True
    removed += [(names[p], float(loss)) for p, loss in candidates[room:]]
    if position is not None:
        new_order = kept + [p for p, _ in candidates[:room]]
        position[new_order] = np.arange(len(new_order))
    # single characters stay as nodes of the lattice (as unknowns) but leave the vocabulary
    return new_alive, tuple(removed)


def _e_step(lattices: _em.LatticeSet, score: np.ndarray, alive: np.ndarray, position: np.ndarray, counts: np.ndarray,
            counts32: np.ndarray, total_count: float) -> tuple[np.ndarray, float]:
    """sentencepiece's ``RunEStep`` with one thread, in its float32 arithmetic: forward-backward
    (:meth:`~tokviz.models.unigram._em.LatticeSet.forward32`), each node's
    ``freq * exp(alpha + score + beta - Z)`` (the exponent summed in float32, left to right) added
    to a float32 count word by word in sentencepiece's word order, position by position; an unknown
    node's count goes to the first piece of the list (the trainer model's unknown id 0).
    Returns the expected counts and the objective (``-sum(freq * Z) / words``, summed in float32)."""
    scores = score.astype(np.float32)[lattices.seed]
    alpha = lattices.forward32(scores)
    beta = lattices.backward32(scores)
    log_z = alpha[lattices.last]
    doc = lattices.doc
    exponent = alpha[lattices.start] + scores
    exponent += beta[lattices.end]
    exponent -= log_z[doc]
    contribution = counts[doc] * np.exp(exponent.astype(np.float64))
    alive_now = np.flatnonzero(alive)
    first_alive = alive_now[np.argmin(position[alive_now])]
    target = np.where(alive[lattices.seed], lattices.seed, first_alive)
    expected = np.zeros(len(score), dtype=np.float32)
    by_start = lattices.by_start
    np.add.at(expected, target[by_start], contribution[by_start])
    objective = -float(np.add.accumulate((counts32 * log_z) / np.float32(total_count))[-1]) if len(counts) else 0.0
    return expected, objective


def _unknown_scores(score: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Dead pieces score as sentencepiece's unknown node: the lowest live score minus ``UNK_PENALTY``."""
    return np.where(alive, score, float(np.nanmin(np.where(alive, score, np.nan))) - UNK_PENALTY)


def _alternatives(multi: np.ndarray, score: np.ndarray, lengths: np.ndarray, occurrence: np.ndarray,
                  lattices: _em.LatticeSet, strict: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best split of each multi-character piece (nodes inside one occurrence, the piece's own node left out).

    ``self_best``: the piece scores at least its best split (with ``strict``: its split does not
    score strictly more, sentencepiece's test for unreachable pieces)."""
    if not len(multi):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    occ = occurrence[multi]
    span = lengths[multi]
    by_start = np.argsort(lattices.start, kind="stable")
    starts_sorted = lattices.start[by_start]
    lo = np.searchsorted(starts_sorted, occ)
    hi = np.searchsorted(starts_sorted, occ + span)
    cnt = hi - lo
    doc = np.repeat(np.arange(len(multi)), cnt)
    offsets = np.cumsum(cnt) - cnt
    picked = by_start[np.arange(int(cnt.sum())) - np.repeat(offsets - lo, cnt)]
    s, e = lattices.start[picked], lattices.end[picked]
    o, L = occ[doc], span[doc]
    ok = (e <= o + L) & ~((s == o) & (e == o + L))
    picked, doc, s, e, o = picked[ok], doc[ok], s[ok], e[ok], o[ok]
    base = np.cumsum(span + 1) - (span + 1)
    local = _em.LatticeSet(base[doc] + (s - o), base[doc] + (e - o), lattices.seed[picked], lattices.single[picked],
                           base, base + span, int(base[-1] + span[-1] + 1))
    best, back = local.viterbi(score.astype(np.float32)[local.seed])
    self_best = (score[multi] >= best[base + span]) if not strict else ~(best[base + span] > score[multi])
    docs, nodes = local.backtrack(back, np.flatnonzero(self_best))
    return docs, local.seed[nodes], self_best
