"""Word counting: the step between the pre-tokenizer and every trainer.

A trainer never sees the corpus itself, only how often each pre-token ("word") occurs,
exactly as Hugging Face's ``Trainer.feed`` does: normalize each text, pre-tokenize it,
count the words. BPE, WordPiece and WordLevel then work on the *unique* words weighted
by their counts, which is why training a 7 MB corpus only touches ~50,000 strings.

>>> count_words(["the cat", "the hat"])
Counter({'the cat': 1, 'the hat': 1})

Without a pre-tokenizer each text is one word (as in HF). With one, its fast path
``pre_tokenize_words(text) -> list[str]`` is used when the component has it, else
``pre_tokenize_str(text) -> [(word, offsets), ...]`` (so HF's own components work too):

>>> class SplitSpaces:
...     def pre_tokenize_words(self, text):
...         return text.split()
>>> count_words(["the cat", "the hat"], pre_tokenizer=SplitSpaces())
Counter({'the': 2, 'cat': 1, 'hat': 1})

Like HF's ``train_from_iterator``, each item may also be a batch: a list, tuple or iterator
of strings (what the HF course's ``get_training_corpus()`` yields), in any mix with strings:

>>> count_words([["the cat", "the hat"], "the cat", iter(["a dog"])])
Counter({'the cat': 2, 'the hat': 1, 'a dog': 1})

The Counter keeps first-seen order (it is a dict), which the "first_seen" tie-break of
the trainers relies on. What this version leaves out: HF counts in parallel threads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Callable

from tokviz.errors import EmptyCorpusError
from tokviz.history import ProgressCallback, WordCountSummary

__all__ = ["count_words", "summarize_word_counts"]


def _word_splitter(pre_tokenizer: Any) -> Callable[[str], Iterable[str]] | None:
    if pre_tokenizer is None:
        return None
    fast = getattr(pre_tokenizer, "pre_tokenize_words", None)
    if fast is not None:
        return fast
    slow = getattr(pre_tokenizer, "pre_tokenize_str", None)
    if slow is not None:
        return lambda text: [word for word, _offsets in slow(text)]
    raise TypeError(f"{type(pre_tokenizer).__name__} has neither pre_tokenize_words nor pre_tokenize_str")


def _two_level_counter(pre_tokenizer: Any) -> tuple[Callable[[str], Iterable[str]], Callable[[str], list[str]]] | None:
    """``(split, finish)`` when counting can be done in two levels: count the pieces
    ``split`` finds in each text, then turn each DISTINCT piece into words with ``finish``;
    chosen by what the pre-tokenizer declares (its ``plain_split()``, which a subclass that
    pre-tokenizes its own way does not inherit):

    - bytes (ByteLevel with its regex): count the GPT-2 regex matches, byte-map each distinct
      match once (the corpus has 1.5M matches but 50k distinct ones);
    - words within whitespace runs (BertPreTokenizer): count the runs, split each distinct one once.

    Both give exactly the words ``pre_tokenize_words`` gives (tests compare them).
    """
    from tokviz import pre_tokenizers
    from tokviz.byte_level import text_to_symbols

    declare = getattr(pre_tokenizer, "plain_split", None)
    plain = declare() if declare is not None else None
    if plain is None:
        return None
    if plain.to_bytes:
        if not pre_tokenizer.use_regex:
            return None
        findall = pre_tokenizers.gpt2_findall
        if pre_tokenizer.add_prefix_space:
            def split(text: str) -> list[str]:
                if text and not text.startswith(" "):
                    text = " " + text
                return findall(text)
        else:
            split = findall
        return split, lambda piece: [text_to_symbols(piece)]
    if plain.within_runs:
        return pre_tokenizers.WhitespaceSplit().pre_tokenize_words, pre_tokenizer.pre_tokenize_words
    return None


def _texts_of(items: Iterable[Any]) -> Iterator[str]:
    """Strings and batches of strings, flattened in order (HF's ``train_from_iterator`` input).

    >>> list(_texts_of(["a", ["b", "c"], ("d",), iter(["e"])]))
    ['a', 'b', 'c', 'd', 'e']

    Anything else raises HF's ``TypeError``: an item that is neither a string nor iterable,
    or a batch holding something other than strings (batches do not nest).
    """
    for item in items:
        if isinstance(item, str):
            yield item
            continue
        try:
            batch = iter(item)
        except TypeError:
            raise TypeError(
                f"train_from_iterator expects strings or batches (lists / iterators) of strings; "
                f"got {type(item).__name__} {item!r:.60}, which is not iterable."
            ) from None
        for text in batch:
            if not isinstance(text, str):
                raise TypeError(
                    f"A training batch must hold strings; got {type(text).__name__} {text!r:.60} "
                    f"in a {type(item).__name__} batch."
                )
            yield text


def count_words(
    texts: Iterable[str | Iterable[str]],
    normalizer: Any = None,
    pre_tokenizer: Any = None,
    progress: ProgressCallback | None = None,
    empty_ok: bool = False,
    length: int | None = None,
) -> Counter[str]:
    """Normalize, pre-tokenize and count: ``["a b a"] -> Counter({'a': 2, 'b': 1})`` (with a
    whitespace pre-tokenizer).

    ``texts`` may hold batches of strings (lists, tuples, iterators) among the strings, as
    HF's ``train_from_iterator`` allows; ``done`` / ``total`` then count items, not texts.
    ``progress("count words", done, total)`` is called about every 1% of the items (every
    1,000 items when ``texts`` has no length nor ``length`` is given; ``total`` is then 0). Raises
    :class:`~tokviz.errors.EmptyCorpusError` when no word is left, unless ``empty_ok`` (one
    chunk of a large corpus may hold only blank lines: the whole corpus is checked after merging).
    """
    normalize = getattr(normalizer, "normalize_str", None) if normalizer is not None else None
    if normalizer is not None and normalize is None:
        raise TypeError(f"{type(normalizer).__name__} has no normalize_str")
    split = _word_splitter(pre_tokenizer)
    two_level = _two_level_counter(pre_tokenizer) if pre_tokenizer is not None else None
    if two_level is not None:
        split, finish = two_level
    total = len(texts) if hasattr(texts, "__len__") else int(length or 0)  # type: ignore[arg-type]
    every = max(1, total // 100) if total else 1000

    counts: Counter[str] = Counter()
    update = counts.update
    saw_text = False
    done = 0
    for item in texts:
        for text in (item,) if type(item) is str else _texts_of((item,)):  # (an item may be a batch)
            if not saw_text and text.strip():
                saw_text = True
            if normalize is not None:
                text = normalize(text)
            if split is None:
                if text:
                    counts[text] += 1
            else:
                update(split(text))
        done += 1
        if progress is not None and done % every == 0:
            progress("count words", done, total)
    if two_level is not None:
        pieces, counts = counts, Counter()
        for piece, count in pieces.items():
            for word in finish(piece):
                counts[word] += count
    counts.pop("", None)  # an empty pre-token carries no characters to train on
    if progress is not None:
        progress("count words", done, total or done)
    if not counts and not empty_ok:
        if saw_text:
            raise EmptyCorpusError(
                "The corpus is empty after normalization and pre-tokenization: no word is left to train on."
            )
        raise EmptyCorpusError("The corpus is empty: give at least one line of text to train on.")
    return counts


def summarize_word_counts(word_counts: Mapping[str, int], top: int = 20) -> WordCountSummary:
    """What a trainer was fed, for the history:

    >>> summarize_word_counts({"ab": 2, "b": 1}, top=1)
    WordCountSummary(total_words=3, unique_words=2, total_characters=5, distinct_characters=2, top_words=(('ab', 2),))
    """
    total_words = 0
    total_characters = 0
    characters: set[str] = set()
    for word, count in word_counts.items():
        total_words += count
        total_characters += len(word) * count
        characters.update(word)
    top_words = tuple(sorted(word_counts.items(), key=lambda item: -item[1])[:top])
    return WordCountSummary(
        total_words=total_words,
        unique_words=len(word_counts),
        total_characters=total_characters,
        distinct_characters=len(characters),
        top_words=top_words,
    )
