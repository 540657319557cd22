"""The vectorised engine behind ``UnigramTrainer(method="em")``: every word's lattice at once.

HF and SentencePiece build one lattice per word and walk it in compiled code. In Python
that is far too slow, so we lay ALL unique words end to end in one "flat" string (each
followed by a ``\\0`` separator, as HF does for its suffix array) and keep every lattice
node of every word as one row of a few numpy arrays (start, end, piece). A position of
the flat string is a lattice position; word ``w`` spans ``[first[w], last[w]]``.

Dynamic programming over lattices then runs "layer by layer": all nodes that end at
offset ``p`` inside their word (in any word) are processed together with numpy
reductions, for ``p = 1, 2, ...``. The number of numpy calls grows with the longest word,
not with the corpus.

Pieces only ever disappear during training (the M-step drops rare pieces, pruning drops
the least useful), so the nodes are found once, for the seed vocabulary, and later
vocabularies just filter them. Pieces are named by their *seed index* (0 is the
trainer's temporary ``<UNK>``); a single-character node whose piece was dropped becomes
an unknown node (seed 0), as HF's ``populate_nodes`` inserts one.

What this leaves out: HF's approximation ``log_sum_exp`` (which ignores terms 50 nats
below the maximum; we add them) and its thread-level parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: HF / SentencePiece: an unknown character costs this much below the worst piece.
UNK_PENALTY = 10.0


def index_dtype(n: int) -> type:
    """The narrowest integer type that holds indices below ``n``: int32 for every corpus the app
    allows (node arrays are the trainer's memory, so this halves it), int64 beyond 2**31.

    >>> index_dtype(1_000).__name__, index_dtype(2**31 + 1).__name__
    ('int32', 'int64')
    """
    return np.int32 if n < 2**31 - 1 else np.int64


def digamma(x: np.ndarray) -> np.ndarray:
    """HF's digamma (recurrence up to 7, then the asymptotic series), vectorised.

    ``digamma(np.array([1.0])) -> [-0.5772...]`` (minus the Euler-Mascheroni constant).
    """
    x = np.array(x, dtype=np.float64, copy=True)
    result = np.zeros_like(x)
    for _ in range(8):  # x >= 0.5 reaches 7 in at most 7 steps
        small = x < 7.0
        if not small.any():
            break
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += np.log(x) + (1.0 / 24.0) * xx2 - 7.0 / 960.0 * xx4 + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4
    return result


def _grouped_logsumexp(values: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """log(sum(exp(values))) over consecutive groups starting at ``offsets`` (``counts`` long each).

    >>> _grouped_logsumexp(np.log(np.array([1.0, 3.0, 2.0])), np.array([0, 2]), np.array([2, 1])).round(6).tolist()
    [1.386294, 0.693147]
    """
    peak = np.maximum.reduceat(values, offsets)
    total = np.add.reduceat(np.exp(values - np.repeat(peak, counts)), offsets)
    return peak + np.log(total)


_FLOAT32_CUTOFF = np.float32(50.0)


def log_add32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sentencepiece's ``LogSumExp(x, y)`` on float32 arrays: ``max + log1p(exp(min - max))`` with the
    difference taken in float32, the rest in double, the result stored as a float; ``max`` alone
    when the other is more than 50 below.

    >>> log_add32(np.float32([0.0, -1.0]), np.float32([0.0, -100.0])).tolist()
    [0.6931471824645996, -1.0]
    """
    low, high = np.minimum(x, y), np.maximum(x, y)
    summed = (high.astype(np.float64) + np.log1p(np.exp((low - high).astype(np.float64)))).astype(np.float32)
    return np.where(high > low + _FLOAT32_CUTOFF, high, summed)


def _fold_log_add32(values: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each group of ``values`` (``counts`` long from ``offsets``) folded left to right with
    :func:`log_add32`, as sentencepiece's loops do (``x = LogSumExp(x, v[i], i == 0)``).

    >>> _fold_log_add32(np.log(np.float32([1, 3, 2])), np.array([0, 2]), np.array([2, 1])).astype(float).round(6).tolist()
    [1.386294, 0.693147]
    """
    total = values[offsets]
    for k in range(1, int(counts.max(initial=1))):
        more = np.flatnonzero(counts > k)
        total[more] = log_add32(total[more], values[offsets[more] + k])
    return total


@dataclass
class Seeds:
    """Seed pieces and the flat string's lattice nodes for them.

    ``pieces[0]`` is ``"<UNK>"``; then the characters by decreasing count (weighted by word
    counts), then substrings by decreasing ``occurrences * length``. ``counts`` are those
    raw scores (``nan`` for ``<UNK>``).

    The nodes are kept as one ``(length, start positions, seed indices)`` triple per piece length,
    each sorted by position, so :meth:`nodes` can hand out the nodes of one range of words without
    a copy of all of them (the trainer builds its lattices a range of words at a time).
    """

    pieces: list[str]
    counts: np.ndarray
    flat: str
    first: np.ndarray  # first position of each word in the flat string
    last: np.ndarray  # position of each word's separator (= its end position)
    levels: list[tuple[int, np.ndarray, np.ndarray]]
    occurrence: np.ndarray  # one flat position where each seed occurs (-1 for <UNK>)

    def nodes(self, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(start, end, seed, single)`` of the nodes that start in ``[lo, hi)`` (all of them by default)."""
        hi = len(self.flat) if hi is None else hi
        starts, ends, seeds = [], [], []
        for length, pos, seed in self.levels:
            a, b = np.searchsorted(pos, (lo, hi))
            starts.append(pos[a:b])
            ends.append(pos[a:b] + length)
            seeds.append(seed[a:b])
        start, end = np.concatenate(starts), np.concatenate(ends)
        return start, end, np.concatenate(seeds), end - start == 1

    def release_from(self, position: int) -> None:
        """Free the nodes that start at ``position`` or later (the trainer builds its lattices from the
        last words to the first, and the nodes it has built need not be held twice)."""
        for length, pos, seed in self.levels:
            keep = int(np.searchsorted(pos, position))
            for array in (pos, seed):
                try:
                    array.resize(keep, refcheck=False)  # in place: the tail goes back to the allocator
                except ValueError:  # an array that does not own its memory (a view): dropped with its owner
                    pass

    def release_nodes(self) -> None:
        """Drop the node arrays once the lattices hold them (they are most of the memory)."""
        self.levels = [(length, pos[:0], seed[:0]) for length, pos, seed in self.levels[:1]]


def find_seeds(words: list[str], counts: np.ndarray, max_piece_length: int, seed_size: int) -> Seeds:
    """Seed vocabulary as HF computes it with a suffix array, found here by sorting k-grams.

    HF puts every unique word ONCE in a flat string (separated by ``\\0``) and keeps the
    substrings that are internal nodes of the suffix tree: occurring at least twice and
    followed by at least two different characters (right-maximal), of 2..max_piece_length
    characters, without the separator; score = occurrences * length. Example from HF's
    tests: words "This is a" and "こんにちは友達" give substrings ``"is "`` (score 6) and
    ``"s "`` (4) but not ``"is"`` (always followed by a space).

    We find the same set by extending k-grams one character at a time: ``rank_k`` of a
    position is the rank of ``flat[i:i+k]`` among all k-grams (``np.unique`` of the pair
    (rank of the (k-1)-gram, next character)). Positions whose k-gram occurs once are
    dropped, since no longer string starting there can occur twice either.
    """
    flat = "\0".join(words) + "\0"
    itype = index_dtype(len(flat) + 1)
    alphabet, char_ids = np.unique(np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32), return_inverse=True)
    char_ids = char_ids.reshape(-1).astype(itype)
    n_chars = len(alphabet)  # alphabet[0] is the separator (code 0 is the smallest)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    last = np.cumsum(lengths + 1) - 1
    first = last - lengths

    # Characters, weighted by word counts (HF skips "\0" here).
    in_word = char_ids != 0
    char_weight = np.bincount(char_ids[in_word], weights=np.repeat(counts.astype(np.float64), lengths + 1)[in_word],
                              minlength=n_chars)
    char_order = sorted(((int(char_weight[c]), chr(alphabet[c])) for c in range(1, n_chars) if char_weight[c] > 0), reverse=True)

    # k-grams, k = 2..max_piece_length. Only the candidates' positions are kept per level (a
    # position whose k-gram is not a candidate never becomes a node), and the candidates stay in
    # arrays: as Python tuples they were most of this function's memory on a large corpus.
    level_pos: dict[int, np.ndarray] = {}
    level_group: dict[int, np.ndarray] = {}
    cand_score, cand_k, cand_group, cand_first = [], [], [], []
    pos = np.flatnonzero(in_word).astype(itype)
    rank = char_ids[pos].astype(np.int64)
    occ = np.bincount(rank, minlength=n_chars)
    keep = occ[rank] >= 2
    pos, rank = pos[keep], rank[keep]
    for k in range(2, max_piece_length + 1):
        if not len(pos):
            break
        nxt = char_ids[pos + k - 1]
        ok = nxt != 0
        pos, rank, nxt = pos[ok], rank[ok], nxt[ok]
        if not len(pos):
            break
        key = rank * n_chars + nxt
        del rank
        uniq, first_index, group, occ = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        del key
        group = group.reshape(-1).astype(itype)
        # right-maximal: at least two distinct characters (separator included) follow
        follow = np.unique(group.astype(np.int64) * n_chars + char_ids[pos + k])
        distinct = np.bincount(follow // n_chars, minlength=len(uniq))
        is_seed = (occ >= 2) & (distinct >= 2)
        seed_groups = np.flatnonzero(is_seed)
        cand_score.append(occ[seed_groups] * k)
        cand_k.append(np.full(len(seed_groups), k, dtype=np.int8))
        cand_group.append(seed_groups.astype(itype))
        cand_first.append(pos[first_index[seed_groups]])
        here = is_seed[group]
        level_pos[k], level_group[k] = pos[here], group[here]
        keep = occ[group] >= 2
        pos, rank = pos[keep], group[keep].astype(np.int64)
        del uniq, first_index, group, occ, follow, distinct, nxt, ok, keep, here, is_seed

    # HF sorts (score, chars) in reverse: higher score first, then the larger string. Only the
    # candidates at or above the budget's score are ranked, by their characters (-1 after a
    # string's end: a prefix ranks below the longer string, as in Python and Rust).
    score_all = np.concatenate(cand_score) if cand_score else np.zeros(0, dtype=np.int64)
    k_all = np.concatenate(cand_k) if cand_k else np.zeros(0, dtype=np.int8)
    group_all = np.concatenate(cand_group) if cand_group else np.zeros(0, dtype=itype)
    first_all = np.concatenate(cand_first) if cand_first else np.zeros(0, dtype=itype)
    del cand_score, cand_k, cand_group, cand_first
    budget = max(0, seed_size - len(char_order))
    if len(score_all) > budget:
        threshold = np.partition(score_all, len(score_all) - budget)[len(score_all) - budget] if budget else np.inf
        chosen = np.flatnonzero(score_all >= threshold)
    else:
        chosen = np.arange(len(score_all))
    keys = []
    for j in range(max_piece_length - 1, -1, -1):
        at = np.minimum(first_all[chosen].astype(np.int64) + j, len(char_ids) - 1)
        keys.append(np.where(k_all[chosen] > j, char_ids[at], -1).astype(np.int32))
    keys.append(score_all[chosen])
    chosen = chosen[np.lexsort(keys)[::-1][:budget]] if len(chosen) else chosen
    del keys
    sel_score, sel_k = score_all[chosen], k_all[chosen].astype(np.int64)
    sel_group, sel_first = group_all[chosen], first_all[chosen]
    del score_all, k_all, group_all, first_all, chosen

    pieces = ["<UNK>"] + [c for _, c in char_order] + [flat[p : p + k] for p, k in zip(sel_first.tolist(), sel_k.tolist())]
    seed_counts = np.concatenate([[np.nan], [float(n) for n, _ in char_order], sel_score.astype(np.float64)])
    n_seeds = len(pieces)

    char_seed = np.zeros(n_chars, dtype=np.int64)
    for index, (_, c) in enumerate(char_order, start=1):
        char_seed[int(np.searchsorted(alphabet, ord(c)))] = index
    occurrence = np.full(n_seeds, -1, dtype=np.int64)
    first_char_pos = np.full(n_chars, -1, dtype=np.int64)
    # every character of a word gets a single-character node; a "\0" inside a word has no
    # seed piece (HF leaves it out of the characters), so its node is an unknown one
    not_separator = np.ones(len(char_ids), dtype=bool)
    not_separator[last] = False
    in_pos = np.flatnonzero(not_separator).astype(itype)
    del not_separator
    first_char_pos[char_ids[in_pos[::-1]]] = in_pos[::-1]  # last write wins: the first position
    occurrence[char_seed[1:][char_seed[1:] > 0]] = first_char_pos[1:][char_seed[1:] > 0]

    levels = [(1, in_pos, char_seed[char_ids[in_pos]].astype(itype))]
    substring_ids = np.arange(1 + len(char_order), n_seeds, dtype=itype)
    occurrence[substring_ids] = sel_first
    for k in sorted(set(sel_k.tolist())):
        group = level_group.pop(k)
        at_k = sel_k == k
        seed_of_group = np.zeros(int(group.max()) + 1, dtype=itype)
        seed_of_group[sel_group[at_k]] = substring_ids[at_k]
        seed_here = seed_of_group[group]
        del seed_of_group, group
        hit = seed_here > 0
        levels.append((k, level_pos.pop(k)[hit], seed_here[hit]))
        del seed_here, hit
    del level_pos, level_group
    return Seeds(pieces, seed_counts, flat, first, last, levels, occurrence)


class LatticeSet:
    """Many lattices as arrays: node ``i`` goes from ``start[i]`` to ``end[i]`` with piece ``seed[i]``.

    Documents (words) occupy disjoint position ranges ``[first[d], last[d]]``. Nodes are
    kept sorted by (offset of the end inside the document, end, start) so that each
    forward layer is a contiguous slice and, within one end position, the earliest start
    comes first (HF's tie rule: the first node inserted wins).
    """

    def __init__(self, start: np.ndarray, end: np.ndarray, seed: np.ndarray, single: np.ndarray,
                 first: np.ndarray, last: np.ndarray, n_positions: int) -> None:
        # Node arrays are the trainer's memory: they are kept in the narrowest index type and the
        # sort keys are built in place, one temporary at a time.
        itype = index_dtype(n_positions + 1)
        doc_of_pos = np.zeros(n_positions, dtype=itype)
        doc_of_pos[first] = 1
        np.cumsum(doc_of_pos, out=doc_of_pos)
        doc_of_pos -= 1
        self.first, self.last, self.n_positions = first, last, n_positions
        self.doc_of_pos = doc_of_pos
        longest = int((end - start).max()) if len(start) else 0
        first_i = first.astype(itype)  # (its gathers as narrow as the nodes)
        # key = (offset of the end, end, start): start ascending = longest node first within an end
        key = end.astype(np.int64)  # (32-bit keys: numpy's stable argsort took more memory, measured)
        key -= first_i[doc_of_pos[start]]
        max_len = int(key.max()) if len(key) else 0
        key *= n_positions
        key += end
        key *= longest + 1
        key += longest
        key -= end - start
        order = np.argsort(key, kind="stable")  # (timsort: the nodes come nearly in this order)
        del key
        self.start, self.end = start[order].astype(itype, copy=False), end[order].astype(itype, copy=False)
        self.seed, self.single = seed[order].astype(itype, copy=False), single[order]
        del order
        self.max_len = max_len
        # key = (offset of the start, start, end): within a start, shortest first
        key = (self.start - first_i[self.doc]).astype(np.int64)  # offset of the start in its document
        key *= n_positions
        key += self.start
        key *= longest + 1
        key += self.end - self.start
        self.bwd = np.argsort(key, kind="stable").astype(itype)
        del key
        # by start position: a node's place in sentencepiece's E-step (word by word, position by position;
        # the nodes of one start add to different pieces, so their order among themselves is free)
        self.by_start = np.argsort(self.start, kind="stable").astype(itype)
        self._index()

    @property
    def doc(self) -> np.ndarray:
        """The document (word) of every node. Derived when asked, not stored: a node array less to hold."""
        return self.doc_of_pos[self.start]

    def _index(self) -> None:
        """Layer and group boundaries of the forward order and of the backward order (by start offset)."""
        start, end = self.start, self.end
        n = len(start)
        first = self.first.astype(start.dtype)
        rel_end = end - first[self.doc]  # offset of each node's end inside its document: sorted
        self.layer_bounds = np.searchsorted(rel_end, np.arange(self.max_len + 2))
        del rel_end
        change = np.ones(n, dtype=bool)
        if n:
            change[1:] = end[1:] != end[:-1]
        itype = start.dtype  # group arrays as narrow as the node arrays (one entry per end position)
        self.group_start = np.flatnonzero(change).astype(itype)
        self.group_pos = end[self.group_start]
        self.group_count = np.diff(np.append(self.group_start, n)).astype(itype)
        self.group_layer_bounds = np.searchsorted(self.group_start, self.layer_bounds)
        bstart = start[self.bwd]
        brel = bstart - first[self.doc_of_pos[bstart]]  # start offsets inside the documents
        self.bwd_layer_bounds = np.searchsorted(brel, np.arange(self.max_len + 1))
        bchange = np.ones(n, dtype=bool)
        if n:
            bchange[1:] = bstart[1:] != bstart[:-1]
        self.bgroup_start = np.flatnonzero(bchange).astype(itype)
        self.bgroup_pos = bstart[self.bgroup_start]
        self.bgroup_count = np.diff(np.append(self.bgroup_start, n)).astype(itype)
        self.bgroup_layer_bounds = np.searchsorted(self.bgroup_start, self.bwd_layer_bounds)

    def filter(self, keep: np.ndarray) -> None:
        """Drop nodes (``keep`` is a mask over the current nodes); both orders are preserved."""
        new_index = np.cumsum(keep, dtype=self.bwd.dtype)
        new_index -= 1
        self.bwd = new_index[self.bwd[keep[self.bwd]]]
        self.by_start = new_index[self.by_start[keep[self.by_start]]]
        self.start, self.end, self.seed = self.start[keep], self.end[keep], self.seed[keep]
        self.single = self.single[keep]
        self._index()

    def forward(self, node_scores: np.ndarray) -> np.ndarray:
        """``alpha[pos]`` = log-sum over paths from the document's start to ``pos``.

        float32 scores are summed as sentencepiece's ``Lattice::ForwardAlgorithm`` does: in float32,
        the nodes ending at a position folded one by one with :func:`log_add32`, earliest start
        first (its ``end_nodes`` order)."""
        fold = _fold_log_add32 if node_scores.dtype == np.float32 else _grouped_logsumexp
        alpha = np.full(self.n_positions, -np.inf, dtype=node_scores.dtype)
        alpha[self.first] = 0.0
        lb, gb = self.layer_bounds, self.group_layer_bounds
        for p in range(1, self.max_len + 1):
            a, b = lb[p], lb[p + 1]
            if a == b:
                continue
            ga, gb_ = gb[p], gb[p + 1]
            values = alpha[self.start[a:b]] + node_scores[a:b]
            alpha[self.group_pos[ga:gb_]] = fold(values, self.group_start[ga:gb_] - a, self.group_count[ga:gb_])
        return alpha

    def backward(self, node_scores: np.ndarray) -> np.ndarray:
        """``beta[pos]`` = log-sum over paths from ``pos`` to the document's end (float32 scores: as
        ``Lattice::BackwardAlgorithm``, the nodes starting at a position folded shortest first)."""
        fold = _fold_log_add32 if node_scores.dtype == np.float32 else _grouped_logsumexp
        beta = np.full(self.n_positions, -np.inf, dtype=node_scores.dtype)
        beta[self.last] = 0.0
        lb, gb = self.bwd_layer_bounds, self.bgroup_layer_bounds
        for p in range(self.max_len - 1, -1, -1):
            a, b = lb[p], lb[p + 1]
            if a == b:
                continue
            ga, gb_ = gb[p], gb[p + 1]
            nodes = self.bwd[a:b]  # this layer's nodes (no full-length copy of the scores in backward order)
            values = beta[self.end[nodes]] + node_scores[nodes]
            beta[self.bgroup_pos[ga:gb_]] = fold(values, self.bgroup_start[ga:gb_] - a, self.bgroup_count[ga:gb_])
        return beta

    def viterbi(self, node_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best score to each position and the node that ends the best path there.

        Ties go to the node listed first at that end position (the earliest start). The sums are
        kept in ``node_scores``' type (float32 scores: sentencepiece's float sums).
        """
        best = np.full(self.n_positions, -np.inf, dtype=node_scores.dtype)
        best[self.first] = 0.0
        back = np.full(self.n_positions, -1, dtype=np.int64)
        lb, gb = self.layer_bounds, self.group_layer_bounds
        for p in range(1, self.max_len + 1):
            a, b = lb[p], lb[p + 1]
            if a == b:
                continue
            ga, gb_ = gb[p], gb[p + 1]
            values = best[self.start[a:b]] + node_scores[a:b]
            offsets = self.group_start[ga:gb_] - a
            counts = self.group_count[ga:gb_]
            peak = np.maximum.reduceat(values, offsets)
            is_peak = values == np.repeat(peak, counts)
            index = np.where(is_peak, np.arange(a, b), b)
            winner = np.minimum.reduceat(index, offsets)
            best[self.group_pos[ga:gb_]] = peak
            back[self.group_pos[ga:gb_]] = winner
        return best, back

    def backtrack(self, back: np.ndarray, docs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Nodes of the best path of each document: ``(document, node)`` pairs, last node first."""
        docs = np.arange(len(self.first)) if docs is None else docs
        cursor = self.last[docs]
        alive = cursor != self.first[docs]
        docs, cursor = docs[alive], cursor[alive]
        out_docs: list[np.ndarray] = []
        out_nodes: list[np.ndarray] = []
        while len(cursor):
            node = back[cursor]
            ok = node >= 0  # a document without any path (no node reaches its end)
            docs, cursor, node = docs[ok], cursor[ok], node[ok]
            out_docs.append(docs)
            out_nodes.append(node)
            cursor = self.start[node]
            alive = cursor != self.first[docs]
            docs, cursor = docs[alive], cursor[alive]
        if not out_docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(out_docs), np.concatenate(out_nodes)
