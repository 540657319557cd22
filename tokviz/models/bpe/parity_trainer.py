"""Parity-aware BPE (HF's ``trainers.ParityBpeTrainer``; Foroutan et al.): BPE over several
languages at once, where each merge is chosen for the language that is worst off.

Plain BPE merges the pair most frequent in the whole corpus, so the language with the most
data gets most merges and the others stay long (more tokens for the same content). Here
every language keeps its own pair counts. Before each merge one language is selected:

- with ``dev_iterators`` (ideally the same sentences in every language): the one whose dev
  text is longest in tokens right now;
- with ``ratio`` (target compression per language): the one whose compression so far
  (initial length / current length of its training words), divided by its ratio, is lowest;
- with neither: the one whose training text is longest in tokens (close to plain BPE).

Its most frequent pair (ties: the larger pair of strings, as HF) becomes the merge, which is
then applied to every language. ``variant="window"`` keeps a moving window of the last
``window_size`` selections and skips a language that took more than ``alpha / languages``
of it. ``global_merges`` first merges on the counts summed over all languages. A language
with no pair left (or none at ``min_frequency``) is skipped from then on.

>>> from tokviz import Tokenizer, models, pre_tokenizers
>>> tokenizer = Tokenizer(models.BPE())
>>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
>>> trainer = ParityBpeTrainer(num_merges=6, min_frequency=1, show_progress=False)
>>> trainer.train_from_iterator(tokenizer, [["aabb"] * 10, ["ccdd"] * 10])
>>> [" ".join(pair) for pair in tokenizer.model.merges]
['b b', 'd d', 'a bb', 'c dd', 'a abb', 'c cdd']
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from typing import Any, Iterable

from tokviz import _mutation
from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.models.merges import PAIR_BITS, PAIR_MASK, CountQueue, MergeQueue, PairCounts, Symbols, compute_alphabet
from tokviz.models.trainer import (
    OptionTypeError,
    check_bool,
    check_count,
    check_float,
    check_optional_count,
    check_optional_str,
    finish_progress_lines,
    special_added_tokens,
)

__all__ = ["ParityBpeTrainer", "ParityTrainingError"]

_VARIANTS = ("base", "window")


class ParityTrainingError(TokvizError, RuntimeError):
    """Training data that does not fit the options (HF raises ``RuntimeError`` "Training error: ...")."""


def _check_variant(name: str, value: Any) -> str:
    if value not in _VARIANTS:
        raise TokvizError(f"Unknown variant {value!r}. Use 'base' or 'window'.")
    return value


def _check_ratio(name: str, value: Any) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise OptionTypeError(f"ratio must be a list of numbers (one per language) or None, got {type(value).__name__} {value!r:.60}.")
    return [check_float("ratio", item) for item in value]


def _check_alphabet(name: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise OptionTypeError(f"initial_alphabet must be a list of characters, got {type(value).__name__} {value!r:.60}.")
    letters = []
    for item in value:
        if not isinstance(item, str) or len(item) != 1:
            raise OptionTypeError(f"initial_alphabet must hold single characters, got {item!r:.60}.")
        letters.append(item)
    return letters


_VALIDATORS = {
    "num_merges": check_count,
    "variant": _check_variant,
    "min_frequency": check_count,
    "ratio": _check_ratio,
    "global_merges": check_count,
    "window_size": check_count,
    "alpha": check_float,
    "total_symbols": check_bool,
    "show_progress": check_bool,
    "limit_alphabet": check_optional_count,
    "initial_alphabet": _check_alphabet,
    "continuing_subword_prefix": check_optional_str,
    "end_of_word_suffix": check_optional_str,
    "max_token_length": check_optional_count,
}
#: HF's state order.
_STATE_FIELDS = (
    "num_merges", "variant", "min_frequency", "global_merges", "window_size", "alpha", "total_symbols",
    "show_progress", "ratio", "special_tokens", "limit_alphabet", "initial_alphabet",
    "continuing_subword_prefix", "end_of_word_suffix", "max_token_length",
)


class ParityBpeTrainer:
    """HF's ``ParityBpeTrainer``: not a :class:`~tokviz.trainers.Trainer` (``Tokenizer.train``
    refuses it, as HF does); train with its own :meth:`train_from_iterator`, one iterator of
    texts per language. Options are settable and checked as in the constructor."""

    PROGRESS_STAGES = 1  # (see tokviz.models.trainer.finish_progress_lines)

    def __init__(
        self,
        *,
        num_merges: int = 32000,
        variant: str = "base",
        min_frequency: int = 0,
        ratio: list[float] | None = None,
        global_merges: int = 0,
        window_size: int = 100,
        alpha: float = 2.0,
        total_symbols: bool = False,
        special_tokens: Iterable[Any] = (),
        show_progress: bool = True,
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
    ) -> None:
        options = dict(locals())
        options.pop("self")
        self.special_tokens = options.pop("special_tokens")
        for name, value in options.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "special_tokens":
            object.__setattr__(self, "_special_tokens", special_added_tokens(value))
        elif name in _VALIDATORS:
            object.__setattr__(self, name, _VALIDATORS[name](name, value))
        else:
            raise AttributeError(f"'ParityBpeTrainer' object has no attribute {name!r} (its options: {', '.join(_STATE_FIELDS)}).")
        _mutation.bump()

    @property
    def special_tokens(self) -> list[Any]:
        return list(self._special_tokens)

    # ------------------------------------------------------------------ HF's state, repr
    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in _STATE_FIELDS if name != "special_tokens"}
        state["special_tokens"] = [token.content for token in self._special_tokens]
        state["initial_alphabet"] = list(self.initial_alphabet)
        return {name: state[name] for name in _STATE_FIELDS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        fresh = ParityBpeTrainer(**{name: state[name] for name in _STATE_FIELDS if name in state})
        for name, value in vars(fresh).items():
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.__getstate__(),))

    def __repr__(self) -> str:
        alpha = int(self.alpha) if self.alpha.is_integer() else self.alpha
        return (
            f'ParityBpeTrainer(num_merges={self.num_merges}, variant="{self.variant}", min_frequency={self.min_frequency}, '
            f"global_merges={self.global_merges}, window_size={self.window_size}, alpha={alpha}, "
            f"total_symbols={str(self.total_symbols).lower()})"
        )

    # ------------------------------------------------------------------ training
    def train_from_iterator(
        self,
        tokenizer: Any,
        train_iterators: list[Iterable[Any]],
        *,
        dev_iterators: list[Iterable[Any]] | None = None,
        ratio: list[float] | None = None,
    ) -> None:
        """Train ``tokenizer``'s model with parity-aware BPE and return ``None``, as HF does.

        ``train_iterators`` holds one iterable per language, of texts or batches of texts;
        ``dev_iterators`` (same length) drives the selection, else ``ratio`` (this call's, or
        the trainer's). The tokenizer's normalizer and pre-tokenizer split the texts; its model
        becomes the trained BPE and the special tokens are added, in order.
        """
        from tokviz.models.bpe.model import BPE

        train_iterators = list(train_iterators)
        dev_iterators = list(dev_iterators or [])
        if not train_iterators:
            raise TokvizError("train_iterators must not be empty")
        if dev_iterators and len(dev_iterators) != len(train_iterators):
            raise TokvizError(
                f"dev_iterators length ({len(dev_iterators)}) must match train_iterators length ({len(train_iterators)})"
            )
        ratio = None if dev_iterators else _check_ratio("ratio", ratio if ratio is not None else self.ratio)
        train = [_words(tokenizer, texts) for texts in train_iterators]
        dev = [_words(tokenizer, texts) for texts in dev_iterators]
        vocab, merges = self._train(train, dev, ratio)
        tokenizer.model = BPE(
            vocab, merges, continuing_subword_prefix=self.continuing_subword_prefix, end_of_word_suffix=self.end_of_word_suffix
        )
        tokenizer.training_history = None
        finish_progress_lines(self)
        if self._special_tokens:
            tokenizer.add_special_tokens(list(self._special_tokens))
        return None

    def _train(self, train: list[Counter[str]], dev: list[Counter[str]], ratio: list[float] | None) -> tuple[dict[str, int], list[tuple[str, str]]]:
        languages = len(train)
        if ratio is not None:
            if len(ratio) != languages:
                raise ParityTrainingError(f"Training error: ratio length ({len(ratio)}) does not match number of languages ({languages})")
            for index, value in enumerate(ratio):
                if not (value > 0 and value != float("inf")):
                    raise ParityTrainingError(f"Training error: ratio[{index}] must be a positive finite number (got {value})")
        if self.variant == "window":
            if self.window_size == 0:
                raise ParityTrainingError("Training error: window_size must be > 0 when variant is Window")
            if not (0 < self.alpha < float("inf")):
                raise ParityTrainingError(f"Training error: alpha must be a positive finite number when variant is Window (got {self.alpha})")
        max_length = self.max_token_length if self.max_token_length is not None else float("inf")
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix

        # Vocabulary: special tokens, the alphabet (over train and dev) by code point.
        symbols = Symbols.start(token.content for token in self._special_tokens)
        every_word: Counter[str] = Counter()
        for counts in (*train, *dev):
            every_word.update(counts)
        kept = compute_alphabet(every_word, self.initial_alphabet, self.limit_alphabet)  # the BPE trainer's rule
        alphabet = set(kept)
        for letter in kept:
            symbols.add(letter, 1)

        def symbol(letter: str, first: bool, last: bool) -> str:
            text = letter if first or prefix is None else prefix + letter
            return text + suffix if last and suffix is not None else text

        # Each language's words as lists of ids, with counts, on the merge engine.
        corpora: list[PairCounts] = []
        for counts in train:
            lang_words, lang_freqs = [], []
            for word in sorted(counts):
                pieces = [
                    symbols.add(symbol(letter, at == 0, at == len(word) - 1), 1)
                    for at, letter in enumerate(word) if letter in alphabet
                ]
                lang_words.append(pieces)
                lang_freqs.append(counts[word])
            corpora.append(PairCounts(lang_words, lang_freqs, symbols.token_len, self.max_token_length))
        names = symbols.id_to_token
        queues = [LargerPairQueue(corpus.pair_counts, names) for corpus in corpora]
        use_global = self.global_merges > 0
        global_counts: dict[int, int] = {}
        if use_global:
            for corpus in corpora:
                for code, count in corpus.pair_counts.items():
                    global_counts[code] = global_counts.get(code, 0) + count
        global_queue = LargerPairQueue(global_counts, names)

        # What the selection measures.
        dev_vocab: dict[tuple[int, ...], list[int]] = {}
        lengths = [0] * languages
        initial: list[float] = []
        if ratio is not None:
            initial = [float(sum(len(w) * f for w, f in zip(corpus.words, corpus.counts))) for corpus in corpora]
            current = list(initial)
        elif dev:
            ids = symbols.token_to_id
            for lang, counts in enumerate(dev):
                for word, count in counts.items():
                    if any(letter not in alphabet for letter in word):
                        continue
                    decorated = [symbol(letter, at == 0, at == len(word) - 1) for at, letter in enumerate(word)]
                    if not decorated or any(text not in ids for text in decorated):
                        continue
                    key = tuple(ids[text] for text in decorated)
                    dev_vocab.setdefault(key, [0] * languages)[lang] += count
            for key, counts_by_lang in dev_vocab.items():
                for lang in range(languages):
                    lengths[lang] += len(key) * counts_by_lang[lang]
        else:
            lengths = [sum(len(w) * f for w, f in zip(corpus.words, corpus.counts)) for corpus in corpora]

        # total_symbols: num_merges counts the whole vocabulary (as HF 0.23 does), so the
        # special tokens and the alphabet come off it.
        num_merges = max(0, self.num_merges - len(names)) if self.total_symbols else self.num_merges

        threshold = self.alpha / languages
        recent: deque[int] = deque(maxlen=self.window_size or None)
        merges: list[int] = []
        exhausted: set[int] = set()
        lowered: set[int] = set()
        while len(merges) < num_merges and len(exhausted) < languages:
            if len(merges) < self.global_merges:
                lang = -1
            else:
                # The language worst off: the lowest compression for its ratio, or the longest text.
                worst = [-(initial[i] / current[i]) / ratio[i] for i in range(languages)] if ratio is not None else lengths
                values = [value if i not in exhausted else float("-inf") for i, value in enumerate(worst)]
                lang = _first_best(values) if self.variant == "base" else self._window(values, recent, threshold)
            best = (global_queue if lang < 0 else queues[lang]).pop()
            if best is None or best[1] < self.min_frequency:
                if lang < 0:
                    break
                exhausted.add(lang)
                continue
            code = best[0]
            new_id = symbols.add_merged(code, prefix)
            merges.append(code)
            lowered.clear()
            made: set[int] = set()
            for index, corpus in enumerate(corpora):
                reduction, created = corpus.merge(code, new_id, lowered if use_global else None)
                corpus.pair_counts[code] = 0  # merged in every language: no language offers it again
                queues[index].push(created)
                made.update(created)
                if ratio is not None:
                    current[index] -= reduction
                elif not dev:
                    lengths[index] -= reduction
            if use_global:
                for changed in made | lowered | {code}:
                    global_counts[changed] = max(0, sum(corpus.pair_counts.get(changed, 0) for corpus in corpora))
                global_queue.push(made)
            if dev and ratio is None:
                for index, change in enumerate(_merge_dev(code, new_id, dev_vocab, languages)):
                    lengths[index] -= change
        return dict(symbols.token_to_id), [(names[code >> PAIR_BITS], names[code & PAIR_MASK]) for code in merges]

    def _window(self, values: list[float], recent: deque[int], threshold: float) -> int:
        """The best language not over its share of the last ``window_size`` selections."""
        masked: set[int] = set()
        while True:
            best = _first_best([value if i not in masked else float("-inf") for i, value in enumerate(values)])
            if recent.count(best) / self.window_size <= threshold or len(masked) + 1 >= len(values):
                recent.append(best)
                return best
            masked.add(best)


def _first_best(values: list[float]) -> int:
    """The index of the largest value; the lowest index on ties (and 0 when all are -inf)."""
    best, best_value = 0, float("-inf")
    for index, value in enumerate(values):
        if value > best_value:
            best, best_value = index, value
    return best


class _Larger:
    """A pair of strings that sorts before the smaller ones (HF's tie-break, in a min-heap)."""

    __slots__ = ("strings",)

    def __init__(self, strings: tuple[str, str]) -> None:
        self.strings = strings

    def __lt__(self, other: "_Larger") -> bool:
        return self.strings > other.strings

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Larger) and self.strings == other.strings


class LargerPairQueue(CountQueue):
    """The merge engine's count queue with HF's parity tie-break: the highest count, ties to the
    larger pair of strings. Entries: ``(-count, larger strings first, pair code)``."""

    __slots__ = ("names",)

    def __init__(self, pair_counts: dict[int, int], names: list[str]) -> None:
        self.pair_counts, self.names = pair_counts, names
        self.heap = [entry for entry in map(self._entry, pair_counts) if entry is not None]
        heapq.heapify(self.heap)

    def _entry(self, code: int) -> tuple[int, _Larger, int] | None:
        count = self.pair_counts.get(code, 0)
        if count <= 0:
            return None
        return (-count, _Larger((self.names[code >> PAIR_BITS], self.names[code & PAIR_MASK])), code)

    def _pop_valid(self) -> tuple[int, _Larger, int] | None:
        heap = self.heap
        while heap:
            item = heapq.heappop(heap)
            count = self.pair_counts.get(item[2], 0)
            if count == -item[0]:
                return item
            if count > 0:
                heapq.heappush(heap, (-count, item[1], item[2]))
        return None

    def _describe(self, entry: tuple[int, _Larger, int]) -> tuple[int, int, float]:
        return entry[2], -entry[0], -entry[0]

    runners_up = MergeQueue.runners_up  # (CountQueue's reads int entries)

    def push(self, codes: Iterable[int]) -> None:
        for code in codes:
            entry = self._entry(code)
            if entry is not None:
                heapq.heappush(self.heap, entry)


def _merge_dev(code: int, new_id: int, dev_vocab: dict[tuple[int, ...], list[int]], languages: int) -> list[int]:
    """Merge pair ``code`` in the dev words; per language, by how many tokens they got shorter."""
    change = [0] * languages
    first, second = code >> PAIR_BITS, code & PAIR_MASK
    holding = [word for word in dev_vocab if any(a == first and b == second for a, b in zip(word, word[1:]))]
    for word in holding:
        counts = dev_vocab.pop(word)
        merged: list[int] = []
        at = 0
        while at < len(word):
            if at + 1 < len(word) and word[at] == first and word[at + 1] == second:
                merged.append(new_id)
                at += 2
            else:
                merged.append(word[at])
                at += 1
        for lang in range(languages):
            change[lang] += (len(word) - len(merged)) * counts[lang]
        previous = dev_vocab.get(tuple(merged))
        if previous is None:
            dev_vocab[tuple(merged)] = counts
        else:  # two dev words that now read the same
            for lang in range(languages):
                previous[lang] += counts[lang]
    return change


def _words(tokenizer: Any, texts: Iterable[Any]) -> Counter[str]:
    """One language's texts (or batches of texts), normalized, pre-tokenized and counted."""
    from tokviz.word_counts import count_words

    try:
        return count_words(texts, tokenizer._normalizer, tokenizer._pre_tokenizer)
    except EmptyCorpusError:
        return Counter()


def _rebuild(state: dict[str, Any]) -> ParityBpeTrainer:
    trainer = ParityBpeTrainer.__new__(ParityBpeTrainer)
    trainer.__setstate__(state)
    return trainer
