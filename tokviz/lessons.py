"""Guided lessons: each algorithm as a sequence of small steps a teacher can click through.

Every step is DERIVED FROM A REAL TRAINING, never from a toy re-implementation: the BPE
lesson runs :class:`~tokviz.models.bpe.trainer.BpeTrainer` on the word-count table and
replays the merges its history recorded; WordPiece runs ``WordPieceTrainer(scoring=
"likelihood")``; Unigram runs ``UnigramTrainer(method="course")`` and reads its seed, its
loss and its pruning rounds. What a step adds on top of the history is only what a view
needs to draw it: the current split of every word, the table of every adjacent pair with
its count (and score) at that moment, the segmentations of a word.

    words {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
    BPE step 1: pairs ('u','g') 20, ('p','u') 17, ('u','n') 16, ... -> merge 'u'+'g' = 'ug'
    BPE step 2: ('u','n') 16, ('h','ug') 15, ...                  -> merge 'u'+'n' = 'un'
    BPE step 3: ('h','ug') 15, ('p','u') 12, ...                  -> merge 'h'+'ug' = 'hug'
    then "bug" -> ['b', 'ug'], "mug" -> ['[UNK]', 'ug'] ('m' was never seen)

>>> lesson = bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=3)
>>> [(step.data.left, step.data.right) for step in lesson.steps if step.kind == "merge"]
[('u', 'g'), ('u', 'n'), ('h', 'ug')]

Each lesson is a :class:`Lesson` (a title and a tuple of :class:`LessonStep`); a step has
a short title, one or two plain sentences of explanation and a ``kind`` naming the view
that draws its ``data`` (a frozen record). The Learn page only lays them out.

What this leaves out: lessons are sized for a projector (a few dozen words, short words);
bigger corpora belong on the Train page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tokviz.errors import CorpusReadError
from tokviz.history import merge_number

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "CLASSIC_WORD_COUNTS",
    "Lesson",
    "LessonStep",
    "PairRow",
    "MergeView",
    "Prediction",
    "parse_word_counts",
    "format_word_counts",
    "bpe_lesson",
    "wordpiece_lesson",
    "unigram_lesson",
    "byte_level_lesson",
    "normalization_lesson",
    "judge_prediction",
]

#: The HF course's example (chapter 6, sections 5-7).
CLASSIC_WORD_COUNTS: dict[str, int] = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
UNK = "[UNK]"
#: A lesson must fit one projected screen: at most this many words, each at most this long.
MAX_WORDS = 12
MAX_WORD_LENGTH = 12
MAX_COUNT = 1_000_000


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class LessonStep:
    """One click of a lesson: ``kind`` names the view, ``data`` is what it draws."""

    title: str
    explanation: str
    kind: str
    data: Any = None


@dataclass(frozen=True, slots=True)
class Lesson:
    key: str
    title: str
    steps: tuple[LessonStep, ...]


@dataclass(frozen=True, slots=True)
class WordSplit:
    """A word of the table, its count and its current symbols: ``('hugs', 5, ('h', 'ug', 's'))``."""

    word: str
    count: int
    symbols: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PairRow:
    """One adjacent pair at one moment: its count, its parts' counts and the trainer's score."""

    left: str
    right: str
    count: int
    left_count: int
    right_count: int
    score: float
    winner: bool = False
    tied: bool = False  # same score as the winner (the tie-break decided)


@dataclass(frozen=True, slots=True)
class MergeView:
    """One merge of a BPE / WordPiece history with what the class sees before it happens."""

    algorithm: str  # "BPE" or "WordPiece"
    rank: int
    left: str
    right: str
    token: str
    count: int
    score: float
    splits: tuple[WordSplit, ...]  # before the merge
    pairs: tuple[PairRow, ...]  # every adjacent pair, in the trainer's order (best first)
    vocab_before: tuple[str, ...]
    ids: tuple[tuple[str, int], ...]  # token -> id, for the tie-break explanation


@dataclass(frozen=True, slots=True)
class EncodedWord:
    word: str
    tokens: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True, slots=True)
class Prediction:
    correct: bool
    headline: str
    why: str


# --------------------------------------------------------------------------- the word-count table


def parse_word_counts(text: str) -> dict[str, int]:
    """Read the editable table written as text: one ``word count`` per line (or ``word: count``).

    >>> parse_word_counts("hug 10\\npug: 5\\n\\npun,12")
    {'hug': 10, 'pug': 5, 'pun': 12}
    """
    counts: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        cleaned = line.replace(":", " ").replace(",", " ").replace("\t", " ").split()
        if not cleaned:
            continue
        if len(cleaned) != 2:
            raise CorpusReadError(f"Line {number} should be a word and a count, like 'hug 10'; got {line.strip()!r}.")
        word, raw_count = cleaned
        try:
            count = int(raw_count)
        except ValueError:
            raise CorpusReadError(f"Line {number}: the count {raw_count!r} is not a whole number.") from None
        counts[word] = counts.get(word, 0) + count
    return check_word_counts(counts)


#: Words the BPE / WordPiece lessons tokenize at the end, until the teacher types others.
DEFAULT_NEW_WORDS = {"bpe": "bug mug hugs bum", "wordpiece": "bum hugs bugs pun"}
MAX_NEW_WORDS = 8


def split_new_words(text: str) -> tuple[str, ...]:
    """The words to try, separated by spaces, each once, at most :data:`MAX_NEW_WORDS`.

    >>> split_new_words(" bug  mug bug, hugs ")
    ('bug', 'mug', 'bug,', 'hugs')
    """
    words = tuple(dict.fromkeys(text.split()))
    return tuple(word[:40] for word in words[:MAX_NEW_WORDS])


def format_word_counts(word_counts: Mapping[str, int]) -> str:
    """The inverse of :func:`parse_word_counts`: ``{'hug': 10} -> 'hug 10'``."""
    return "\n".join(f"{word} {count}" for word, count in word_counts.items())


def check_word_counts(word_counts: Mapping[Any, Any]) -> dict[str, int]:
    """Keep the rows a lesson can show; raise a plain sentence for anything else.

    >>> check_word_counts({"hug": 10, " ": 3, "pug": 0})
    {'hug': 10}
    """
    counts: dict[str, int] = {}
    for raw_word, raw_count in word_counts.items():
        word = "" if raw_word is None else str(raw_word).strip()
        if not word or raw_count is None or (isinstance(raw_count, float) and math.isnan(raw_count)):
            continue
        if any(char.isspace() for char in word):
            raise CorpusReadError(f"{word!r} holds a space: a lesson word is one pre-token, without spaces.")
        if len(word) > MAX_WORD_LENGTH:
            raise CorpusReadError(f"{word!r} is longer than {MAX_WORD_LENGTH} characters: lessons use short words.")
        try:
            count = int(raw_count)
        except (TypeError, ValueError):
            raise CorpusReadError(f"The count of {word!r} is not a whole number: {raw_count!r}.") from None
        if count < 0 or count > MAX_COUNT:
            raise CorpusReadError(f"The count of {word!r} must be between 0 and {MAX_COUNT:,}; got {count}.")
        if count:
            counts[word] = counts.get(word, 0) + count
    if not counts:
        raise CorpusReadError("The word-count table is empty: add a word with a count above 0.")
    if len(counts) > MAX_WORDS:
        raise CorpusReadError(f"A lesson shows at most {MAX_WORDS} words (the table has {len(counts)}): remove some.")
    return counts


# --------------------------------------------------------------------------- merges (BPE and WordPiece)


def _replay(splits: list[list[str]], left: str, right: str, token: str) -> None:
    """Apply one recorded merge to every word, left to right: ``[h,u,g] + (u,g) -> [h,ug]``."""
    for index, symbols in enumerate(splits):
        merged: list[str] = []
        position = 0
        while position < len(symbols):
            if position + 1 < len(symbols) and symbols[position] == left and symbols[position + 1] == right:
                merged.append(token)
                position += 2
            else:
                merged.append(symbols[position])
                position += 1
        splits[index] = merged


def _pair_rows(
    words: Sequence[tuple[str, int]], splits: Sequence[Sequence[str]], likelihood: bool, ids: Mapping[str, int]
) -> list[PairRow]:
    """Every adjacent pair with its count (and WordPiece's score), in the trainer's order.

    ``[('hug', 10)], [['h', 'ug']] -> [PairRow('h', 'ug', 10, 10, 10, 10.0)]``; WordPiece's
    score is ``count / (count(left) * count(right))``.
    """
    symbol_counts: dict[str, int] = {}
    pair_counts: dict[tuple[str, str], int] = {}
    for (_, count), symbols in zip(words, splits):
        for index, symbol in enumerate(symbols):
            symbol_counts[symbol] = symbol_counts.get(symbol, 0) + count
            if index + 1 < len(symbols):
                pair = (symbol, symbols[index + 1])
                pair_counts[pair] = pair_counts.get(pair, 0) + count
    rows = []
    for (left, right), count in pair_counts.items():
        left_count, right_count = symbol_counts[left], symbol_counts[right]
        score = count / (left_count * right_count) if likelihood else float(count)
        rows.append(PairRow(left, right, count, left_count, right_count, score))
    # The trainers' order ("hf" tie-break): best score, then smallest (left id, right id).
    rows.sort(key=lambda row: (-row.score, ids[row.left], ids[row.right]))
    return rows


def _merge_views(history: Any, words: Sequence[tuple[str, int]], initial: list[list[str]], n_merges: int) -> list[MergeView]:
    likelihood = history.algorithm == "WordPiece"
    ids = {token: index for index, token in enumerate(history.vocab)}
    splits = [list(symbols) for symbols in initial]
    views = []
    size_before = history.initial_vocab_size
    for step in history.merges[:n_merges]:
        rows = _pair_rows(words, splits, likelihood, ids)
        winner = (step.left, step.right)
        marked = tuple(
            PairRow(
                row.left, row.right, row.count, row.left_count, row.right_count, row.score,
                winner=(row.left, row.right) == winner,
                tied=(row.left, row.right) != winner and math.isclose(row.score, step.score, rel_tol=1e-12),
            )
            for row in rows
        )
        views.append(
            MergeView(
                algorithm=history.algorithm,
                rank=step.rank,
                left=step.left,
                right=step.right,
                token=step.token,
                count=step.count,
                score=step.score,
                splits=tuple(WordSplit(word, count, tuple(symbols)) for (word, count), symbols in zip(words, splits)),
                pairs=marked,
                vocab_before=history.vocab[:size_before],
                ids=tuple(ids.items()),
            )
        )
        _replay(splits, step.left, step.right, step.token)
        size_before = step.vocab_size  # unchanged when a merge re-creates an existing token
    return views


def _final_splits(views: Sequence[MergeView], words: Sequence[tuple[str, int]], initial: list[list[str]]) -> tuple[WordSplit, ...]:
    splits = [list(symbols) for symbols in initial]
    for view in views:
        _replay(splits, view.left, view.right, view.token)
    return tuple(WordSplit(word, count, tuple(symbols)) for (word, count), symbols in zip(words, splits))


def _tie_rule(algorithm: str) -> str:
    alphabet = "sorted as text" if algorithm == "WordPiece" else "by code point"
    return (
        "Equal scores are broken by the documented rule (HF's): the pair whose LEFT token has the smaller id wins, "
        f"then the smaller right id. Ids follow the vocabulary's order: special tokens, the alphabet {alphabet}, "
        "then merged tokens in the order they were created."
    )


def judge_prediction(view: MergeView, left: str, right: str) -> Prediction:
    """Was ``left + right`` the pair the trainer merged at this step, and why (not)?

    >>> view = bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=1).steps[1].data
    >>> judge_prediction(view, "p", "u").headline
    "Not this time: 'u' + 'g' was merged."
    """
    ids = dict(view.ids)
    by_pair = {(row.left, row.right): row for row in view.pairs}
    winner = by_pair[(view.left, view.right)]
    measure = "score" if view.algorithm == "WordPiece" else "count"

    def describe(row: PairRow) -> str:
        if view.algorithm == "WordPiece":
            return f"{row.left!r} + {row.right!r}: {row.count} / ({row.left_count} × {row.right_count}) = {row.score:.4f}"
        return f"{row.left!r} + {row.right!r} occurs {row.count} times"

    tied = [row for row in view.pairs if row.tied]
    guess = by_pair.get((left, right))
    if guess is None:
        return Prediction(False, f"{left!r} + {right!r} is not an adjacent pair right now.", f"The winner: {describe(winner)}.")
    if guess.winner:
        if tied:
            others = ", ".join(f"{row.left!r} + {row.right!r}" for row in tied)
            why = (f"{describe(winner)}, the best {measure}, but it tied with {others}. "
                   f"Left ids: {ids[winner.left]} for {winner.left!r} vs "
                   + ", ".join(f"{ids[row.left]} for {row.left!r}" for row in tied) + ". " + _tie_rule(view.algorithm))
            return Prediction(True, "Right, and you got the tie-break right too!", why)
        return Prediction(True, "Right!", f"{describe(winner)}: no other pair has a {measure} this high.")
    headline = f"Not this time: {view.left!r} + {view.right!r} was merged."
    if guess.tied:
        why = (f"Your pair tied: {describe(guess)}, {describe(winner)}. Ids: {guess.left!r} {ids[guess.left]}, "
               f"{guess.right!r} {ids[guess.right]} vs {winner.left!r} {ids[winner.left]}, {winner.right!r} {ids[winner.right]}. "
               + _tie_rule(view.algorithm))
    elif view.algorithm == "WordPiece" and guess.count > winner.count:
        why = (f"Your pair is more frequent, but its parts are frequent on their own: {describe(guess)}; "
               f"{describe(winner)} scores higher.")
    else:
        why = f"{describe(guess)}; {describe(winner)}."
    return Prediction(False, headline, why)


def _merge_step(view: MergeView) -> LessonStep:
    if view.algorithm == "WordPiece":
        text = (f"Score = count(pair) / (count(left) × count(right)). The best score wins, not the biggest count: "
                f"{view.left!r} + {view.right!r} scores {view.score:.4f} with only {view.count} occurrences.")
    else:
        text = f"Count every adjacent pair, weighted by the word counts. The most frequent pair ({view.count} times) becomes a new token."
    if any(row.tied for row in view.pairs):
        text += " There is a tie: the smaller ids win (HF's rule)."
    return LessonStep(f"Merge #{merge_number(view.rank)}: {view.left!r} + {view.right!r} → {view.token!r}", text, "merge", view)


def _train_bpe(word_counts: Mapping[str, int]) -> Any:
    from tokviz.models.bpe.trainer import BpeTrainer

    # A vocab big enough for every merge the words allow: the lesson slices the history.
    return BpeTrainer(vocab_size=10_000, special_tokens=[UNK], show_progress=False).train_from_word_counts(word_counts)


def _bpe_model(history: Any, n_merges: int) -> Any:
    from tokviz.models.bpe.model import BPE

    n_merges = min(n_merges, len(history.merges))
    size = history.merges[n_merges - 1].vocab_size if n_merges else history.initial_vocab_size
    return BPE(history.vocab_at(size), history.merge_pairs(size), unk_token=UNK)


def bpe_lesson(word_counts: Mapping[str, int], n_merges: int = 3, new_words: Iterable[str] = ("bug", "mug", "hugs", "bum")) -> Lesson:
    """BPE on the word-count table: the alphabet, then one step per merge, then new words."""
    counts = check_word_counts(word_counts)
    history = _train_bpe(counts)
    n_merges = max(0, min(n_merges, len(history.merges)))
    words = list(counts.items())
    initial = [list(word) for word in counts]
    views = _merge_views(history, words, initial, n_merges)
    start = tuple(WordSplit(word, count, tuple(word)) for word, count in words)
    steps = [
        LessonStep(
            "Start: every word split into characters",
            f"The vocabulary starts as the special token {UNK} plus every character of the corpus ({len(history.alphabet)}). "
            "BPE will glue frequent neighbours together, one pair per step.",
            "splits",
            SplitsData(start, tuple(history.vocab[: history.initial_vocab_size])),
        ),
        *(_merge_step(view) for view in views),
    ]
    model = _bpe_model(history, n_merges)
    encoded = tuple(
        EncodedWord(word, tuple(token.value for token in model.tokenize(word)),
                    "has characters never seen in training" if any(char not in history.alphabet for char in word) else "")
        for word in new_words if word
    )
    unseen = next((item for item in encoded if item.note), None)
    example = f" ({unseen.word!r} → {list(unseen.tokens)})" if unseen is not None else ""
    steps.append(
        LessonStep(
            "New words: apply the merges in the order they were learned",
            f"Known characters are merged with the learned rules, in order. A character the corpus never had becomes "
            f"{UNK}{example}.",
            "encode",
            EncodeData(tuple(_final_splits(views, words, initial)), tuple(history.vocab[: model.get_vocab_size()]), encoded),
        )
    )
    return Lesson("bpe", "BPE, merge by merge", tuple(steps))


# --------------------------------------------------------------------------- WordPiece


def wordpiece_lesson(word_counts: Mapping[str, int], n_merges: int = 5, new_words: Iterable[str] = ("bum", "hugs", "bugs", "pun")) -> Lesson:
    """WordPiece (likelihood scoring): ## alphabet, scored merges, then greedy longest-match encoding."""
    from tokviz.models.wordpiece.trainer import WordPieceTrainer

    counts = check_word_counts(word_counts)
    trainer = WordPieceTrainer(vocab_size=10_000, special_tokens=[UNK], scoring="likelihood", show_progress=False)
    history = trainer.train_from_word_counts(counts)
    n_merges = max(0, min(n_merges, len(history.merges)))
    prefix = history.continuing_subword_prefix
    words = list(counts.items())
    initial = [[char if index == 0 else prefix + char for index, char in enumerate(word)] for word in counts]
    views = _merge_views(history, words, initial, n_merges)
    start = tuple(WordSplit(word, count, tuple(symbols)) for (word, count), symbols in zip(words, initial))
    steps = [
        LessonStep(
            "Start: the ## alphabet",
            "A word's first character stands alone; every later character carries ## (it continues a word). "
            "So a 'u' inside a word is '##u', a different token from a word-initial 'u'.",
            "splits",
            SplitsData(start, tuple(history.vocab[: history.initial_vocab_size])),
        ),
        *(_merge_step(view) for view in views),
    ]
    n_merges = min(n_merges, len(history.merges))
    size = history.merges[n_merges - 1].vocab_size if n_merges else history.initial_vocab_size
    model = history.model_at(size)
    bpe = _bpe_model(_train_bpe(counts), 3)
    traces = []
    for word in new_words:
        if not word:
            continue
        trace = model.trace(word)
        bpe_tokens = tuple(token.value for token in bpe.tokenize(word))
        traces.append(TracedWord(trace, bpe_tokens))
    steps.append(
        LessonStep(
            "Encoding: greedy longest match",
            "WordPiece does not replay merges: it takes the longest vocabulary entry that starts the word, then the longest "
            f"'##' entry that continues it. If nothing matches, the WHOLE word becomes {UNK}.",
            "wordpiece_encode",
            WordPieceEncodeData(tuple(_final_splits(views, words, initial)), tuple(model.get_vocab()), tuple(traces)),
        )
    )
    return Lesson("wordpiece", "WordPiece: scores, not counts", tuple(steps))


# --------------------------------------------------------------------------- Unigram


@dataclass(frozen=True, slots=True)
class PieceRow:
    piece: str
    count: int
    probability: float


@dataclass(frozen=True, slots=True)
class Segmentation:
    pieces: tuple[str, ...]
    probability: float  # product of the pieces' probabilities
    share: float  # probability / sum over every segmentation of the word
    best: bool
    piece_probabilities: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class ViterbiCell:
    """At ``end``: a piece that ends there, the best score reaching its start, and the total."""

    end: int
    piece: str
    start: int
    piece_log_prob: float
    total: float
    chosen: bool


@dataclass(frozen=True, slots=True)
class LossRow:
    word: str
    count: int
    segmentation: tuple[str, ...]
    cost: float  # -log P(best segmentation)


@dataclass(frozen=True, slots=True)
class PruneView:
    round: int
    size_before: int
    size_after: int
    candidates: tuple[tuple[str, float, bool], ...]  # (piece, loss increase, removed), smallest first
    reasons: tuple[tuple[str, str], ...]  # removed piece -> why


def _segmentations(model: Any, word: str) -> tuple[Segmentation, ...]:
    lattice = model.lattice(word)
    paths = lattice.all_paths()
    if not paths:
        return ()
    best = [node.text for node in lattice.viterbi()]
    # P(cut) = product of the pieces' probabilities (all_paths' own score is already normalized).
    probabilities = [math.exp(sum(node.score for node in path)) for path, _ in paths]
    total = sum(probabilities)
    rows = [
        Segmentation(tuple(node.text for node in path), probability, probability / total, [n.text for n in path] == best,
                     tuple(math.exp(node.score) for node in path))
        for (path, _), probability in zip(paths, probabilities)
    ]
    return tuple(sorted(rows, key=lambda row: -row.probability))


def _viterbi_cells(model: Any, word: str) -> tuple[ViterbiCell, ...]:
    """The Viterbi recursion, one row per candidate piece: best[end] = max(best[start] + log p(piece))."""
    lattice = model.lattice(word)
    best = [-math.inf] * (len(word) + 1)
    best[0] = 0.0
    chosen_at: dict[int, int] = {}
    cells: list[tuple[int, Any, float]] = []
    for end in range(1, len(word) + 1):
        for node in lattice.end_nodes[end]:
            if best[node.start] == -math.inf:
                continue
            total = best[node.start] + node.score
            cells.append((end, node, total))
            if end not in chosen_at or total > best[end]:
                best[end], chosen_at[end] = total, node.node_id
    on_path = {node.node_id for node in lattice.viterbi()}
    return tuple(
        ViterbiCell(end, node.text, node.start, node.score, total, node.node_id in on_path) for end, node, total in cells
    )


def _best_cost(word: str, costs: Mapping[str, float]) -> tuple[tuple[str, ...], float | None]:
    from tokviz.models.unigram.trainer import course_encode_word

    tokens, cost = course_encode_word(word, costs)
    # The course's encode_word starts every word at a cost of 1; the lesson shows -log P only.
    return tuple(tokens), (None if cost is None else cost - 1.0)


def unigram_lesson(word_counts: Mapping[str, int], vocab_size: int = 12, word: str = "pug", viterbi_word: str = "bugs") -> Lesson:
    """Unigram (the HF course's method): seed, segmentation probabilities, Viterbi, loss, pruning."""
    from tokviz.models.unigram.trainer import UnigramTrainer

    counts = check_word_counts(word_counts)
    distinct = len({char for item in counts for char in item})
    vocab_size = max(vocab_size, distinct + 1)
    history = UnigramTrainer(vocab_size=vocab_size, method="course", special_tokens=[UNK], unk_token=UNK).train_from_word_counts(counts)
    seed_freqs = dict(dict(history.extra)["seed_freqs"])
    total = sum(seed_freqs.values())
    seed_rows = tuple(PieceRow(piece, count, count / total) for piece, count in sorted(seed_freqs.items(), key=lambda item: (-item[1], item[0])))
    seed_model = history.model_at(history.max_vocab_size)
    # The default words ("pug", "bugs") suit the course's table; an edited table may lack their letters.
    known = set(history.required_chars)
    word = word if word and set(word) <= known else max(counts, key=len)
    viterbi_word = viterbi_word if viterbi_word and set(viterbi_word) <= known else word
    steps = [
        LessonStep(
            "Start big: every substring is a candidate",
            f"Unigram starts from MANY pieces and removes some. The seed: every character and every substring of every word, "
            f"counted with the word's count ({len(seed_rows)} pieces, {total} occurrences). P(piece) = count / {total}.",
            "seed",
            seed_rows,
        ),
        LessonStep(
            f"Every way to cut {word!r}, with its probability",
            "A segmentation's probability is the product of its pieces' probabilities (pieces are independent: a UNIgram model). "
            "The tokenizer keeps the most probable one.",
            "segmentations",
            SegmentationsData(word, tuple(_segmentations(seed_model, word))),
        ),
        LessonStep(
            f"Viterbi: the best cut of {viterbi_word!r} without trying them all",
            "Left to right, keep only the best score for reaching each position: best[end] = max over pieces ending there of "
            "best[start] + log P(piece). Rows in bold build the winning path.",
            "viterbi",
            ViterbiData(viterbi_word, tuple(_viterbi_cells(seed_model, viterbi_word))),
        ),
    ]
    seed_costs = {piece: -score for piece, score in history.snapshots[0].pieces} if history.snapshots else {}
    loss_rows = []
    for item, count in counts.items():
        tokens, cost = _best_cost(item, seed_costs)
        loss_rows.append(LossRow(item, count, tokens, cost if cost is not None else math.nan))
    loss = sum(row.count * row.cost for row in loss_rows)
    steps.append(
        LessonStep(
            "The loss: how badly the vocabulary explains the corpus",
            f"loss = Σ count(word) × −log P(best cut of the word) = {loss:.2f}. Pruning removes the pieces whose removal raises "
            "this loss the least.",
            "loss",
            LossData(tuple(loss_rows), loss),
        )
    )
    for prune_round, snapshot in zip(history.prune_rounds, history.snapshots):
        costs = {piece: -score for piece, score in snapshot.pieces}
        removed = {piece for piece, _ in prune_round.removed}
        candidates = tuple(sorted(((piece, loss_up, piece in removed) for piece, loss_up in snapshot.losses), key=lambda row: (row[1], not row[2])))
        reasons = tuple((piece, _why_removed(piece, loss_up, counts, costs)) for piece, loss_up in prune_round.removed)
        steps.append(
            LessonStep(
                f"Pruning round {prune_round.round + 1}: {prune_round.size_before} → {prune_round.size_after} tokens",
                "For each multi-character piece: remove it, re-cut every word, see how much the loss rises. The cheapest "
                "10% go (at least one); single characters always stay, so every word can still be cut.",
                "prune",
                PruneView(prune_round.round, prune_round.size_before, prune_round.size_after, candidates, reasons),
            )
        )
    final = history.model
    encoded = tuple(
        EncodedWord(item, tuple(token.value for token in final.tokenize(item))) for item in dict.fromkeys([word, viterbi_word, *counts, "bugs"])
    )
    steps.append(
        LessonStep(
            f"The final vocabulary ({final.get_vocab_size()} tokens) and how words are cut",
            f"Training stopped: {history.stop_reason}. Probabilities are recomputed from the seed counts of the pieces that survived.",
            "unigram_final",
            UnigramFinalData(tuple((piece, math.exp(score)) for piece, score in history.final_pieces if piece != UNK), encoded),
        )
    )
    return Lesson("unigram", "Unigram: start big, prune", tuple(steps))


def _why_removed(piece: str, loss_up: float, counts: Mapping[str, int], costs: Mapping[str, float]) -> str:
    """``'ug'`` -> "no word's best cut uses it: removing it costs nothing" (or which words re-cut, and how)."""
    without = {token: cost for token, cost in costs.items() if token != piece}
    changes = []
    for word in counts:
        before, _ = _best_cost(word, costs)
        if piece in before:
            after, _ = _best_cost(word, without)
            changes.append(f"{word!r}: {list(before)} → {list(after)}")
    if not changes:
        return f"no word's best cut uses {piece!r}: removing it raises the loss by {loss_up:.2f}"
    return f"the loss rises by only {loss_up:.2f}: " + "; ".join(changes)


# --------------------------------------------------------------------------- byte-level BPE


@dataclass(frozen=True, slots=True)
class CharBytes:
    char: str
    code_point: str
    utf8: tuple[int, ...]
    symbols: str


def byte_level_lesson(text: str = "a가 짧", word_counts: Mapping[str, int] = CLASSIC_WORD_COUNTS) -> Lesson:
    """Why byte-level BPE: characters vs bytes, the printable byte alphabet, no unknown token."""
    from tokviz import byte_level
    from tokviz.pipeline_config import build_tokenizer, build_trainer
    from tokviz.pre_tokenizers import ByteLevel
    from tokviz.presets import gpt2_like

    counts = check_word_counts(word_counts)
    text = text or "a가 짧"
    rows = tuple(
        CharBytes(char, f"U+{ord(char):04X}", tuple(char.encode("utf-8", errors="surrogatepass")),
                  byte_level.bytes_to_symbols(char.encode("utf-8", errors="surrogatepass")))
        for char in text
    )
    n_bytes = sum(len(row.utf8) for row in rows)
    byte_rows = tuple(
        (byte, byte_level.BYTES_TO_UNICODE[byte]) for byte in sorted({byte for row in rows for byte in row.utf8})
    )
    pieces = tuple(ByteLevel(add_prefix_space=False).pre_tokenize_str(text))
    config = gpt2_like()
    tokenizer = build_tokenizer(config)
    lines = [" ".join([word] * count) for word, count in counts.items()]
    tokenizer.train_from_iterator(lines, build_trainer(config, 256 + 1 + 10))
    sample = f"{text} mug"
    encoding = tokenizer.encode(sample)
    char_model = _bpe_model(_train_bpe(counts), 3)
    char_tokens = tuple(token.value for word in sample.split() for token in char_model.tokenize(word))
    steps = (
        LessonStep(
            f"{len(text)} characters, {n_bytes} bytes",
            "Computers store text as UTF-8 bytes: ASCII letters and the space take 1 byte, accented letters 2, most "
            "Asian characters (a Korean syllable) 3, emoji 4. Byte-level BPE starts from these bytes, not from characters.",
            "bytes",
            BytesData(text, tuple(rows), n_bytes),
        ),
        LessonStep(
            "Each byte gets a printable stand-in",
            "Bytes such as the space (0x20) or control codes do not print, so GPT-2 maps every one of the 256 bytes to a "
            "visible character: printable ones stay, the others shift to U+0100 and up. The space becomes 'Ġ'.",
            "byte_map",
            ByteMapData(text, byte_level.text_to_symbols(text), tuple(byte_rows)),
        ),
        LessonStep(
            "The pre-tokenizer: words of byte symbols",
            "GPT-2's ByteLevel pre-tokenizer splits before spaces and spells each word in byte symbols; offsets still point "
            "at the original characters.",
            "byte_pieces",
            BytePiecesData(text, tuple(pieces)),
        ),
        LessonStep(
            "No unknown token, ever",
            "The base vocabulary holds all 256 bytes, so any text (any script, emoji, typos) can be spelled, at worst one "
            f"byte per token. A character-level BPE trained on the same words turns unseen characters into {UNK}.",
            "no_unk",
            NoUnkData(sample, encoding, char_tokens, tokenizer.decode(encoding.ids)),
        ),
    )
    return Lesson("byte_level", "Byte-level BPE", steps)


# --------------------------------------------------------------------------- normalization and pre-tokenization


@dataclass(frozen=True, slots=True)
class PipelineView:
    name: str
    sentence: str
    normalizer: str
    pre_tokenizer: str
    normalized: str
    pieces: tuple[tuple[str, tuple[int, int]], ...]  # (piece, offsets into the ORIGINAL text)
    byte_level: bool = False  # pieces are spelled in GPT-2's byte symbols

# --------------------------------------------------------------------------- step payloads
# Each step's ``data`` is one of these records (or MergeView, PruneView, PipelineView, a tuple of
# PieceRow for the seed): the Learn page reads fields by name, never tuples by position.


@dataclass(frozen=True, slots=True)
class SplitsData:
    """The training words as currently split, and the vocabulary so far."""

    splits: tuple[WordSplit, ...]
    vocab: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EncodeData:
    """BPE's last step: the final splits, the vocabulary, and new words encoded with the merges."""

    splits: tuple[WordSplit, ...]
    vocab: tuple[str, ...]
    encoded: tuple[EncodedWord, ...]


@dataclass(frozen=True, slots=True)
class TracedWord:
    """A new word's WordPiece trace (greedy longest match) beside its BPE tokens."""

    trace: Any
    bpe_tokens: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WordPieceEncodeData:
    """WordPiece's last step: the final splits, the vocabulary, and each new word's trace."""

    splits: tuple[WordSplit, ...]
    vocab: tuple[str, ...]
    traces: tuple[TracedWord, ...]


@dataclass(frozen=True, slots=True)
class SegmentationsData:
    """Every cut of one word with its probability (Segmentation records, most probable first)."""

    word: str
    rows: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ViterbiData:
    """Viterbi's table for one word (ViterbiCell records)."""

    word: str
    cells: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class LossData:
    """Each word's best cut and cost (LossRow records) and the corpus loss."""

    rows: tuple[Any, ...]
    loss: float


@dataclass(frozen=True, slots=True)
class UnigramFinalData:
    """The final pieces with their probabilities, and words cut by the final model."""

    pieces: tuple[tuple[str, float], ...]
    encoded: tuple[EncodedWord, ...]


@dataclass(frozen=True, slots=True)
class BytesData:
    """A text's characters with their UTF-8 bytes (CharBytes records) and the byte count."""

    text: str
    rows: tuple[Any, ...]
    n_bytes: int


@dataclass(frozen=True, slots=True)
class ByteMapData:
    """The text in GPT-2's byte symbols, and each byte's stand-in."""

    text: str
    symbols: str
    byte_rows: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class BytePiecesData:
    """The ByteLevel pre-tokenizer's words of byte symbols, with offsets into the text."""

    text: str
    pieces: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class NoUnkData:
    """A byte-level encoding of a sample with unseen characters, and what character BPE makes of it."""

    sample: str
    encoding: Any
    char_tokens: tuple[str, ...]
    decoded: str


@dataclass(frozen=True, slots=True)
class PipelineCompareData:
    """One sentence and each preset's normalize-then-pre-tokenize view of it (PipelineView records)."""

    sentence: str
    views: tuple[Any, ...]



def pipeline_view(name: str, config: Any, sentence: str) -> PipelineView:
    """One preset's normalizer and pre-tokenizer on ``sentence``, offsets into the original."""
    from tokviz.normalized import NormalizedString, PreTokenizedString
    from tokviz.pipeline_config import build_normalizer, build_pre_tokenizer

    normalizer = build_normalizer(config)
    pre_tokenizer = build_pre_tokenizer(config)
    normalized = NormalizedString(sentence)
    if normalizer is not None:
        normalizer.normalize(normalized)
    pre_tokenized = PreTokenizedString(normalized)
    if pre_tokenizer is not None:
        pre_tokenizer.pre_tokenize(pre_tokenized)
    pieces = tuple((piece, offsets) for piece, offsets, _ in pre_tokenized.get_splits("original"))
    return PipelineView(
        name,
        sentence,
        " → ".join(spec.label() for spec in config.normalizers) or "none",
        " → ".join(spec.label() for spec in config.pre_tokenizers) or "none",
        normalized.normalized,
        pieces,
        any(spec.type == "ByteLevel" for spec in config.pre_tokenizers),
    )


DEFAULT_SENTENCE = "Héllo  WORLD! Don't panic: naïve café, 2024."


def normalization_lesson(sentence: str = DEFAULT_SENTENCE) -> Lesson:
    """The same sentence through the BERT-, GPT-2- and T5-like normalizers and pre-tokenizers."""
    from tokviz.presets import bert_like, gpt2_like, t5_like

    sentence = sentence or DEFAULT_SENTENCE
    views = (
        pipeline_view("BERT-like", bert_like(), sentence),
        pipeline_view("GPT-2-like", gpt2_like(), sentence),
        pipeline_view("T5-like", t5_like(), sentence),
    )
    texts = {
        "BERT-like": "BERT lowercases and strips accents ('Héllo' → 'hello'), then splits on spaces AND punctuation: "
        "every '!' or ',' is its own word.",
        "GPT-2-like": "GPT-2 changes nothing (no normalizer). Its pre-tokenizer keeps the space in front of the next word "
        "(as 'Ġ') and splits off contractions like \"'t\".",
        "T5-like": "T5 applies NFKC and collapses runs of spaces; words start with '▁' (the space made visible) and "
        "punctuation stays attached.",
    }
    steps = [LessonStep(f"{view.name}: normalize, then pre-tokenize", texts[view.name], "pipeline", view) for view in views]
    steps.append(
        LessonStep(
            "Side by side: the words each model will see",
            "Offsets always point back at the original sentence, whatever the normalizer changed: that is how a tool can "
            "highlight the user's own characters.",
            "pipeline_compare",
            PipelineCompareData(sentence, tuple(views)),
        )
    )
    return Lesson("normalization", "Normalization and pre-tokenization", tuple(steps))


# --------------------------------------------------------------------------- tables for the views


def _cut(symbols: Iterable[str]) -> str:
    return " · ".join(symbols)


def splits_frame(splits: Sequence[WordSplit]) -> "pd.DataFrame":
    """``word | count | split`` with the symbols joined by ' · ': ``hugs | 5 | h · ug · s``."""
    import pandas as pd

    return pd.DataFrame([(s.word, s.count, _cut(s.symbols)) for s in splits], columns=["word", "count", "split"])


def pairs_frame(view: MergeView) -> "pd.DataFrame":
    """Every pair at this step, best first; WordPiece adds the parts' counts and the score."""
    import pandas as pd

    if view.algorithm == "WordPiece":
        rows = [(f"{r.left} + {r.right}", r.count, r.left_count, r.right_count, round(r.score, 4)) for r in view.pairs]
        return pd.DataFrame(rows, columns=["pair", "count", "count(left)", "count(right)", "score"])
    return pd.DataFrame([(f"{r.left} + {r.right}", r.count) for r in view.pairs], columns=["pair", "count"])


def encoded_frame(encoded: Sequence[EncodedWord]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([(e.word, str(list(e.tokens)), e.note) for e in encoded], columns=["word", "tokens", "note"])


#: The lessons the page offers, in order.
LESSONS: dict[str, str] = {
    "bpe": "BPE, merge by merge",
    "wordpiece": "WordPiece: scores, not counts",
    "unigram": "Unigram: start big, prune",
    "byte_level": "Byte-level BPE",
    "normalization": "Normalization and pre-tokenization",
}
