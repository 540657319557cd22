"""Unigram language-model tokenization (Kudo 2018), encoding exactly as HF ``tokenizers``.

Every piece has a score, its log-probability. A word is cut into the sequence of pieces
whose scores sum highest (Viterbi over the lattice of all pieces found in the word):

    vocab = [("<unk>", 0.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("hu", -4.0), ("hug", -5.0)]
    "hug"  -> ["hug"]          (-5.0 beats hu+g = -7.0 and h+u+g = -9.0)
    "hugx" -> ["hug", "x"]     ("x" is unknown: <unk>, scored min score - 10)

HF details reproduced on purpose (so ids and tokens match ``tokenizers.models.Unigram``):

- a character no piece starts with becomes an unknown node scored ``min(scores) - 10``;
  consecutive unknown characters are fused into one ``<unk>`` token carrying their text;
- ties go to the piece that starts earliest (HF's best-path update is a strict ``>``);
- with ``byte_fallback=True`` an unknown token becomes one ``<0xNN>`` token per UTF-8 byte
  when all those byte pieces exist (each carries the offsets of the whole unknown span),
  and stays ``<unk>`` otherwise;
- an unknown character without ``unk_id`` is an error.

Beyond HF: :meth:`Unigram.nbest` (the n best segmentations with log-probabilities),
:meth:`Unigram.sample` (subword regularization) and :meth:`Unigram.lattice` (for drawing).
Offsets are character offsets into the pre-token (HF's model works in bytes).
This version leaves out HF's ``encode_unoptimized`` switch (it gives the same results).
"""

from __future__ import annotations

import math
import random
from operator import itemgetter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from tokviz import _mutation
from tokviz.errors import SerializationError, VocabularyError
from tokviz.models.base import ProvenPairs, Token
from tokviz.models.wordlevel.model import FrozenModel, VocabularyTypeError, check_option
from tokviz.models.unigram.lattice import Lattice, LatticeNode

#: HF / SentencePiece: an unknown character costs this much below the worst piece.
UNK_PENALTY = 10.0

_CACHE_LIMIT = 10_000

#: The Viterbi looks pieces up either in a dict of every prefix of every piece (its walk from
#: a start stops at the first substring that starts no piece) or directly in the piece dict
#: (every length up to the longest piece's). The prefix dict costs ~25 ms to build on a 25k
#: vocabulary, about 8 look-ups per piece, which a text of short words never earns back
#: (~38 direct look-ups a word against ~30). Sequences up to this long are always looked up
#: directly while the prefix dict is not built...
ALWAYS_DIRECT = 32
#: ... and longer ones (16 look-ups a char against ~4 on a 25k vocabulary) spend a budget of
#: this many look-ups per piece, after which the prefix dict is built (rent, then buy).
_DIRECT_BUDGET_PER_PIECE = 8


@dataclass(frozen=True, slots=True, eq=False)
class UnigramTables:
    """A Unigram model's tables for the engine: piece -> id, pieces and scores by id, the unk
    id, the lowest finite score, byte fallback, the longest piece's length, and the model's
    budget of direct look-ups (``direct(size, cost)``, ``spend_direct(cost)``)."""

    token_to_id: dict[str, int]
    tokens: tuple[str, ...]
    scores: tuple[float, ...]
    unk_id: int | None
    min_score: float
    byte_fallback: bool
    longest: int
    direct: Callable[[int, int | None], bool]
    spend_direct: Callable[[int], None]


class Unigram:
    """An immutable Unigram model over ``(piece, log-probability)`` pairs; ids are positions.

    >>> m = Unigram([("<unk>", 0.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("hu", -4.0), ("hug", -5.0)], unk_id=0)
    >>> [(t.id, t.value, t.offsets) for t in m.tokenize("hugx")]
    [(5, 'hug', (0, 3)), (0, 'x', (3, 4))]
    >>> [([t.value for t in toks], round(lp, 4)) for toks, lp in m.nbest("hug", 2)]
    [(['hug'], -0.1429), (['hu', 'g'], -2.1429)]
    """

    __slots__ = (
        "_tokens", "_pairs", "_token_to_id", "_unk_id", "_byte_fallback", "_min_score", "_trie", "_scores", "_cache", "_token_cache",
        "_alpha", "_nbest_size", "_longest", "_direct_budget", "_cache_capacity", "_cache_epoch",
    )

    def __init__(
        self,
        vocab: Sequence[tuple[str, float]] | None = None,
        unk_id: int | None = None,
        byte_fallback: bool | None = False,
        alpha: float | None = None,
        nbest_size: int | None = None,
    ) -> None:
        # HF's sampling options: with a non-zero ``alpha`` every ``tokenize`` draws a segmentation
        # (subword regularization) among the ``nbest_size`` best (all of them when None).
        self._alpha = check_option("Unigram", "alpha", "float?", alpha)
        self._nbest_size = check_option("Unigram", "nbest_size", "uint?", nbest_size)
        if vocab is None:
            # HF's Unigram() default: a single <unk>.
            vocab, unk_id = [("<unk>", 0.0)], 0
        if isinstance(vocab, (str, bytes, Mapping)) or not hasattr(vocab, "__iter__"):
            raise VocabularyTypeError(f"The Unigram vocabulary must be a list of (piece, score) pairs, not {type(vocab).__name__} {vocab!r:.60}.")
        pieces = None
        if isinstance(vocab, (list, tuple)) and (all(map(tuple.__instancecheck__, vocab)) or all(map(list.__instancecheck__, vocab))):
            # The common case in C: (piece, score) pairs.
            if set(map(len, vocab)) <= {2}:
                try:
                    pieces = list(zip(map(itemgetter(0), vocab), map(float, map(itemgetter(1), vocab))))
                except (TypeError, ValueError):
                    pass
        if pieces is None:
            try:
                pieces = [(piece, float(score)) for piece, score in vocab]
            except (TypeError, ValueError):
                pieces = None
        if pieces is None or not all(map(str.__instancecheck__, map(itemgetter(0), pieces))) or not all(map(itemgetter(0), pieces)):
            pieces = []  # the loop below names the bad entry
            for entry in vocab:
                piece, score = entry
                if not isinstance(piece, str) or not piece:
                    raise VocabularyError(f"Unigram pieces must be non-empty strings, got {piece!r}.")
                pieces.append((piece, float(score)))
        self._init_tables(list(map(itemgetter(0), pieces)), list(map(itemgetter(1), pieces)), unk_id, byte_fallback)

    def _init_tables(self, tokens: list[str], scores: list[float], unk_id: int | None, byte_fallback: Any) -> None:
        """The model's tables from checked pieces and scores in id order (non-empty strs, floats)."""
        if unk_id is not None:
            if not tokens:
                raise VocabularyError("The Unigram vocabulary is empty, but at least the unk token is needed.")
            if not 0 <= unk_id < len(tokens):
                raise VocabularyError(f"unk_id {unk_id} is outside the vocabulary of {len(tokens)} pieces.")
        # The pieces and their scores as two tuples; the (piece, score) pairs of `vocab` are made
        # when first asked for. A tuple per piece is an object the cycle collector tracks until
        # its first look: XLM-R's 250k made the first encode after loading pay 22 ms for them.
        # (Tuples, not lists: the collector stops tracking a tuple of strs or floats once it has
        # looked, where it walks a list's 250k items in every collection that reaches it.)
        self._tokens = tuple(tokens)
        self._pairs: tuple[tuple[str, float], ...] | None = None
        # Later duplicates win, as in HF's HashMap insertion.
        self._token_to_id: dict[str, int] = dict(zip(tokens, range(len(tokens))))
        self._unk_id = unk_id
        self._byte_fallback = bool(byte_fallback)
        # NaN scores (the trainer's temporary <UNK>) never win a `<` comparison: skip them like HF.
        finite = [score for score in scores if not math.isnan(score)] if any(map(math.isnan, scores)) else scores
        self._min_score = min(finite) if finite else math.inf
        # The prefix structure of the Viterbi walk (built on first use, once: see _prefixes).
        self._trie: dict[str, int] | None = None
        self._longest: int | None = None  # the longest piece's length (on first use: see _lookup)
        self._direct_budget = _DIRECT_BUDGET_PER_PIECE * len(tokens)
        self._scores = tuple(scores)
        self._cache: dict[str, tuple[str, ...]] = {}
        self._token_cache: dict[str, tuple[Token, ...]] = {}
        self._cache_capacity = _CACHE_LIMIT
        self._cache_epoch = 0  # how many times the caches were cleared (tokenizers' plans follow it)

    # -- the Model protocol -----------------------------------------------------------

    @property
    def vocab(self) -> tuple[tuple[str, float], ...]:
        """The ``(piece, score)`` pairs, in id order."""
        return self._vocab

    @property
    def _vocab(self) -> tuple[tuple[str, float], ...]:
        pairs = self._pairs
        if pairs is None:
            pairs = self._pairs = tuple(zip(self._tokens, self._scores))
        return pairs

    @property
    def unk_id(self) -> int | None:
        return self._unk_id

    @property
    def byte_fallback(self) -> bool:
        return self._byte_fallback

    @property
    def alpha(self) -> float | None:
        return self._alpha

    @alpha.setter
    def alpha(self, alpha: float | None) -> None:
        self._alpha = check_option("Unigram", "alpha", "float?", alpha)
        _mutation.bump()

    @property
    def nbest_size(self) -> int | None:
        return self._nbest_size

    @nbest_size.setter
    def nbest_size(self, nbest_size: int | None) -> None:
        self._nbest_size = check_option("Unigram", "nbest_size", "uint?", nbest_size)
        _mutation.bump()

    @property
    def min_score(self) -> float:
        return self._min_score

    def _clear_cache(self) -> None:
        """HF's ``_clear_cache``: empty the word caches, this model's and those a tokenizer's
        fast paths keep for it (they never change results, only speed). Tables derived from
        the vocabulary stay, as in HF."""
        self._cache = {}
        self._token_cache = {}
        self._cache_epoch += 1

    def _resize_cache(self, capacity: int) -> None:
        """HF's ``_resize_cache``: new, empty word caches of up to ``capacity`` words (0: none).

        >>> model = Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0)
        >>> model._resize_cache(0); _ = model.tokenize("a"); len(model._token_cache)
        0
        """
        self._cache_capacity = check_option("Unigram", "capacity", "uint", capacity)
        self._clear_cache()

    # HF's repr and str, as the other models': ``Unigram(unk_id=0, vocab=[("A", 0), ...], byte_fallback=False)``.
    __repr__, __str__ = FrozenModel.__repr__, FrozenModel.__str__

    @property
    def deterministic(self) -> bool:
        """What the encoding engine asks: the same tokens for the same word? Not while sampling (``alpha``)."""
        return not self._alpha

    @property
    def cache_epoch(self) -> int:
        """How many times the word caches were emptied (the engine's caches follow it)."""
        return self._cache_epoch

    def word_tables(self) -> UnigramTables:
        """What the engine's word encoder reads: the model's tables (shared, read only) and its
        budget of direct look-ups (see :meth:`_direct`)."""
        return UnigramTables(
            self._token_to_id, self._tokens, self._scores, self._unk_id, self._min_score, self._byte_fallback,
            self._longest_piece(), self._direct, self._spend_direct,
        )

    def token_to_id(self, token: str) -> int | None:
        return self._token_to_id.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._tokens[id] if 0 <= id < len(self._tokens) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._token_to_id)

    def get_vocab_size(self) -> int:
        return len(self._tokens)


    # -- encoding ---------------------------------------------------------------------

    def _prefixes(self) -> dict[str, int]:
        """Every prefix of every piece -> the piece's id, or -1 for a prefix that is not a
        piece: one dict answers both questions of the Viterbi walk (whether a piece goes on,
        which piece ends here). Built in C, about 5x faster than a trie of dicts.

        >>> sorted(Unigram([("<unk>", 0.0), ("ab", -1.0)], unk_id=0)._prefixes().items())
        [('<', -1), ('<u', -1), ('<un', -1), ('<unk', -1), ('<unk>', 0), ('a', -1), ('ab', 1)]
        """
        if self._trie is None:
            prefixes = dict.fromkeys({piece[:end] for piece in self._token_to_id for end in range(1, len(piece))}, -1)
            prefixes.update(self._token_to_id)
            self._trie = prefixes
        return self._trie

    def _longest_piece(self) -> int:
        if self._longest is None:
            self._longest = max(map(len, self._token_to_id), default=0)
        return self._longest

    def _direct(self, size: int, cost: int | None = None) -> bool:
        """Whether to look up the pieces of a sequence of ``size`` chars directly (see
        ``ALWAYS_DIRECT``); a long sequence spends ``cost`` of the budget, by default
        ``size * longest`` (the fast encoder passes 0 and spends what it looked up after, see
        :meth:`_spend_direct`).

        >>> model = Unigram([("<unk>", 0.0), ("ab", -1.0)], unk_id=0)
        >>> model._direct_budget = 100
        >>> model._direct(40, 0), model._direct(40), model._direct_budget, model._direct(40, 0)
        (True, False, 100, True)
        >>> model._spend_direct(101); model._direct(40, 0)
        False
        """
        if self._trie is not None:
            return False
        if size <= ALWAYS_DIRECT:
            return True
        if cost is None:
            cost = size * self._longest_piece()
        if cost > self._direct_budget:
            return False
        self._direct_budget -= cost
        return True

    def _spend_direct(self, cost: int) -> None:
        """Take ``cost`` look-ups off the budget of :meth:`_direct`."""
        self._direct_budget -= cost

    def _lookup(self, size: int) -> tuple[Any, bool, int]:
        """How to look pieces up in a sequence of ``size`` chars: ``(get, stops, longest)``,
        ``get(substring)`` giving an id (or -1 for a prefix that is no piece, or None), ``stops``
        whether None means no longer piece starts there (the prefix dict) or only that this
        substring is no piece (the piece dict: direct look-ups up to ``longest`` chars).

        >>> model = Unigram([("<unk>", 0.0), ("ab", -1.0)], unk_id=0)
        >>> model._lookup(3)[1:], model._trie is None, model._lookup(40)[1:], model._trie is None
        ((False, 5), True, (True, 5), False)
        """
        if self._direct(size):
            return self._token_to_id.get, False, self._longest_piece()
        return self._prefixes().get, True, self._longest_piece()

    def _matches(self, sequence: str, start: int) -> Iterable[tuple[int, int, float]]:
        """``(end, piece_id, score)`` of every piece starting at ``start``, shortest first."""
        lookup, stops, longest = self._lookup(len(sequence))
        scores = self._scores
        for end in range(start + 1, min(len(sequence), start + longest) + 1):
            piece_id = lookup(sequence[start:end])
            if piece_id is None:
                if stops:
                    return
            elif piece_id >= 0:
                yield end, piece_id, scores[piece_id]

    def encode(self, sequence: str) -> list[str]:
        """The best segmentation as strings, unknown runs fused: ``"hugx" -> ['hug', 'x']``."""
        if not sequence:
            return []
        cached = self._cache.get(sequence)
        if cached is not None:
            return list(cached)
        size = len(sequence)
        unk_score = self._min_score - UNK_PENALTY
        best_score = [0.0] * (size + 1)
        best_start = [-1] * (size + 1)
        best_id = [0] * (size + 1)
        lookup, stops, longest = self._lookup(size)
        scores = self._scores
        for start in range(size):
            here = best_score[start]
            has_single = False
            # walk the prefixes from `start`: this loop is the encoder's hot path
            end = start
            last = min(size, start + longest)
            while end < last:
                end += 1
                piece_id = lookup(sequence[start:end])
                if piece_id is None:
                    if stops:
                        break
                elif piece_id >= 0:
                    candidate = scores[piece_id] + here
                    if best_start[end] < 0 or candidate > best_score[end]:
                        best_score[end], best_start[end], best_id[end] = candidate, start, piece_id
                    if end == start + 1:
                        has_single = True
            if not has_single:
                candidate = unk_score + here
                end = start + 1
                if best_start[end] < 0 or candidate > best_score[end]:
                    # HF fails only when the unknown node would be used, not when it loses.
                    if self._unk_id is None:
                        raise _missing_unk(f"the character {sequence[start]!r} is in no Unigram piece and the model has no unk token.")
                    best_score[end], best_start[end], best_id[end] = candidate, start, self._unk_id
        pieces: list[str] = []
        unknown: list[str] = []  # a run of unknown characters, read backwards
        end = size
        while end > 0:
            start = best_start[end]
            if self._unk_id is not None and best_id[end] == self._unk_id:
                unknown.append(sequence[start:end])
            else:
                if unknown:
                    pieces.append("".join(reversed(unknown)))
                    unknown = []
                pieces.append(sequence[start:end])
            end = start
        if unknown:
            pieces.append("".join(reversed(unknown)))
        pieces.reverse()
        if len(self._cache) < self._cache_capacity:
            self._cache[sequence] = tuple(pieces)
        return pieces

    def _to_tokens(self, pieces: Iterable[str]) -> list[Token]:
        """Strings of a segmentation -> Tokens with ids, unknowns and byte fallback as HF."""
        tokens: list[Token] = []
        offset = 0
        for piece in pieces:
            span = (offset, offset + len(piece))
            offset += len(piece)
            piece_id = self._token_to_id.get(piece)
            if piece_id is None:
                if self._byte_fallback:
                    byte_ids = [self._token_to_id.get(f"<0x{b:02X}>") for b in piece.encode("utf-8")]
                    if all(i is not None for i in byte_ids):
                        tokens.extend(Token(i, self._tokens[i], span) for i in byte_ids)  # type: ignore[index]
                        continue
                if self._unk_id is None:
                    raise _missing_unk(f"{piece!r} is not in the Unigram vocabulary and the model has no unk token.")
                piece_id = self._unk_id
            tokens.append(Token(piece_id, piece, span))
        return tokens

    def tokenize(self, sequence: str) -> list[Token]:
        """Viterbi segmentation of one pre-token into Tokens (character offsets); with a
        non-zero ``alpha``, a sampled one (see :meth:`sample`)."""
        if self._alpha:
            nbest = self._nbest_size if self._nbest_size is not None else -1
            return self.sample(sequence, self._alpha, nbest) if sequence else []
        cached = self._token_cache.get(sequence)
        if cached is not None:
            return list(cached)  # Tokens are immutable: sharing them is safe
        tokens = self._to_tokens(self.encode(sequence))
        if len(self._token_cache) < self._cache_capacity:
            self._token_cache[sequence] = tuple(tokens)
        return tokens

    # -- the lattice, n-best, sampling ------------------------------------------------

    def lattice(self, sequence: str) -> Lattice:
        """Every candidate piece of ``sequence`` as a :class:`Lattice` (what the UI draws).

        Nodes are inserted as HF's ``populate_nodes`` does: by start, shortest first,
        then an unknown node (``piece_id = unk_id``) where no single-character piece exists.
        Without ``unk_id`` an uncovered character simply has no node.
        """
        unk_score = self._min_score - UNK_PENALTY
        spec: list[tuple[int, int, int, float]] = []
        for start in range(len(sequence)):
            has_single = False
            for end, piece_id, score in self._matches(sequence, start):
                spec.append((start, end, piece_id, score))
                has_single = has_single or end == start + 1
            if not has_single and self._unk_id is not None:
                spec.append((start, start + 1, self._unk_id, unk_score))
        return Lattice(sequence, spec)

    def _path_tokens(self, path: Sequence[LatticeNode]) -> list[Token]:
        # A path from the lattice is unfused: fuse runs of unknown nodes like encode() does.
        pieces: list[str] = []
        previous_unknown = False
        for node in path:
            unknown = self._unk_id is not None and node.piece_id == self._unk_id
            if unknown and previous_unknown:
                pieces[-1] += node.text
            else:
                pieces.append(node.text)
            previous_unknown = unknown
        return self._to_tokens(pieces)

    def nbest(self, sequence: str, n: int) -> list[tuple[list[Token], float]]:
        """The ``n`` best segmentations, best first, each with its log-probability.

        The log-probability is ``score(path) - log Z`` over all segmentations of the
        lattice, so the values of every possible segmentation sum (in probability) to 1.
        """
        lat = self.lattice(sequence)
        if not sequence:
            return [([], 0.0)] if n > 0 else []
        log_z = lat.log_partition()
        return [(self._path_tokens(path), score - log_z) for path, score in lat.nbest(n)]

    def sample(
        self,
        sequence: str,
        alpha: float = 0.1,
        nbest_size: int = -1,
        rng: random.Random | None = None,
    ) -> list[Token]:
        """One segmentation drawn for subword regularization, as SentencePiece does.

        ``nbest_size < 0``: draw from all segmentations with ``p ∝ exp(alpha * score)``;
        ``nbest_size`` 0 or 1: the Viterbi segmentation; ``nbest_size > 1``: draw among
        the ``nbest_size`` best with ``p ∝ exp(alpha * score)``. ``rng`` makes it
        reproducible (``random.Random(0)``).
        """
        if not sequence:
            return []
        rng = rng or random.Random()
        lat = self.lattice(sequence)
        if nbest_size < 0:
            return self._path_tokens(lat.sample(alpha, rng))
        if nbest_size <= 1:
            return self.tokenize(sequence)
        candidates = lat.nbest(nbest_size)
        top = max(score for _, score in candidates)
        weights = [math.exp(alpha * (score - top)) for _, score in candidates]
        path, _ = rng.choices(candidates, weights=weights)[0]
        return self._path_tokens(path)

    # -- tokenizer.json ---------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """HF's tokenizer.json "model" section: ``{"type": "Unigram", "unk_id", "vocab", "byte_fallback"}``."""
        return {
            "type": "Unigram",
            "unk_id": self._unk_id,
            "vocab": [[piece, score] for piece, score in self._vocab],
            "byte_fallback": self._byte_fallback,
        }

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``unigram.json`` (``{prefix}-unigram.json``), the model section with 2-space
        indents, as HF's ``save``; returns the path in a list."""
        import json
        import os

        path = os.path.join(folder, f"{prefix}-unigram.json" if prefix else "unigram.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, ensure_ascii=False, indent=2)
        return [path]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Unigram":
        """Read HF's "model" section (``byte_fallback`` may be absent in older files)."""
        if data.get("type", "Unigram") != "Unigram":
            raise SerializationError(f"Expected a Unigram model section, got type {data.get('type')!r}.")
        vocab = data.get("vocab")
        proven = type(vocab) is ProvenPairs  # ([str, score] lists: the reader's proof)
        if not proven and (
            not isinstance(vocab, list)
            or not (all(map(list.__instancecheck__, vocab)) or all(isinstance(e, (list, tuple)) for e in vocab))
            or set(map(len, vocab)) - {2}
        ):
            raise SerializationError('A Unigram model needs "vocab" as a list of [piece, score] pairs.')
        from tokviz.json_floats import JsonNumberError, hf_floats

        try:
            # Scores as HF reads them: literals of a tokenizer.json (JsonNumber) as serde_json
            # does, which is not always the nearest float (see tokviz.json_floats).
            scores = hf_floats(list(map(itemgetter(1), vocab)))
        except (TypeError, ValueError, JsonNumberError) as error:
            raise SerializationError(f"Unigram model section: a score is not a number ({error}).") from error
        tokens = list(map(itemgetter(0), vocab))
        if not proven and not all(map(str.__instancecheck__, tokens)):
            tokens = list(map(str, tokens))
        unk_id = data.get("unk_id")
        byte_fallback = bool(data.get("byte_fallback", False))
        if not all(tokens):
            try:
                return cls(list(zip(tokens, scores)), unk_id, byte_fallback)  # (it says which piece is empty)
            except VocabularyError as error:
                raise SerializationError(f"Unigram model section: {error}") from error
        # The constructor's checks are done: build the tables directly.
        model = cls.__new__(cls)
        model._alpha = None
        model._nbest_size = None
        try:
            model._init_tables(tokens, scores, unk_id, byte_fallback)
        except VocabularyError as error:
            raise SerializationError(f"Unigram model section: {error}") from error
        return model


def _missing_unk(detail: str) -> VocabularyError:
    """HF's exact message (scripts compare it), with what was unknown as a note in the traceback."""
    error = VocabularyError("Encountered an unknown token but `unk_id` is missing")
    error.add_note(detail)
    return error
