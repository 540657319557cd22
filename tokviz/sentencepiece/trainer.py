"""``SentencePieceTrainer``: sentencepiece's options (keyword or ``--flag=value`` string), raw sentences in, ``.model`` out.

Training follows sentencepiece's ``TrainerInterface``:

1. read sentences (lines of ``input`` files, or ``sentence_iterator``); skip empty ones and ones
   longer than ``max_sentence_length`` bytes; keep the first ``input_sentence_size`` (or a seeded
   random sample of that many with ``shuffle_input_sentence``; our sample is not sentencepiece's);
2. normalize each (the rule's charsmap, whitespace switches, ``▁`` for spaces); meta pieces
   (``<unk>``, control and user-defined symbols, ``<0xNN>``) in the text become boundaries (U+001F, as in sentencepiece 0.2.3);
3. the alphabet: characters by count (``required_chars`` first) until ``character_coverage`` of
   all characters is covered; the rest become the unknown marker ``▅``;
4. words (a new one at each ``▁``) with counts feed the model's trainer (bpe, unigram, char, word);
5. ids: ``unk``/``bos``/``eos``/``pad`` at their ids, control then user-defined symbols, the 256
   byte pieces with ``byte_fallback``, then the trained pieces.

    >>> import io
    >>> out = io.BytesIO()
    >>> history = train_sentencepiece(sentence_iterator=iter(["hug pug hugs"] * 4), vocab_size=12, model_type="bpe")
    >>> [p.piece for p in history.proto.pieces]
    ['<unk>', '<s>', '</s>', 'ug', '▁h', '▁hug', 'g', 'u', '▁', 'h', 'p', 's']
    >>> SentencePieceTrainer.train(sentence_iterator=iter(["a"]), model_writer=out, vocab_sise=10)
    Traceback (most recent call last):
    ...
    tokviz.sentencepiece.processor.SentencePieceError: NOT_FOUND: unknown field name "vocab_sise" in TrainerSpec.
"""

from __future__ import annotations

import gc
import heapq
import math
import re
import struct
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import accumulate, repeat
from operator import methodcaller
from typing import Any, Callable, Iterable, Iterator, Mapping

from tokviz.sentencepiece.model_proto import (ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec,
                                              normal_pieces)
from tokviz.sentencepiece.normalizer import RULE_NAMES, SPACE_SYMBOL, SentencePieceNormalizer, charsmap_for_rule
from tokviz.sentencepiece.pieces import BOUNDARY, UNK_CHAR, PieceRules, count_words
from tokviz.sentencepiece.processor import SentencePieceError
from tokviz.sentencepiece.trainer_bpe import sorted_chars, train_bpe, use_numpy

__all__ = ["SentencePieceTrainer", "SentencePieceHistory", "train_sentencepiece", "parse_flags", "build_specs"]


def __getattr__(name: str) -> Any:
    if name == "SentencePieceHistory":  # (its own module: loaded only when a training returns a history)
        from tokviz.sentencepiece.trainer_history import SentencePieceHistory

        return SentencePieceHistory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_NORMALIZER_OPTIONS = {"normalization_rule_name": "name", "add_dummy_prefix": "add_dummy_prefix",
                       "remove_extra_whitespaces": "remove_extra_whitespaces", "escape_whitespaces": "escape_whitespaces",
                       "normalization_rule_tsv": "normalization_rule_tsv"}
#: Options sentencepiece accepts that are not spec fields (logging, I/O).
_ACCEPTED_EXTRA = {"minloglevel", "logstream", "random_seed", "denormalization_rule_tsv"}
_FLOAT32 = struct.Struct("<f")


def _f32(value: float) -> float:
    return _FLOAT32.unpack(_FLOAT32.pack(value))[0]


def _log_share(count: int, log_total: float) -> float:
    """The char and word trainers' score, as sentencepiece computes it in 32-bit floats:
    ``log((float)count) - log((float)total)``, ``log_total`` being the second log."""
    return _f32(_f32(math.log(_f32(count))) - log_total)


def parse_flags(text: str) -> dict[str, str]:
    """``"--input=a.txt --vocab_size=100 --byte_fallback"`` -> ``{"input": "a.txt", "vocab_size": "100", "byte_fallback": "true"}``."""
    options: dict[str, str] = {}
    for token in text.split():
        if not token.startswith("-"):
            raise SentencePieceError(f"INVALID_ARGUMENT: cannot parse {token!r}: flags look like --name=value.")
        name, sep, value = token.lstrip("-").partition("=")
        options[name] = value if sep else "true"
    return options


def _convert(name: str, kind: str, repeated: bool, value: Any) -> Any:
    if repeated:
        if isinstance(value, str):
            return tuple(v for v in value.split(",") if v)
        return tuple(str(v) for v in value)
    if kind == "string":
        return str(value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "t", "y"):
            return True
        if text in ("false", "0", "no", "f", "n"):
            return False
        raise SentencePieceError(f'INVALID_ARGUMENT: cannot parse "{value}" as bool (option {name}).')
    if kind == "enum":
        names = {m.name.lower(): int(m) for m in ModelType}
        text = str(value).strip().lower()
        if text not in names:
            raise SentencePieceError(
                f'INVALID_ARGUMENT: unknown enumeration value of "{value}" for {name}; choose one of {", ".join(names)}.')
        return names[text]
    if kind == "float":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise SentencePieceError(f'INVALID_ARGUMENT: cannot parse "{value}" as float (option {name}).') from None
    if isinstance(value, bool):
        raise SentencePieceError(f'INVALID_ARGUMENT: cannot parse "{value}" as int (option {name}).')
    try:
        return int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise SentencePieceError(f'INVALID_ARGUMENT: cannot parse "{value}" as int (option {name}).') from None


def build_specs(options: Mapping[str, Any]) -> tuple[TrainerSpec, NormalizerSpec]:
    """Check sentencepiece options and turn them into the two specs (only given fields are set)."""
    trainer_values: dict[str, Any] = {}
    normalizer_values: dict[str, Any] = {}
    for name, value in options.items():
        if name in _ACCEPTED_EXTRA:
            continue
        if name in _NORMALIZER_OPTIONS:
            field_name = _NORMALIZER_OPTIONS[name]
            _, kind, _, _ = NormalizerSpec.SCHEMA[field_name]
            normalizer_values[field_name] = _convert(name, kind, False, value)
            continue
        if name not in TrainerSpec.SCHEMA:
            raise SentencePieceError(f'NOT_FOUND: unknown field name "{name}" in TrainerSpec.')
        _, kind, repeated, _ = TrainerSpec.SCHEMA[name]
        trainer_values[name] = _convert(name, kind, repeated, value)
    spec = TrainerSpec(**trainer_values)

    def check(ok: bool, option: str, what: str) -> None:
        if not ok:
            raise SentencePieceError(f"INTERNAL: {option}={getattr(spec, option)!r} is invalid: it must be {what}.")

    check(spec.vocab_size > 0, "vocab_size", "positive")
    check(0.98 <= spec.character_coverage <= 1.0, "character_coverage", "between 0.98 and 1.0")
    check(1 <= spec.max_sentencepiece_length <= 512, "max_sentencepiece_length", "between 1 and 512")
    check(1 <= spec.num_sub_iterations <= 10, "num_sub_iterations", "between 1 and 10")
    check(1 <= spec.num_threads <= 1024, "num_threads", "between 1 and 1024")
    check(0.5 <= spec.shrinking_factor <= 0.95, "shrinking_factor", "between 0.5 and 0.95")
    check(10 <= spec.max_sentence_length <= 1073741824, "max_sentence_length", "between 10 and 1073741824")
    check(spec.input_sentence_size <= 0 or spec.input_sentence_size > 100, "input_sentence_size", "0 (all) or more than 100")
    check(spec.seed_sentencepiece_size >= 1, "seed_sentencepiece_size", "positive")
    for piece_name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
        check(bool(getattr(spec, piece_name)), piece_name, "non-empty")
    if spec.pretokenization_delimiter and spec.model_type not in (ModelType.UNIGRAM, ModelType.BPE):
        raise SentencePieceError("INTERNAL: PretokenizerForTraining is only supported in UNIGRAM or BPE mode.")
    rule = normalizer_values.get("name", "nmt_nfkc")
    if normalizer_values.get("normalization_rule_tsv"):
        from tokviz.sentencepiece.charsmap import compile_charsmap, read_rule_tsv

        tsv = normalizer_values.pop("normalization_rule_tsv")
        try:
            charsmap = compile_charsmap(read_rule_tsv(tsv))
        except OSError as exc:
            raise SentencePieceError(f'NOT_FOUND: "{tsv}": {exc.strerror or exc}') from exc
        normalizer_values.update(name="user_defined", precompiled_charsmap=charsmap)
        return spec, NormalizerSpec(**normalizer_values)
    if rule not in RULE_NAMES:
        raise SentencePieceError(f"NOT_FOUND: No precompiled charsmap is found: {rule}; choose one of {', '.join(RULE_NAMES)}.")
    normalizer_values["name"] = rule
    normalizer_values["precompiled_charsmap"] = charsmap_for_rule(rule)
    return spec, NormalizerSpec(**normalizer_values)


def meta_pieces(spec: TrainerSpec, escape_whitespaces: bool = True) -> dict[int, tuple[str, PieceType]]:
    """sentencepiece's ``InitMetaPieces``: ``{id: (piece, type)}`` for unk/bos/eos/pad, control, user-defined and byte
    pieces (a word model's user-defined symbol also as a word, ``"▁" + symbol``, when whitespace is escaped)."""
    metas: dict[int, tuple[str, PieceType]] = {}
    has_unk = False
    for id_name, piece_name in (("unk_id", "unk_piece"), ("bos_id", "bos_piece"), ("eos_id", "eos_piece"), ("pad_id", "pad_piece")):
        piece_id, piece = getattr(spec, id_name), getattr(spec, piece_name)
        if piece_id < 0:
            continue
        if piece_id >= spec.vocab_size or piece_id in metas or (has_unk and piece == spec.unk_piece):
            raise SentencePieceError(f"INTERNAL: {id_name}={piece_id} is out of the vocabulary or already taken.")
        is_unk = piece == spec.unk_piece
        has_unk = has_unk or is_unk
        metas[piece_id] = (piece, PieceType.UNKNOWN if is_unk else PieceType.CONTROL)
    if not has_unk:
        raise SentencePieceError(f"INTERNAL: {spec.unk_piece} must be defined (unk_id must not be negative).")
    seen: set[str] = set()
    next_id = 0

    def insert(piece: str, kind: PieceType) -> None:
        nonlocal next_id
        if piece in seen:
            raise SentencePieceError(f"INTERNAL: {piece} is already defined. duplicated symbols are not allowed.")
        seen.add(piece)
        if piece == spec.unk_piece:
            raise SentencePieceError(f"INTERNAL: {piece} must not be defined with --control_symbols and --user_defined_symbols.")
        for id_name, piece_name in (("bos_id", "bos_piece"), ("eos_id", "eos_piece"), ("pad_id", "pad_piece")):
            if piece == getattr(spec, piece_name) and getattr(spec, id_name) >= 0:
                metas[getattr(spec, id_name)] = (piece, kind)
                return
        while next_id in metas:
            next_id += 1
        metas[next_id] = (piece, kind)

    for piece in spec.control_symbols:
        insert(piece, PieceType.CONTROL)
    for piece in spec.user_defined_symbols:
        insert(piece, PieceType.USER_DEFINED)
        if spec.model_type == ModelType.WORD and escape_whitespaces and not piece.startswith(SPACE_SYMBOL):
            insert(SPACE_SYMBOL + piece, PieceType.USER_DEFINED)
    if spec.byte_fallback:
        for byte in range(256):
            insert(f"<0x{byte:02X}>", PieceType.BYTE)
    return metas


# --------------------------------------------------------------------------- loading


class _FileLines:
    """The lines of the input files in turn (each file read and decoded whole, lazily file by file);
    ``all()`` is them all as one list (no per-line generator step when every line is wanted)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = list(paths)

    @staticmethod
    def _read(path: str) -> list[str]:
        try:
            handle = open(path, "rb")
        except OSError as exc:
            raise SentencePieceError(f'NOT_FOUND: "{path}": {exc.strerror or exc}') from exc
        with handle:
            data = handle.read()
        # decoded whole: "\n" is never inside a UTF-8 sequence, so this equals decoding line by line
        lines = data.decode("utf-8", errors="replace").split("\n")
        if lines[-1] == "":
            lines.pop()
        return lines

    def __iter__(self) -> Iterator[str]:
        for path in self.paths:
            yield from self._read(path)

    def all(self) -> list[str]:
        lines: list[str] = []
        for path in self.paths:
            lines += self._read(path)
        return lines


class _Corpus:
    """What :func:`load_sentences` read (filled in there; a plain class: a dataclass costs ~0.6 ms to make at import)."""

    __slots__ = ("sentences", "required", "too_long", "coverage", "words", "sentence_count")

    def __init__(self) -> None:
        self.sentences: list[tuple[str, int]] = []
        self.required: dict[str, int] = {}
        self.too_long, self.coverage, self.sentence_count = 0, 1.0, 0
        self.words: dict[str, int] | None = None


def load_sentences(spec: TrainerSpec, nspec: NormalizerSpec, lines: Iterable[str], metas: Mapping[int, tuple[str, PieceType]],
                   with_words: bool = False, pretokenizer: Callable[[str], Any] | None = None,
                   allow_inconsistent: bool = False) -> _Corpus:
    """Steps 1-3 of the module docstring. With ``with_words`` (and whitespace-split words of
    unweighted lines) the corpus also has ``words`` (step 4's ``{word: count}``, rare characters
    already the unknown marker) and no ``sentences`` (``sentence_count`` is their number); a corpus
    of 1M+ characters then normalizes and counts its second half in a forked process (see
    :mod:`tokviz.sentencepiece.parallel`) when ``num_threads`` > 1."""
    corpus = _Corpus()
    limit = spec.input_sentence_size
    is_tsv = spec.input_format == "tsv"
    max_length = spec.max_sentence_length
    freqs: list[int] | None = None  # (None: every line once)
    if limit <= 0 and not is_tsv:
        # every line is kept unless empty, too long or holding the unknown marker: by comprehensions
        lines = lines.all() if isinstance(lines, _FileLines) else list(lines)
        if set(map(type, lines)) - {str}:
            lines = [line if type(line) is str else bytes(line).decode("utf-8", errors="replace") for line in lines]
        short = max_length // 4  # characters <= UTF-8 bytes <= 4 * characters: encode only above this

        def too_long(line: str) -> bool:
            return len(line) > max_length or len(line.encode("utf-8")) > max_length

        corpus.too_long = sum(1 for line in lines if len(line) > short and too_long(line))
        kept = [line for line in lines if line and UNK_CHAR not in line and (len(line) <= short or not too_long(line))]
    else:
        from tokviz.sentencepiece.trainer_sentences import _sample_lines

        kept, freqs, corpus.too_long = _sample_lines(spec, lines)
    if freqs is not None and all(freq == 1 for freq in freqs):
        freqs = None
    user_defined = [p for p, k in metas.values() if k == PieceType.USER_DEFINED]
    normalizer = SentencePieceNormalizer(
        nspec.precompiled_charsmap, add_dummy_prefix=nspec.add_dummy_prefix,
        remove_extra_whitespaces=nspec.remove_extra_whitespaces, escape_whitespaces=nspec.escape_whitespaces,
        treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix, user_defined_symbols=user_defined)
    meta_list = sorted({p for p, _ in metas.values()}, key=len, reverse=True)
    counts: Counter[str] = Counter()
    words: dict[str, int] | None = None
    if (with_words and pretokenizer is None and not spec.pretokenization_delimiter and spec.split_by_whitespace and not spec.treat_whitespace_as_suffix
            and not spec.allow_whitespace_only_pieces and freqs is None):
        # the words partition the texts: count them once, and the characters from the distinct
        # words (78k on the 6.8 MB corpus) instead of from the whole text; a big corpus is
        # normalized and counted in two halves, the second in a forked process (num_threads > 1)
        work = _NormalizeAndCount(normalizer, meta_list)
        ends = list(accumulate(map(len, kept))) if spec.num_threads > 1 else []
        if ends and ends[-1] >= _TWO_PROCESS_MIN_CHARS and _can_fork():
            import numpy  # noqa: F401  (before the fork: both halves count in numpy, the child would import it again)

            from tokviz.sentencepiece.parallel import in_two_processes

            # (split by characters, not lines: line lengths vary by file; the worker takes a
            # little more, the parent merges the two afterwards)
            half = bisect_left(ends, ends[-1] * (1 - _WORKER_SHARE))
            (words, sentence_count), (more, more_count) = in_two_processes(work, kept[:half], kept[half:])
            words.update(more)
            sentence_count += more_count
        else:
            words, sentence_count = work(kept)
        if not sentence_count:
            raise SentencePieceError("INTERNAL: the corpus has no sentences to train on (all lines empty or too long).")
        corpus.sentence_count = sentence_count
        counts.update(_weighted_char_counts(words))
    else:
        from tokviz.sentencepiece.trainer_sentences import _char_counts, _pretokenize, _replace_rare, _without_empty

        texts = normalizer.normalize_all(kept)
        _replace_metas(texts, meta_list)  # (then the pretokenizer's cuts, as sentencepiece orders them)
        if pretokenizer is not None:
            texts = _pretokenize(texts, pretokenizer, allow_inconsistent)
        elif spec.pretokenization_delimiter:
            texts = [text.replace(spec.pretokenization_delimiter, BOUNDARY) for text in texts]
        sentences = _without_empty(list(zip(texts, freqs or repeat(1))))
        if not sentences:
            raise SentencePieceError("INTERNAL: the corpus has no sentences to train on (all lines empty or too long).")
        corpus.sentence_count = len(sentences)
        if all(freq == 1 for _, freq in sentences):
            counts.update(_char_counts("".join(texts)))
        else:
            for text, freq in sentences:
                for char in text:
                    counts[char] += freq
    counts.pop(" ", None)
    required_flag = set(spec.required_chars)
    total = sum(counts.values())
    target = _f32(spec.character_coverage)
    accumulated = 0
    required: dict[str, int] = {}
    for char, count in sorted(counts.items(), key=lambda item: (-(item[0] in required_flag), -item[1], item[0])):
        if _f32(accumulated / total) >= target:
            break
        accumulated += count
        if char == BOUNDARY:
            continue
        required[char] = count
    for char in required_flag:
        required.setdefault(char, counts.get(char, 0))
    rare = {ord(char): UNK_CHAR for char in counts if char not in required}
    if words is not None:
        if rare:
            words = _replace_rare_in_words(words, "".join(chr(code) for code in rare))
        corpus.words = words
    else:
        if rare:
            sentences = _replace_rare(sentences, "".join(chr(code) for code in rare))
        corpus.sentences = sentences
    corpus.required = required
    corpus.coverage = accumulated / total if total else 1.0
    return corpus


#: below this many characters a corpus is normalized and counted in one process (a fork costs ~10 ms)
_TWO_PROCESS_MIN_CHARS = 1_000_000
_WORKER_SHARE = 0.55  # of the characters (the last lines), for the forked worker


def _replace_metas(texts: list[str], meta_list: list[str]) -> None:
    """Meta pieces (``<unk>``, ``<s>``, user symbols...) in the texts become boundaries (:data:`BOUNDARY`), in place (longest first)."""
    blob = "".join(texts)
    present = [p for p in meta_list if p in blob]
    if present:
        for index, text in enumerate(texts):
            for piece in present:
                if piece in text:
                    text = text.replace(piece, BOUNDARY)
            texts[index] = text


class _NormalizeAndCount:
    """Raw lines -> ``(Counter of their words, number of lines not empty once normalized)``."""

    def __init__(self, normalizer: SentencePieceNormalizer, meta_list: list[str]) -> None:
        self.normalizer, self.meta_list = normalizer, meta_list

    def __call__(self, lines: list[str]) -> tuple[Counter[str], int]:
        # an ASCII corpus (most): its words cut and counted without making the normalized texts (botchan-sized
        # 15 -> 7 ms), unless a meta piece is in a word (it must become a boundary) or may span words
        found = self.normalizer.ascii_word_counts(lines)
        if found is not None:
            if not self.meta_list:
                return found
            keys = "\n".join(found[0])
            if not any(piece in keys or not piece.isprintable() or " " in piece or SPACE_SYMBOL in piece for piece in self.meta_list):
                return found
        texts = self.normalizer.normalize_all(lines)
        _replace_metas(texts, self.meta_list)
        return count_words(texts), len(texts) - texts.count("")


def _can_fork() -> bool:
    from tokviz.sentencepiece.parallel import can_fork  # (loaded only for a big corpus: it costs ~5 ms)

    return can_fork()


def _weighted_char_counts(words: Mapping[str, int], numpy: bool | None = None) -> dict[str, int]:
    """Characters counted over ``{word: count}``: ``_weighted_char_counts({"ab": 2, "b": 1}) == {"a": 2, "b": 3}``
    (in numpy when the words are long, :func:`~tokviz.sentencepiece.trainer_bpe.use_numpy`)."""
    if not words:
        return {}
    keys = list(words)
    if not (use_numpy(sum(map(len, keys))) if numpy is None else numpy):
        by_count: dict[int, list[str]] = {}  # (the words of one count counted at once, in C)
        for word, count in words.items():
            group = by_count.get(count)
            if group is None:
                by_count[count] = [word]
            else:
                group.append(word)
        totals: dict[str, int] = dict(Counter("".join(by_count.pop(1, ()))))  # (most words: no product)
        get = totals.get
        for count, group in by_count.items():
            for char, times in Counter("".join(group)).items():
                totals[char] = get(char, 0) + times * count
        return totals
    import numpy as np

    codes = np.frombuffer("".join(keys).encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
    sizes = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    weights = np.repeat(np.fromiter(words.values(), dtype=np.float64, count=len(keys)), sizes)
    tally = np.rint(np.bincount(codes, weights=weights)).astype(np.int64)
    present = np.flatnonzero(tally)
    return {chr(code): count for code, count in zip(present.tolist(), tally[present].tolist())}


def _replace_rare_in_words(words: dict[str, int], rare: str) -> dict[str, int]:
    """``{word: count}`` with every character of ``rare`` the unknown marker (words that become equal add up),
    changed in place and returned.

    The words holding one are found by one regex pass over the words joined (rare characters are rare:
    a handful of matches), each match's word by bisecting the words' ends."""
    if not rare or not words:
        return words
    keys = list(words)
    ends = list(accumulate(map(len, keys)))
    pattern = re.compile("[" + "".join(re.escape(char) for char in rare) + "]")
    starts = map(methodcaller("start"), pattern.finditer("".join(keys)))
    touched = [keys[index] for index in dict.fromkeys(map(bisect_right, repeat(ends), starts))]
    table = {ord(char): UNK_CHAR for char in rare}
    counts = [words.pop(word) for word in touched]
    for word, count in zip(touched, counts):
        word = word.translate(table)
        words[word] = words.get(word, 0) + count
    return words


# --------------------------------------------------------------------------- the trainer


def _rules(spec: TrainerSpec) -> PieceRules:
    return PieceRules(spec.max_sentencepiece_length, spec.split_by_unicode_script, spec.split_by_number, spec.split_digits,
                      spec.split_by_whitespace, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces)


def train_sentencepiece(arg: str | Mapping[str, Any] | None = None, *, sentence_iterator: Iterable[str] | None = None,
                        model_writer: Any = None, progress: Callable[[str, int, int], None] | None = None,
                        **options: Any) -> SentencePieceHistory:
    """Train like ``SentencePieceTrainer.train`` and return the :class:`SentencePieceHistory` (tokviz's entry point).

    Without ``model_prefix`` and ``model_writer`` nothing is written: the ``.model`` is in
    ``history.proto`` (``history.to_model_bytes()``).
    """
    merged: dict[str, Any] = parse_flags(arg) if isinstance(arg, str) else {}
    if isinstance(arg, Mapping):
        merged.update(arg)
    merged.update(options)
    return _train(merged, sentence_iterator, model_writer, progress, require_output=False)


class SentencePieceTrainer:
    """``SentencePieceTrainer.train(**options)`` / ``.Train("--flag=value ...")`` as in the ``sentencepiece`` package.

    Returns ``True`` like sentencepiece; use :func:`train_sentencepiece` for the training history.
    Besides the flags, it takes ``pretokenizer`` (a function of a normalized sentence giving the
    pieces no vocabulary piece may cross), ``allow_inconsistent_pretokenization`` and
    ``normalizer`` (a :class:`~tokviz.sentencepiece.public_normalizer.SentencePieceNormalizer` whose
    spec the model takes), as sentencepiece's Python wrapper does.
    """

    @staticmethod
    def train(arg: str | Mapping[str, Any] | None = None, logstream: Any = None, *,
              sentence_iterator: Iterable[str] | None = None, model_writer: Any = None, **options: Any) -> bool:
        merged: dict[str, Any] = parse_flags(arg) if isinstance(arg, str) else {}
        if isinstance(arg, Mapping):
            merged.update(arg)
        merged.update(options)
        _train(merged, sentence_iterator, model_writer, None, require_output=True)
        return True

    Train = train


def _train(options: dict[str, Any], sentence_iterator: Iterable[str] | None, model_writer: Any,
           progress: Callable[[str, int, int], None] | None, require_output: bool) -> SentencePieceHistory | None:
    was_enabled = gc.isenabled()
    gc.disable()  # (a training builds millions of long-lived small objects: the collector would only rescan them)
    try:
        return _train_body(options, sentence_iterator, model_writer, progress, require_output)
    finally:
        if was_enabled:
            gc.enable()


def _train_body(options: dict[str, Any], sentence_iterator: Iterable[str] | None, model_writer: Any,
                progress: Callable[[str, int, int], None] | None, require_output: bool) -> SentencePieceHistory | None:
    started = time.perf_counter()
    options = dict(options)
    pretokenizer = options.pop("pretokenizer", None)
    allow_inconsistent = _convert("allow_inconsistent_pretokenization", "bool", False,
                                  options.pop("allow_inconsistent_pretokenization", False))
    normalizer = options.pop("normalizer", None)
    if normalizer is not None:
        given = sorted(name for name in _NORMALIZER_OPTIONS if name in options)
        if given:
            raise ValueError(f"normalizer= carries the normalization; do not give {', '.join(given)} as well.")
    spec, nspec = build_specs(options)
    if normalizer is not None:
        nspec = normalizer.spec
    if pretokenizer is not None:
        if not callable(pretokenizer):
            raise TypeError("pretokenizer must be a function of a sentence returning its pieces.")
        if spec.pretokenization_delimiter:
            raise ValueError("pretokenizer and pretokenization_delimiter are two ways of one thing: give one.")
    if sentence_iterator is None and not spec.input:
        raise SentencePieceError("INTERNAL: give --input=<file> (or sentence_iterator=...).")
    if sentence_iterator is not None and spec.input:
        raise SentencePieceError("INTERNAL: SentenceIterator and trainer_spec.input() must be exclusive.")
    if require_output and model_writer is None and not spec.model_prefix:
        raise SentencePieceError("INTERNAL: give --model_prefix=<name> (or model_writer=...).")
    if not nspec.escape_whitespaces and spec.model_type == ModelType.BPE:
        raise SentencePieceError("INTERNAL: the bpe model needs escape_whitespaces=true.")
    metas = meta_pieces(spec, nspec.escape_whitespaces)
    lines = sentence_iterator if sentence_iterator is not None else _FileLines(spec.input)
    if progress:
        progress("load sentences", 0, 1)
    model_type = ModelType(spec.model_type)
    corpus = load_sentences(spec, nspec, lines, metas, with_words=model_type == ModelType.BPE, pretokenizer=pretokenizer,
                            allow_inconsistent=allow_inconsistent)
    if model_type not in (ModelType.WORD, ModelType.CHAR) and len(corpus.required) + len(metas) > spec.vocab_size:
        raise SentencePieceError(
            f"INTERNAL: Vocabulary size is smaller than required_chars. {spec.vocab_size} vs {len(corpus.required) + len(metas)}. "
            "Increase vocab_size or decrease character_coverage with --character_coverage option.")
    rules = _rules(spec)
    merge_steps: tuple[MergeStep, ...] = ()
    unigram_history = None
    stop_reason = ""
    # (the unigram trainer counts the words itself, with what follows each)
    words: Mapping[str, int] | None = {} if model_type == ModelType.UNIGRAM else corpus.words
    if words is None:
        from tokviz.sentencepiece.trainer_sentences import _words

        words = _words(spec, corpus.sentences)
    if model_type == ModelType.UNIGRAM:
        from tokviz.sentencepiece.trainer_unigram import train_on_corpus

        final, unigram_history, words = train_on_corpus(spec, corpus, rules, len(metas), progress, history=not require_output)
        stop_reason = unigram_history.stop_reason
    elif model_type == ModelType.BPE:
        result = train_bpe(words, corpus.required, spec.vocab_size - len(metas) - len(corpus.required), rules,
                           meta_size=len(metas), progress=progress, history=not require_output)
        final = list(result.pieces)
        merge_steps = result.merge_steps
        stop_reason = result.stop_reason
    elif model_type == ModelType.CHAR:
        # sentencepiece's char trainer: every character of the alphabet, scored log(count / total)
        total = sum(corpus.required.values())
        log_total = _f32(math.log(_f32(total)))
        final = [(c, _log_share(n, log_total)) for c, n in sorted_chars(corpus.required)]
        if not spec.use_all_vocab:
            final = final[: max(0, spec.vocab_size - len(metas))]
        stop_reason = "every character of the alphabet"
    else:
        # sentencepiece's word trainer: the most frequent words, scored log(count / total)
        total = sum(words.values())
        candidates = [(w, c) for w, c in words.items() if UNK_CHAR not in w and BOUNDARY not in w]
        candidates.sort(key=lambda item: (-item[1], item[0]))
        if not spec.use_all_vocab:
            candidates = candidates[: max(0, spec.vocab_size - len(metas))]
        log_total = _f32(math.log(_f32(total)))
        final = [(w, _log_share(c, log_total)) for w, c in candidates]
        stop_reason = "the most frequent words"
    size = spec.vocab_size if spec.hard_vocab_limit or model_type != ModelType.CHAR else len(metas) + len(final)
    # ids below ``slots``: each meta piece at its own, the final pieces in order in the others (while they last)
    slots = max(size, len(metas))
    normal = normal_pieces(final)
    pieces: list[SentencePiece] = []
    taken = slot = 0
    for piece_id in sorted(i for i in metas if i < slots):
        pieces += normal[taken:taken + piece_id - slot]
        taken += piece_id - slot
        piece, kind = metas[piece_id]
        pieces.append(SentencePiece(piece, 0.0, kind))
        slot = piece_id + 1
    pieces += normal[taken:taken + slots - slot]
    if model_type == ModelType.CHAR or spec.use_all_vocab:
        pieces += normal[taken + slots - slot:]
    if len({p.piece for p in pieces}) != len(pieces):
        seen: set[str] = set()
        for p in pieces:
            if p.piece in seen:
                raise SentencePieceError(f"INTERNAL: {p.piece} is already defined.")
            seen.add(p.piece)
    out_spec = spec
    if not spec.hard_vocab_limit or model_type == ModelType.CHAR:
        out_spec = spec.replace(vocab_size=len(pieces))
    elif len(pieces) != spec.vocab_size:
        raise SentencePieceError(
            f"INTERNAL: Vocabulary size too high ({spec.vocab_size}). Please set it to a value <= {len(pieces)}.")
    proto = ModelProto(pieces=tuple(pieces), trainer_spec=out_spec, normalizer_spec=nspec)
    blob = proto.to_bytes()
    if model_writer is not None:
        model_writer.write(blob)
    elif spec.model_prefix:
        with open(f"{spec.model_prefix}.model", "wb") as handle:
            handle.write(blob)
        with open(f"{spec.model_prefix}.vocab", "w", encoding="utf-8") as handle:
            for p in pieces:
                handle.write(f"{p.piece}\t{_format_score(p.score)}\n" if spec.vocabulary_output_piece_score else f"{p.piece}\n")
    if require_output:  # (SentencePieceTrainer.train returns no history: nothing more to build)
        return None
    from tokviz.history import WordCountSummary
    from tokviz.sentencepiece.trainer_history import SentencePieceHistory

    fixed = sum(1 for p in pieces if p.type != PieceType.NORMAL)
    chars = len(corpus.required)
    summary = WordCountSummary(total_words=sum(words.values()), unique_words=len(words),
                               total_characters=sum(corpus.required.values()), distinct_characters=chars,
                               top_words=_top_words(words, 20))
    min_size = fixed + (chars if model_type == ModelType.BPE else 1)
    if unigram_history is not None:
        min_size = fixed + chars
    tokviz_model = None
    if model_type in (ModelType.BPE, ModelType.UNIGRAM):
        from tokviz.sentencepiece.convert import model_from_proto

        tokviz_model = model_from_proto(proto)
    return SentencePieceHistory(
        algorithm=f"sentencepiece-{model_type.name.lower()}", model=tokviz_model, special_tokens=tuple(p for p, _ in metas.values()),
        alphabet=tuple(c for c, _ in sorted_chars(corpus.required)), word_counts=summary, stop_reason=stop_reason,
        min_vocab_size=min(min_size, len(pieces)), max_vocab_size=len(pieces),
        trainer_config=tuple(sorted((k, v) for k, v in spec.set_fields().items())), seconds=time.perf_counter() - started,
        proto=proto, merge_steps=merge_steps, unigram=unigram_history, sentences=corpus.sentence_count,
        skipped_too_long=corpus.too_long, character_coverage=corpus.coverage)


def _top_words(words: Mapping[str, int], n: int) -> tuple[tuple[str, int], ...]:
    """The ``n`` most frequent words (ties: the smaller word first), without a key call per word."""
    if len(words) <= n:
        return tuple(sorted(words.items(), key=lambda item: (-item[1], item[0])))
    least = heapq.nlargest(n, words.values())[-1]
    return tuple(sorted(((w, c) for w, c in words.items() if c >= least), key=lambda item: (-item[1], item[0]))[:n])


def _format_score(score: float) -> str:
    """C++ ``ostream << float``: 6 significant digits, ``-0`` kept (``_format_score(-0.0) == '-0'``)."""
    return f"{score:.6g}"
