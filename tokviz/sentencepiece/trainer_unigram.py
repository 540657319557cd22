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
   follows the last sentence); the top ``seed_sentencepiece_size`` of them join the
   characters; score = ``log(count / total)``. Found without a suffix array: the words are laid
   end to end and ranked k characters at a time (the k-gram at a position is the (k-1)-gram
   there and one more character), so occurrences and followers are numpy reductions; the same
   ranks give every word's lattice nodes.
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
  does this trainer, step for step: the E-step runs on whole words in sentencepiece's word order (count, highest first, then the word); forward and
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
A piece starting with a combining mark takes no script, so it may cross a script cut the chunks
make (never seen in the corpora tried). ``input_sentence_size`` with shuffling samples other
sentences than sentencepiece (its reservoir sampler draws from abseil's Randen generator, seeded
12345678, which is not reproduced here): measured Jaccard 0.64 on 2,000 of 6,000 lines.

Measured against sentencepiece 0.2.3 with ``num_threads=1`` (same pieces with the same scores, in
the same order, held-out token counts equal): botchan.txt at 1,000 and 4,000 (8,000: refused by
sentencepiece too); big.txt's first 6,000 lines at 1,000 and 4,000, first 20,000 at 8,000;
tinyshakespeare at 1,000, 4,000, 8,000; wikitext2_valid at 4,000; the 6.8 MB corpus at 1,000,
4,000, 8,000; a Japanese-script text; and (byte-identical ``.model``) with byte fallback, split
digits, identity and nfkc_cf normalization, user-defined and control symbols, whitespace as a
suffix, without the whitespace split, whitespace-only pieces, other seed sizes, shrinking factors
and sub-iterations.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import accumulate, chain
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from tokviz.models.unigram import _em
from tokviz.sentencepiece.pieces import BOUNDARY, UNK_CHAR, PieceRules, count_words, split_into_words
from tokviz.sentencepiece.trainer_bpe import sorted_chars

if TYPE_CHECKING:
    from tokviz.history import EmStep, PruneRound

__all__ = ["UnigramResult", "train_unigram", "train_on_corpus"]


@dataclass(frozen=True, slots=True)
class UnigramResult:
    """Final ``(piece, score)`` pairs (best first), the EM steps, the prune rounds and the vocabulary before each pruning."""

    pieces: tuple[tuple[str, float], ...]
    em_steps: tuple[EmStep, ...]
    prune_rounds: tuple[PruneRound, ...]
    snapshots: tuple[tuple[tuple[str, float], ...], ...]
    stop_reason: str


#: codes of what follows a substring in sentencepiece's suffix array: 0..255 a UTF-8 byte (the
#: first one of the next character), then the end of the text, then "several different ones"
_END, _SEVERAL = 256, 257
_LOOSE: dict[PieceRules, PieceRules] = {}


def _lead_code(char: str) -> int:
    """The first UTF-8 byte of ``char``: sentencepiece's suffix array is over bytes, so a substring
    followed only by characters sharing their first byte (``é`` and ``è``) is no internal node of it.
    ``_lead_code("é") == 0xC3``."""
    code = ord(char)
    return code if code < 0x80 else 0xC0 | code >> 6 if code < 0x800 else 0xE0 | code >> 12 if code < 0x10000 else 0xF0 | code >> 18


def _ascii_word(word: str, rules: PieceRules) -> bool:
    """ASCII letters after a leading "▁": every substring of it is a valid piece (most words)."""
    if not rules.split_by_whitespace or rules.treat_whitespace_as_suffix:
        return False
    body = word[1:] if word[:1] == "\u2581" else word
    return body.isascii() and body.isalpha()


def located_chunks(word: str, rules: PieceRules) -> list[tuple[str, int]]:
    """The parts of ``word`` no piece can cross (script changes, the unknown marker, boundaries), with
    where each starts: ``located_chunks("▁hello,", PieceRules()) == [("▁hello", 0), (",", 6)]``
    (with whitespace-only pieces, parts may overlap: see :func:`_whitespace_run_chunks`).

    An ASCII word under the default rules is cut by :meth:`PieceRules.ascii_parts`. Otherwise a run of
    ASCII letters cuts the same whatever its length (one script, no length limit here): the cuts
    are found once per shape (``"▁a,"`` for ``"▁hello,"``) and mapped back."""
    if _ascii_word(word, rules):
        return [(word, 0)]
    if not rules.split_by_whitespace:
        # a "▁" inside a piece is allowed, not at its end: "a▁" is no piece but "a▁b" is, and "▁,"
        # is while "a▁," is not, so growing a valid prefix would cut where pieces do cross; the
        # sentence is cut at the unknown marker and boundaries only, and each seed is checked
        return [(part, start) for part, start in _runs_between_boundaries(word) if part]
    parts = rules.ascii_parts()
    if parts is not None and word.replace("\u2581", "").isascii():
        return [(part.group(), part.start()) for part in parts.finditer(word)]
    tokens = _LETTER_RUNS.findall(word)
    shape = "".join("a" if len(token) > 1 or token.isascii() and token.isalpha() else token for token in tokens)
    cuts = _SHAPES.get((rules, shape))
    if cuts is None:
        cuts = _SHAPES[rules, shape] = [(start, len(chunk)) for chunk, start in _cut(shape, rules)]
    offsets = [0, *accumulate(map(len, tokens))]
    chunks = [(word[offsets[start]:offsets[start + size]], offsets[start]) for start, size in cuts]
    if rules.allow_whitespace_only_pieces and "\u2581\u2581" in word:
        chunks += _whitespace_run_chunks(word, chunks, rules)
    return chunks


def _whitespace_run_chunks(word: str, chunks: list[tuple[str, int]], rules: PieceRules) -> list[tuple[str, int]]:
    """With whitespace-only pieces a run of "▁" is a piece, and the run's last "▁" also starts the
    word after it ("▁▁▁hello": "▁▁▁" and "▁hello", where growing valid prefixes cut after the run);
    as a suffix, the run is one piece though its first "▁" ends the word before ("hello▁▁▁")."""
    more: list[tuple[str, int]] = []
    ends = {start: start + len(chunk) for chunk, start in chunks}
    for run in _WHITESPACE_RUNS.finditer(word):
        more.append((run.group(), run.start()))
        after = run.end()
        if not rules.treat_whitespace_as_suffix and after in ends:
            more.append((word[after - 1:ends[after]], after - 1))
    return more


_LETTER_RUNS = re.compile("[A-Za-z]+|.", re.S)
_NO_PIECE = re.compile(f"[{BOUNDARY}{UNK_CHAR}]")
_WHITESPACE_RUNS = re.compile("\u2581{2,}")


def _runs_between_boundaries(word: str) -> list[tuple[str, int]]:
    """``word`` cut at the characters no piece holds (the unknown marker, boundaries), with where each part starts."""
    parts, start = [], 0
    for found in _NO_PIECE.finditer(word):
        parts.append((word[start:found.start()], start))
        start = found.end()
    parts.append((word[start:], start))
    return parts
_SHAPES: dict[tuple[PieceRules, str], list[tuple[int, int]]] = {}


def _cut(word: str, rules: PieceRules) -> list[tuple[str, int]]:
    """:func:`located_chunks` character by character: a chunk grows while it stays a valid piece
    (length aside)."""
    loose = _LOOSE.get(rules)
    if loose is None:  # (rules without the length limit: a chunk may be longer than any piece)
        loose = _LOOSE[rules] = PieceRules(10**9, rules.split_by_unicode_script, rules.split_by_number, rules.split_digits,
                                           rules.split_by_whitespace, rules.treat_whitespace_as_suffix,
                                           rules.allow_whitespace_only_pieces)
    chunks: list[tuple[str, int]] = []
    current, start = "", 0
    for index, char in enumerate(word):
        if char in (UNK_CHAR, BOUNDARY):
            if current:
                chunks.append((current, start))
            current, start = "", index + 1
            continue
        if current and not loose.is_valid(current + char):
            chunks.append((current, start))
            current, start = char, index
        else:
            current += char
    if current:
        chunks.append((current, start))
    return chunks


@dataclass
class _Corpus:
    """The words laid end to end (each followed by "\\0", sentencepiece's order: count, highest
    first, then the word) with the seed pieces and the lattice nodes of every word for them."""

    names: list[str]  # the seeds: characters, then substrings, then the unknown node's stand-in
    seed_scores: list[float]
    occurrence: np.ndarray  # one position where each seed occurs (-1: none)
    counts: np.ndarray  # of the words
    lattices: _em.LatticeSet


def _utf8_sizes(codes: np.ndarray) -> np.ndarray:
    return 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)


def _lead_codes(codes: np.ndarray) -> np.ndarray:
    return np.where(codes < 0x80, codes, np.where(codes < 0x800, 0xC0 | codes >> 6,
                                                  np.where(codes < 0x10000, 0xE0 | codes >> 12, 0xF0 | codes >> 18)))


def _stable_order(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` of non-negative integer keys, sorted 16 bits at a time from the
    lowest (numpy sorts 16-bit keys by counting: a few times faster than its stable sort of wide keys)."""
    order = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    top, shift = int(key.max()) if len(key) else 0, 16
    while top >> shift:
        order = order[np.argsort(((key[order] >> shift) & 0xFFFF).astype(np.uint16), kind="stable")]
        shift += 16
    return order


def _distinct_per_group(group: np.ndarray, code: np.ndarray, n_groups: int) -> np.ndarray:
    """Whether each group sees two different follower codes (or "several" once)."""
    pairs = np.unique(group * (_SEVERAL + 1) + code)
    distinct = np.bincount(pairs // (_SEVERAL + 1), minlength=n_groups)
    return (distinct >= 2) | (np.bincount(group, weights=code == _SEVERAL, minlength=n_groups) > 0)


def _seeds_and_lattices(contexts: Mapping[tuple[str, str], int], rules: PieceRules, seed_size: int,
                        order: Sequence[tuple[str, int]] | None = None) -> _Corpus:
    """sentencepiece's seeds (``MakeSeedSentencePieces``) and every word's lattice nodes for them.

    ``contexts``: ``{(word, what follows it in its sentence): count}`` -- the next character, or
    after the last word ``"\\0"`` and the first character of the next sentence (nothing after the
    last sentence). The substrings are ranked k characters at a time over the words laid end to
    end (the k-gram at a position is the (k-1)-gram there and one more character), so a
    substring's occurrences, what follows it and where it stands are numpy reductions."""
    count: dict[str, int] = {}
    tail: dict[str, int] = {}  # what follows each word: one lead byte or _SEVERAL
    end_count: dict[str, int] = {}  # how often it ends a sentence
    end_next: dict[str, int] = {}  # what follows those ends' "\0": a lead byte, _END or _SEVERAL
    for (word, after), n in contexts.items():
        if not word or n <= 0:
            continue
        follower = _lead_code(after[0])
        if word in count:
            count[word] += n
            if tail[word] != follower:
                tail[word] = _SEVERAL
        else:
            count[word], tail[word] = n, follower
        if after[0] == "\0":
            following = _lead_code(after[1]) if len(after) > 1 else _END
            end_count[word] = end_count.get(word, 0) + n
            if end_next.get(word, following) != following:
                following = _SEVERAL
            end_next[word] = following
    # sentencepiece's word order (``Sorted``): its float32 sums of expected counts go in this order
    ordered = order if order is not None else sorted(count.items(), key=lambda item: (-item[1], item[0]))
    words = [w for w, _ in ordered]
    flat = "\0".join(words) + "\0"
    codes = np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    n_positions = len(codes)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    last = np.cumsum(sizes + 1) - 1
    first = last - sizes
    word_of = np.repeat(np.arange(len(words)), sizes + 1)
    counts = np.fromiter((c for _, c in ordered), dtype=np.int64, count=len(words))
    # (a word listed again -- a repeated sentence -- counts for the seeds at its first place only)
    seen: set[str] = set()
    once = np.fromiter((not (w in seen or seen.add(w)) for w in words), dtype=bool, count=len(words))  # type: ignore[func-returns-value]
    weight = np.where(once, np.fromiter((count[w] for w in words), dtype=np.int64, count=len(words)), 0)[word_of]
    # where a piece starting at each position must end by (its chunk's end; itself where no piece
    # starts: the separators, unknown markers, boundaries); the words of ASCII letters are one chunk
    # (:func:`_ascii_word`), the other ASCII words are cut by the rules' ascii_parts in one regex pass,
    # the rest word by word (:func:`located_chunks`)
    parts = rules.ascii_parts()
    if rules.split_by_whitespace and not rules.treat_whitespace_as_suffix:
        letters = np.bincount(word_of, weights=((codes | 0x20) >= 0x61) & ((codes | 0x20) <= 0x7A), minlength=len(words))
        body_sizes = sizes - (codes[first] == 0x2581)
        ascii_word = (letters == body_sizes) & (body_sizes > 0)
    else:
        ascii_word = np.zeros(len(words), dtype=bool)
    # (words of ASCII characters but "▁": every substring of one of their parts is a valid piece)
    simple = np.zeros(len(words), dtype=bool) if parts is None else \
        np.bincount(word_of, weights=(codes >= 0x80) & (codes != 0x2581), minlength=len(words)) == 0
    chunk_starts, chunk_sizes = [first[ascii_word]], [sizes[ascii_word]]
    cut = np.flatnonzero(simple & ~ascii_word)
    if len(cut):
        joined_sizes = sizes[cut] + 1
        at_joined = np.cumsum(joined_sizes) - joined_sizes
        spans = np.array([found.span() for found in parts.finditer(BOUNDARY.join([words[i] for i in cut.tolist()]))],
                         dtype=np.int64).reshape(-1, 2)  # (a boundary is in no part: none crosses two words)
        which = np.searchsorted(at_joined, spans[:, 0], side="right") - 1
        chunk_starts.append(first[cut][which] + spans[:, 0] - at_joined[which])
        chunk_sizes.append(spans[:, 1] - spans[:, 0])
    other_starts: list[int] = []
    other_sizes: list[int] = []
    for index in np.flatnonzero(~ascii_word & ~simple).tolist():
        base = int(first[index])
        for chunk, at in located_chunks(words[index], rules):
            other_starts.append(base + at)
            other_sizes.append(len(chunk))
    chunk_starts.append(np.asarray(other_starts, dtype=np.int64))
    chunk_sizes.append(np.asarray(other_sizes, dtype=np.int64))
    starts_all, sizes_all = np.concatenate(chunk_starts), np.concatenate(chunk_sizes)
    chunk_end = np.arange(n_positions, dtype=np.int64)
    inside = np.repeat(starts_all - np.cumsum(sizes_all) + sizes_all, sizes_all) + np.arange(int(sizes_all.sum()))
    np.maximum.at(chunk_end, inside, np.repeat(starts_all + sizes_all, sizes_all))  # (parts may overlap)
    in_chunk = chunk_end > np.arange(n_positions)

    # characters (sentencepiece leaves the unknown marker and boundaries out), most frequent first
    tally = np.bincount(codes)
    alphabet = np.flatnonzero(tally)  # (code points: a table lookup numbers them, no sort)
    char_id = np.zeros(len(tally), dtype=np.int64)
    char_id[alphabet] = np.arange(len(alphabet))
    char_id = char_id[codes]
    n_chars = len(alphabet)
    char_weight = np.bincount(char_id[in_chunk], weights=weight[in_chunk], minlength=n_chars)
    char_order = sorted(((chr(int(alphabet[c])), int(char_weight[c])) for c in np.flatnonzero(char_weight > 0).tolist()),
                        key=lambda item: (-item[1], item[0]))
    # what follows a substring that ends before position q: q's first byte, or at a word's end what
    # follows the word; and at a word's end, whether (and what after the "\0") it ends sentences
    follower = _lead_codes(codes)
    follower[last] = np.fromiter((tail[w] for w in words), dtype=np.int64, count=len(words))
    ends_count = np.fromiter((end_count.get(w, 0) for w in words), dtype=np.int64, count=len(words)) * once
    ends_next = np.fromiter((end_next.get(w, _END) for w in words), dtype=np.int64, count=len(words))
    at_word_end = np.zeros(n_positions + 1, dtype=bool)
    at_word_end[last] = True

    max_len = rules.max_sentencepiece_length
    cand_score, cand_k, cand_group, cand_first = [], [], [], []
    level_pos: dict[int, np.ndarray] = {}
    level_group: dict[int, np.ndarray] = {}
    pos = np.flatnonzero(in_chunk)
    rank = char_id[pos]
    pos, rank = pos[char_weight[rank] >= 2], rank[char_weight[rank] >= 2]
    for k in range(2, max_len + 1):
        inside_chunk = pos + k <= chunk_end[pos]
        pos, rank = pos[inside_chunk], rank[inside_chunk]
        if not len(pos):
            break
        # the k-grams numbered in sorted order (np.unique's numbering, by one stable sort: its first
        # of each is where the k-gram first occurs)
        key = rank * n_chars + char_id[pos + k - 1]
        by_key = _stable_order(key)
        key = key[by_key]
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        first_index = by_key[starts]
        n_groups = len(starts)
        group = np.empty(len(key), dtype=np.int64)
        group[by_key] = np.repeat(np.arange(n_groups), np.diff(np.append(starts, len(key))))
        occurrences = np.bincount(group, weights=weight[pos], minlength=n_groups)
        # an internal node of the suffix tree: two different bytes (or the end) follow it, or "several"
        # (the largest code) does
        after = follower[pos + k][by_key]
        lowest, highest = np.minimum.reduceat(after, starts), np.maximum.reduceat(after, starts)
        internal = (occurrences >= 2) & ((lowest != highest) | (highest == _SEVERAL))
        total = np.where(internal, occurrences, 0.0)
        # a substring ending sentences also counts its "X\0" node when what follows those differs
        ending = at_word_end[pos + k]
        ending[ending] = ends_count[word_of[pos[ending]]] > 0
        if ending.any():
            end_group, end_word = group[ending], word_of[pos[ending]]
            end_occurrences = np.bincount(end_group, weights=ends_count[end_word], minlength=n_groups)
            end_internal = (end_occurrences >= 2) & _distinct_per_group(end_group, ends_next[end_word], n_groups)
            total += np.where(end_internal, end_occurrences, 0.0)
        chosen = np.flatnonzero(total > 0)
        cand_score.append(total[chosen].astype(np.int64) * k)
        cand_k.append(np.full(len(chosen), k, dtype=np.int64))
        cand_group.append(chosen)
        cand_first.append(pos[first_index[chosen]])
        here = total[group] > 0
        level_pos[k], level_group[k] = pos[here].astype(np.int32), group[here].astype(np.int32)
        keep = occurrences[group] >= 2  # (a substring seen once cannot grow into one seen twice)
        pos, rank = pos[keep], group[keep]

    score_all = np.concatenate(cand_score) if cand_score else np.zeros(0, dtype=np.int64)
    k_all = np.concatenate(cand_k) if cand_k else np.zeros(0, dtype=np.int64)
    group_all = np.concatenate(cand_group) if cand_group else np.zeros(0, dtype=np.int64)
    first_all = np.concatenate(cand_first) if cand_first else np.zeros(0, dtype=np.int64)
    # valid pieces only (every substring of a word of ASCII letters is one, and of a part of another ASCII word)
    check = np.flatnonzero(~(ascii_word | simple)[word_of[first_all]])
    valid = np.ones(len(score_all), dtype=bool)
    valid[check] = [rules.is_valid(flat[p:p + k]) for p, k in zip(first_all[check].tolist(), k_all[check].tolist())]
    score_all, k_all, group_all, first_all = score_all[valid], k_all[valid], group_all[valid], first_all[valid]
    # sentencepiece 0.2.3's order: score, then the longer UTF-8 string, then the smaller one
    size_sum = np.concatenate([[0], np.cumsum(_utf8_sizes(codes))])
    keys = [np.where(k_all > j, codes[np.minimum(first_all + j, n_positions - 1)], -1) for j in range(max_len - 1, -1, -1)]
    keys += [-(size_sum[first_all + k_all] - size_sum[first_all]), -score_all]
    order = np.lexsort(keys)[:seed_size] if len(score_all) else np.zeros(0, dtype=np.int64)
    n_char_seeds = len(char_order)
    names = [c for c, _ in char_order] + [flat[p:p + k] for p, k in zip(first_all[order].tolist(), k_all[order].tolist())]
    raw_scores = [float(n) for _, n in char_order] + score_all[order].astype(np.float64).tolist()
    unknown_seed = len(names)
    names.append(UNK_CHAR)  # the last "seed" stands for sentencepiece's unknown node: never a piece

    # the nodes: every character (an unknown node where no piece starts), every chosen substring
    char_seed = np.full(n_chars, unknown_seed, dtype=np.int64)
    char_seed[[int(np.searchsorted(alphabet, ord(c))) for c, _ in char_order]] = np.arange(n_char_seeds)
    singles = np.setdiff1d(np.arange(n_positions), last)
    itype = _em.index_dtype(n_positions + 1)  # (node arrays are the trainer's memory: as narrow as they can be)
    node_starts = [singles.astype(itype)]
    node_seeds = [np.where(in_chunk[singles], char_seed[char_id[singles]], unknown_seed).astype(itype)]
    node_ks = [np.ones(len(singles), dtype=np.int16)]
    occurrence = np.full(len(names), -1, dtype=np.int64)
    reversed_singles = singles[::-1]
    occurrence[node_seeds[0][::-1]] = reversed_singles  # (the last write wins: the first position)
    seed_of = np.full(len(score_all), -1, dtype=np.int64)
    seed_of[order] = n_char_seeds + np.arange(len(order))
    occurrence[n_char_seeds:unknown_seed] = first_all[order]
    offsets = np.cumsum([0] + [len(c) for c in cand_score])
    valid_index = np.full(len(valid), -1, dtype=np.int64)
    valid_index[valid] = np.arange(int(valid.sum()))
    for level, k in enumerate(range(2, 2 + len(cand_score))):
        lookup = np.full(int(cand_group[level].max(initial=-1)) + 1, -1, dtype=np.int64)
        at = valid_index[offsets[level]:offsets[level + 1]]
        ok = at >= 0
        lookup[cand_group[level][ok]] = seed_of[at[ok]]
        seed_here = lookup[level_group[k]]
        hit = seed_here >= 0
        node_starts.append(level_pos[k][hit].astype(itype, copy=False))
        node_seeds.append(seed_here[hit].astype(itype))
        node_ks.append(np.full(int(hit.sum()), k, dtype=np.int16))
    del level_pos, level_group, codes, word_of, weight, chunk_end, follower, char_id, inside
    node_start = np.concatenate(node_starts)  # (each part made narrow first: no wide copy of them all)
    del node_starts
    node_end = node_start + np.concatenate(node_ks).astype(itype)
    del node_ks
    node_seed = np.concatenate(node_seeds)
    del node_seeds
    lattices = _em.LatticeSet(node_start, node_end, node_seed, node_end - node_start == 1, first, last, n_positions)
    # ToLogProb: the counts held as floats, their sum and logs in double, each score stored as a float
    raw32 = np.asarray(raw_scores, dtype=np.float32).astype(np.float64)
    log_total = math.log(sum(raw32.tolist())) if len(raw32) else 0.0  # (summed in list order, as its loop does)
    seed_scores = (np.log(raw32) - log_total).astype(np.float32).astype(np.float64).tolist()
    return _Corpus(names, seed_scores, occurrence, counts.astype(np.float64), lattices)


def train_unigram(contexts: Mapping[tuple[str, str], int], required_chars: Mapping[str, int], vocab_size: int, meta_size: int,
                  rules: PieceRules, *, order: Sequence[tuple[str, int]] | None = None, seed_size: int = 1_000_000,
                  shrinking_factor: float = 0.75, num_sub_iterations: int = 2,
                  progress: Callable[[str, int, int], None] | None = None, history: bool = True) -> UnigramResult:
    """Train on ``{(word, what follows it in its sentence): count}`` (sentencepiece's sentences after
    its whitespace split, unknown markers included; after a sentence's last word ``"\\0"`` and the
    first character of the next sentence, nothing after the last one: the seeds see them as
    sentencepiece's suffix array does); ``vocab_size`` counts meta pieces. ``order``: the words EM
    runs on, in sentencepiece's order, repeats included (its sentences as they are when it does not
    split by whitespace); by default the contexts' words by count, highest first, then by word.

    Each :class:`EmStep` records what sentencepiece logs: the objective is the negative
    log-likelihood per word and ``num_tokens`` the tokens of the Viterbi segmentation of the whole
    corpus. ``history=False``: the pieces and the stop reason only (no steps, rounds, snapshots, and no
    Viterbi pass per EM step, which only counts those tokens)."""
    if history:
        from tokviz.history import EmStep, PruneRound  # (a history's records: not loaded for a model alone)
    report = progress or (lambda phase, done, total: None)
    report("seed pieces", 0, 1)
    corpus = _seeds_and_lattices(contexts, rules, seed_size, order)
    names, occurrence, counts, lattices = corpus.names, corpus.occurrence, corpus.counts, corpus.lattices
    total_count = float(counts.sum())
    n_seeds = len(names)
    unknown_seed = n_seeds - 1
    score = np.array(corpus.seed_scores + [0.0], dtype=np.float64)
    lengths = np.array([len(p) for p in names], dtype=np.int64)
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
            if history:
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
            unk_score = float(np.nanmin(score)) - _em.UNK_PENALTY
            score = np.where(alive, score, unk_score)  # a dropped character is an unknown node
            if dropped.any():
                lattices.filter(alive[lattices.seed] | lattices.single)
            if history:
                em_steps.append(EmStep(round_index, sub_iteration, int(alive.sum()), objective, int(counts[docs].sum())))
            report("EM training", round_index * num_sub_iterations + sub_iteration + 1,
                   round_index * num_sub_iterations + sub_iteration + 2)
        # sentencepiece >= 0.2.1 prunes after every EM round, the last one too, and stops once
        # the pruned vocabulary is small enough (no EM after the last pruning)
        size = int(alive.sum())
        order = np.flatnonzero(alive)
        if history:
            snapshots.append(tuple((names[i], float(score[i])) for i in order))
        new_alive, removed = _prune(order[np.argsort(position[order], kind="stable")], score, alive, names, lengths, occurrence,
                                    lattices, counts, desired, shrinking_factor, position)
        if history:
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
        if history:
            prune_rounds.append(PruneRound(round_index, len(order), len(order) - len(unreachable),
                                           tuple((names[i], 0.0) for i in unreachable.tolist())))
        alive[unreachable] = False  # (the lattices are not read again)
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
    if history:
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
    (:meth:`~tokviz.models.unigram._em.LatticeSet.forward` on float32 scores), each node's
    ``freq * exp(alpha + score + beta - Z)`` (the exponent summed in float32, left to right) added
    to a float32 count word by word in sentencepiece's word order, position by position; an unknown
    node's count goes to the first piece of the list (the trainer model's unknown id 0).
    Returns the expected counts and the objective (``-sum(freq * Z) / words``, summed in float32)."""
    scores = score.astype(np.float32)[lattices.seed]
    alpha = lattices.forward(scores)
    beta = lattices.backward(scores)
    log_z = alpha[lattices.last]
    # every node in sentencepiece's order (word by word, position by position), one temporary at a time
    order = lattices.by_start
    doc = lattices.doc_of_pos[lattices.start[order]]
    exponent = alpha[lattices.start[order]] + scores[order]
    exponent += beta[lattices.end[order]]
    exponent -= log_z[doc]
    contribution = np.exp(exponent.astype(np.float64))
    del exponent
    contribution *= counts[doc]
    del doc
    alive_now = np.flatnonzero(alive)
    first_alive = alive_now[np.argmin(position[alive_now])]
    target = lattices.seed[order]
    target[~alive[target]] = first_alive
    expected = np.zeros(len(score), dtype=np.float32)
    np.add.at(expected, target, contribution)
    objective = -float(np.add.accumulate((counts32 * log_z) / np.float32(total_count))[-1]) if len(counts) else 0.0
    return expected, objective


def _unknown_scores(score: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Dead pieces score as sentencepiece's unknown node: the lowest live score minus ``UNK_PENALTY``."""
    return np.where(alive, score, float(np.nanmin(np.where(alive, score, np.nan))) - _em.UNK_PENALTY)


def _alternatives(multi: np.ndarray, score: np.ndarray, lengths: np.ndarray, occurrence: np.ndarray,
                  lattices: _em.LatticeSet, strict: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best split of each multi-character piece (nodes inside one occurrence, the piece's own node left out).

    ``self_best``: the piece scores at least its best split (with ``strict``: its split does not
    score strictly more, sentencepiece's test for unreachable pieces)."""
    if not len(multi):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    occ = occurrence[multi]
    span = lengths[multi]
    by_start = lattices.by_start
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


def train_on_corpus(spec: Any, corpus: Any, rules: PieceRules, meta_size: int,
                    progress: Callable[[str, int, int], None] | None, history: bool = True) -> tuple[list[tuple[str, float]], Any, Mapping[str, int]]:
    """sentencepiece's unigram trainer on the words of the corpus's sentences, with what follows each
    word (returns the pieces, the trainer's result and ``{word: count}``), for
    :mod:`~tokviz.sentencepiece.trainer` (``spec``: its ``TrainerSpec``, ``corpus``: its loaded sentences).
    The sentences are taken out of ``corpus``: once counted they are dropped (with the whitespace split),
    before the lattices."""
    sentences, corpus.sentences, required = corpus.sentences, [], corpus.required

    split = (lambda text: [text]) if not spec.split_by_whitespace else (
        lambda text: split_into_words(text, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces))
    prefix_words = spec.split_by_whitespace and not spec.treat_whitespace_as_suffix
    texts = [text for text, _ in sentences]
    # after the last word of a sentence: "\0" and what starts the next sentence in sentencepiece's
    # text of sentences (each repeated ``freq`` times: the sentence itself, then the next one)
    following = ["\0" + text[:1] for text in texts[1:]] + ["\0"]
    totals: Counter[str] = Counter()  # every word's count
    lasts: Counter[str] = Counter()  # how often it ends a sentence
    contexts: Counter[tuple[str, str]] = Counter()
    if all(freq == 1 for _, freq in sentences) and prefix_words and not spec.allow_whitespace_only_pieces:
        # the words of every text counted at once (count_words), and each text's last word: from its last "▁"
        totals = count_words(texts)
        ends = [text[max(text.rfind("\u2581"), 0):] for text in texts]
        lasts.update(ends)
        contexts.update(zip(ends, following))
        del ends  # (a string per sentence: not held through the training)
    elif all(freq == 1 for _, freq in sentences):
        # (a batch's word lists at a time: small batches, so that the memory one takes is reused by
        # the next instead of adding to the peak; 2,000 is as fast as 20,000)
        for at in range(0, len(texts), 2_000):
            word_lists = list(map(split, texts[at:at + 2_000]))
            totals.update(chain.from_iterable(word_lists))
            ends = [words[-1] for words in word_lists]
            lasts.update(ends)
            contexts.update(zip(ends, following[at:at + 2_000]))
            if not prefix_words:
                for words in word_lists:
                    contexts.update((word, after[:1]) for word, after in zip(words, words[1:]))
    else:
        for text, freq, after_last in zip(texts, (freq for _, freq in sentences), following):
            words = split(text)
            for word in words:
                totals[word] += freq
            lasts[words[-1]] += freq
            if freq > 1:
                contexts[words[-1], "\0" + text[:1]] += freq - 1
            contexts[words[-1], after_last] += 1
            if not prefix_words:
                for word, after in zip(words, words[1:]):
                    contexts[word, after[:1]] += freq
    if prefix_words:  # (every later word starts with "▁")
        for word, n in totals.items():
            if n > lasts[word]:
                contexts[word, "\u2581"] += n - lasts[word]
    # without the whitespace split sentencepiece's EM runs on its sentences as they are (in its
    # order, repeats apart); with it, on the distinct words by count
    order = None if spec.split_by_whitespace else sentences
    del texts, following, sentences, lasts
    result = train_unigram(contexts, required, spec.vocab_size, meta_size, rules, order=order,
                           seed_size=spec.seed_sentencepiece_size, shrinking_factor=spec.shrinking_factor,
                           num_sub_iterations=spec.num_sub_iterations, progress=progress, history=history)
    return list(result.pieces), result, totals
