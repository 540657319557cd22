"""The Unigram lattice: every way to cut one word into vocabulary pieces.

A Unigram model scores a segmentation by the sum of its pieces' log-probabilities. All
segmentations of a word share structure, so we store them as a lattice (a DAG over the
character positions 0..len): one node per vocabulary piece found at ``[start, end)``.

    "hug" with pieces {h, u, g, hu, ug, hug}:

        0 --h--> 1 --u--> 2 --g--> 3
        0 ---hu---------> 2
                 1 ---ug--------> 3
        0 ---hug-----------------> 3

Every path from 0 to len is a segmentation. On this structure:

- :meth:`Lattice.viterbi` finds the best path (dynamic programming, ties as in HF:
  among nodes ending at the same position the one inserted first, i.e. the one that
  starts earliest, wins);
- :meth:`Lattice.log_partition` / :meth:`Lattice.marginals` run forward-backward: the
  probability that each node lies on the path, under ``p(path) ∝ exp(sum of scores)``
  (the E-step of Unigram training is exactly this, weighted by word counts);
- :meth:`Lattice.nbest` lists the n best paths (A* search backwards from the end, the
  Viterbi scores being an exact heuristic), :meth:`Lattice.sample` draws one path from
  ``p(path) ∝ exp(alpha * score)`` (forward-filtering, backward-sampling: subword
  regularization, Kudo 2018);
- :meth:`Lattice.all_paths` enumerates every path by brute force. It is exponential and
  exists as an oracle for the tests of everything above.

This version leaves out what the C++/Rust lattices do for speed (node pools, byte
positions): positions here are character positions and nodes are plain records. The
trainer has its own vectorised forward-backward over all words at once.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True, slots=True)
class LatticeNode:
    """One candidate piece: ``LatticeNode(node_id=3, piece_id=7, start=0, end=2, score=-2.1, text='hu')``."""

    node_id: int
    piece_id: int
    start: int
    end: int
    score: float
    text: str


def log_add(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` without overflow: ``log_add(0.0, 0.0) -> 0.693...``."""
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


class Lattice:
    """All candidate pieces of one sentence (word), indexed by start and end position.

    >>> lat = Lattice("hug", [(0, 1, 1, -1.0), (1, 2, 2, -1.0), (2, 3, 3, -1.0), (0, 2, 4, -1.5)])
    >>> [n.text for n in lat.viterbi()]
    ['hu', 'g']
    >>> [([n.text for n in path], score) for path, score in lat.nbest(2)]
    [(['hu', 'g'], -2.5), (['h', 'u', 'g'], -3.0)]

    ``nodes_spec`` holds ``(start, end, piece_id, score)`` tuples; the insertion order is
    kept (it decides ties, as in HF). A lattice is immutable once built.
    """

    __slots__ = ("sentence", "nodes", "begin_nodes", "end_nodes")

    def __init__(self, sentence: str, nodes_spec: Iterable[tuple[int, int, int, float]]) -> None:
        self.sentence = sentence
        size = len(sentence)
        nodes: list[LatticeNode] = []
        begin: list[list[LatticeNode]] = [[] for _ in range(size + 1)]
        end: list[list[LatticeNode]] = [[] for _ in range(size + 1)]
        for start, stop, piece_id, score in nodes_spec:
            if not 0 <= start < stop <= size:
                raise ValueError(f"node [{start}, {stop}) lies outside a sentence of {size} characters")
            node = LatticeNode(len(nodes), piece_id, start, stop, float(score), sentence[start:stop])
            nodes.append(node)
            begin[start].append(node)
            end[stop].append(node)
        self.nodes: tuple[LatticeNode, ...] = tuple(nodes)
        self.begin_nodes: tuple[tuple[LatticeNode, ...], ...] = tuple(tuple(b) for b in begin)
        self.end_nodes: tuple[tuple[LatticeNode, ...], ...] = tuple(tuple(e) for e in end)

    def __len__(self) -> int:
        return len(self.sentence)

    # -- best path --------------------------------------------------------------------

    def _best_to(self) -> tuple[list[float], list[LatticeNode | None]]:
        """Best score of a path from 0 to each position, and the last node of that path."""
        size = len(self.sentence)
        best = [-math.inf] * (size + 1)
        back: list[LatticeNode | None] = [None] * (size + 1)
        best[0] = 0.0
        for pos in range(1, size + 1):
            for node in self.end_nodes[pos]:  # insertion order: the first of equals wins
                if best[node.start] == -math.inf:
                    continue
                candidate = best[node.start] + node.score
                if back[pos] is None or candidate > best[pos]:
                    best[pos], back[pos] = candidate, node
        return best, back

    def viterbi(self) -> list[LatticeNode]:
        """The best path, or ``[]`` when no path covers the sentence."""
        best, back = self._best_to()
        path: list[LatticeNode] = []
        pos = len(self.sentence)
        if pos == 0 or back[pos] is None:
            return []
        while pos > 0:
            node = back[pos]
            assert node is not None  # every position on a reachable path has a back-pointer
            path.append(node)
            pos = node.start
        path.reverse()
        return path

    # -- forward-backward -------------------------------------------------------------

    def _forward(self, alpha: float = 1.0) -> list[float]:
        """``fwd[pos]`` = log of the summed ``exp(alpha * score)`` of all paths 0 -> pos."""
        size = len(self.sentence)
        fwd = [-math.inf] * (size + 1)
        fwd[0] = 0.0
        for pos in range(1, size + 1):
            total = -math.inf
            for node in self.end_nodes[pos]:
                total = log_add(total, fwd[node.start] + alpha * node.score)
            fwd[pos] = total
        return fwd

    def _backward(self) -> list[float]:
        size = len(self.sentence)
        bwd = [-math.inf] * (size + 1)
        bwd[size] = 0.0
        for pos in range(size - 1, -1, -1):
            total = -math.inf
            for node in self.begin_nodes[pos]:
                total = log_add(total, node.score + bwd[node.end])
            bwd[pos] = total
        return bwd

    def log_partition(self) -> float:
        """``log Z``: log of the summed ``exp(score)`` over every path (``-inf`` if none)."""
        return self._forward()[len(self.sentence)]

    def marginals(self) -> list[float]:
        """Probability of each node (by ``node_id``) to lie on the path: ``p(node) = fwd·exp(score)·bwd / Z``.

        At every position strictly inside no node, the marginals of the nodes covering a
        character sum to 1 (exactly one piece of any path covers each character).
        """
        fwd = self._forward()
        bwd = self._backward()
        log_z = fwd[len(self.sentence)]
        if log_z == -math.inf:
            return [0.0] * len(self.nodes)
        return [math.exp(fwd[n.start] + n.score + bwd[n.end] - log_z) for n in self.nodes]

    def path_score(self, path: Iterable[LatticeNode]) -> float:
        """Sum of the scores of a path's nodes (its unnormalised log-probability)."""
        return sum(node.score for node in path)

    # -- n-best and sampling ----------------------------------------------------------

    def nbest(self, n: int) -> list[tuple[list[LatticeNode], float]]:
        """The ``n`` best paths with their scores, best first.

        A* from the end of the sentence backwards: a partial path from position ``pos``
        to the end has cost-so-far ``g``; the best completion from 0 to ``pos`` is known
        exactly from the Viterbi pass, so ``f = best[pos] + g`` orders the agenda and
        complete paths come out in order. Equal scores come out in insertion order.
        """
        if n <= 0 or not self.sentence:
            return []
        best, _ = self._best_to()
        size = len(self.sentence)
        if best[size] == -math.inf:
            return []
        results: list[tuple[list[LatticeNode], float]] = []
        counter = 0  # FIFO among equal priorities keeps the order deterministic
        # agenda items: (-f, counter, pos, g, suffix-path as a linked tuple)
        agenda: list[tuple[float, int, int, float, tuple | None]] = [(-best[size], 0, size, 0.0, None)]
        while agenda and len(results) < n:
            _, _, pos, g, suffix = heapq.heappop(agenda)
            if pos == 0:
                path: list[LatticeNode] = []
                while suffix is not None:
                    node, suffix = suffix
                    path.append(node)
                results.append((path, g))
                continue
            for node in self.end_nodes[pos]:
                if best[node.start] == -math.inf:
                    continue
                counter += 1
                new_g = g + node.score
                heapq.heappush(agenda, (-(best[node.start] + new_g), counter, node.start, new_g, (node, suffix)))
        return results

    def sample(self, alpha: float = 1.0, rng: random.Random | None = None) -> list[LatticeNode]:
        """Draw one path with probability ``exp(alpha * score(path)) / Z(alpha)``.

        ``alpha`` is the inverse temperature of subword regularization: 0 gives every
        path the same chance, large values approach Viterbi. Forward pass, then walk
        back from the end choosing each incoming node in proportion to
        ``exp(fwd[start] + alpha * score)``.
        """
        rng = rng or random.Random()
        fwd = self._forward(alpha)
        pos = len(self.sentence)
        if pos == 0 or fwd[pos] == -math.inf:
            return []
        path: list[LatticeNode] = []
        while pos > 0:
            incoming = [node for node in self.end_nodes[pos] if fwd[node.start] > -math.inf]
            weights = [math.exp(fwd[node.start] + alpha * node.score - fwd[pos]) for node in incoming]
            node = rng.choices(incoming, weights=weights)[0]
            path.append(node)
            pos = node.start
        path.reverse()
        return path

    # -- the oracle -------------------------------------------------------------------

    def all_paths(self) -> list[tuple[list[LatticeNode], float]]:
        """Every path with its log-probability ``score - log Z``, by brute force.

        Exponential in the sentence length: for tests on words of a dozen characters.
        ``log Z`` is computed here from the enumerated paths themselves, so the oracle
        shares no code with :meth:`log_partition`.
        """
        size = len(self.sentence)
        paths: list[tuple[list[LatticeNode], float]] = []

        def extend(pos: int, prefix: list[LatticeNode], score: float) -> None:
            if pos == size:
                paths.append((list(prefix), score))
                return
            for node in self.begin_nodes[pos]:
                prefix.append(node)
                extend(node.end, prefix, score + node.score)
                prefix.pop()

        if size:
            extend(0, [], 0.0)
        if not paths:
            return []
        top = max(score for _, score in paths)
        log_z = top + math.log(math.fsum(math.exp(score - top) for _, score in paths))
        return [(path, score - log_z) for path, score in paths]
