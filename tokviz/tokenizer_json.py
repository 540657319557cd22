"""The one reader of tokenizer.json: everything a user's tokenizer.json holds is checked against the
server's limits (:mod:`tokviz.limits`) before anything is built.

``Tokenizer.from_str``, ``Tokenizer.from_file``, ``tokviz.load`` and the pages' uploads all come
through :func:`read_tokenizer_json`: the guarded JSON entry (:func:`tokviz.limits.parse_json`: size,
values, numbers, Unicode, nesting), a Unigram model's scores read as HF reads them, then
:func:`check_tokenizer_json_sections` (counts, token lengths, ids, pipeline strings, padding and
truncation lengths). It builds nothing and imports no component, so the reader of tokenizer.json
(``tokviz.serialization``) and the file loaders (``tokviz.loaders``) both use it without a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from operator import itemgetter, mul
from typing import Any

from tokviz.errors import LimitExceededError, TokenizerFileError
from tokviz.models.base import ProvenPairs, ProvenVocab


def read_tokenizer_json(data: bytes | str, name: str = "This tokenizer.json") -> dict[str, Any]:
    """Parse and check a tokenizer.json (see the module's docstring), before anything is built.

    >>> read_tokenizer_json('{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}')["model"]["vocab"]
    {'a': 0}
    >>> read_tokenizer_json('{"model": {"vocab": {"a": 1' + '0' * 5000 + '}}}', "big.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: big.json has a number of 5,001 digits (100000000000…), above this server's limit of 100 digits per number (TOKVIZ_MAX_JSON_NUMBER_DIGITS); no tokenizer file needs one.
    """
    from tokviz import limits
    from tokviz.json_floats import JsonNumberError, loads_tokenizer_json

    def loads(text: str) -> Any:
        try:
            return loads_tokenizer_json(text)  # json.loads, a Unigram model's scores read as HF reads them
        except JsonNumberError as error:
            raise TokenizerFileError(f"This is not a valid tokenizer.json: {error}") from None

    limits.check_tokenizer_json_size(len(data), name)
    parsed = limits.parse_json(data, name, what="tokenizer.json", max_bytes=limits.MAX_TOKENIZER_JSON_BYTES, loads=loads,
                               error=TokenizerFileError)
    check_tokenizer_json_sections(parsed, name)
    return parsed


#: The sections whose whole numbers are token ids (bounded by :data:`tokviz.limits.MAX_TOKEN_ID`).
_ID_SECTIONS = ("added_tokens", "post_processor")
#: The keys whose strings may be longer than a token: SentencePiece's compiled normalization map.
_LONG_STRING_KEYS = {"precompiled_charsmap": ("MAX_CHARSMAP_CHARS", "TOKVIZ_MAX_CHARSMAP_CHARS")}


def check_tokenizer_json_sections(data: Any, name: str = "This tokenizer.json") -> None:
    """Refuse a parsed tokenizer.json whose sections exceed the limits: vocab, merges and added tokens
    (counts and token lengths), token ids (:data:`tokviz.limits.MAX_TOKEN_ID`), nesting depth, the
    strings of its pipeline (:data:`tokviz.limits.MAX_TOKEN_CHARS`), padding and truncation lengths.

    Sections of the wrong shape are left to the reader, which says what is wrong with them.

    >>> check_tokenizer_json_sections({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})
    >>> check_tokenizer_json_sections({"model": {"vocab": {"a" * 2000: 0}}}, "long.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: long.json has a token of 2,000 characters, above this server's limit of 1,024 characters per token (TOKVIZ_MAX_TOKEN_CHARS).
    >>> check_tokenizer_json_sections({"model": {"vocab": {"a": 0, "b": 10**30}}}, "ids.json")
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: ids.json uses the id 1,000,000,000,000,000,000,000,000,000,000 (for 'b'), outside this server's range of ids, 0 to 304,999 (TOKVIZ_MAX_TOKEN_ID).
    """
    from tokviz import limits

    if not isinstance(data, dict):
        return
    flat: list[Any] = []  # containers whose shape is proven here: the depth walk skips them
    model = data.get("model")
    if isinstance(model, dict):
        vocab = model.get("vocab")
        if isinstance(vocab, (dict, list)):
            limits.check_tokenizer_vocab(len(vocab), name)
            # (Shapes proven with C-speed passes -- set(map(type, ...)) -- not a Python loop per entry:
            # a real vocabulary has 30,000-260,000 entries, and every load pays this.)
            if isinstance(vocab, dict):
                tokens = vocab  # (a JSON object's keys are strings)
                if vocab and set(map(type, vocab.values())) == {int}:
                    check_ids(min(vocab.values()), max(vocab.values()), vocab, name)
                    model["vocab"] = tokens = ProvenVocab(vocab)  # (the proof travels with it, see check_vocab)
                    flat.append(tokens)
            elif set(map(type, vocab)) <= {list} and set(map(len, vocab)) <= {2}:  # Unigram: [[piece, score], ...]
                tokens = list(map(itemgetter(0), vocab))
                if set(map(type, tokens)) <= {str} and not set(map(type, map(itemgetter(1), vocab))) & {list, dict}:
                    model["vocab"] = ProvenPairs(vocab)  # (the proof travels with it, see Unigram.from_dict)
                    flat.append(model["vocab"])
                else:  # (a piece that is not a string: the reader says so)
                    tokens = [token for token in tokens if isinstance(token, str)]
            else:  # entries of another shape: the pieces among them are still bounded
                tokens = [entry[0] for entry in vocab if isinstance(entry, list) and entry and isinstance(entry[0], str)]
            lengths = list(map(len, tokens))
            limits.check_token_chars(max(lengths, default=0), name)
            if isinstance(vocab, list):  # every proper prefix of every piece: sum of n(n-1)/2, at C speed
                limits.check_unigram_prefix_chars((sum(map(mul, lengths, lengths)) - sum(lengths)) // 2, name)
        merges = model.get("merges")
        if isinstance(merges, list):
            limits.check_tokenizer_merges(len(merges), name)
            kinds = set(map(type, merges))
            if kinds <= {str}:
                flat.append(merges)
            elif kinds == {list} and set(map(len, merges)) == {2}:
                parts = list(chain.from_iterable(merges))  # (columns: its even, odd items; Llama 3: 42 ms, zip(*merges) 65)
                if set(map(type, parts)) == {str}:
                    model["merges"] = ProvenPairs(merges, (tuple(parts[0::2]), tuple(parts[1::2])))  # (the proof travels, see parse_merges)
                    flat.append(model["merges"])
        unk_id = model.get("unk_id")
        if type(unk_id) is int:
            check_ids(unk_id, unk_id, None, name)
    added = data.get("added_tokens")
    if isinstance(added, list):
        limits.check_added_tokens(len(added), name)
        contents = [entry.get("content") for entry in added if isinstance(entry, dict)]
        limits.check_token_chars(max((len(c) for c in contents if isinstance(c, str)), default=0), name)
        if set(map(type, added)) <= {dict}:  # the usual shape, proven in C-speed passes (Whisper has 1,500 added tokens)
            values = list(chain.from_iterable(map(dict.values, added)))
            if set(map(type, values)) <= {str, int, bool, type(None)}:
                ids = [value for value in values if type(value) is int]
                if ids:
                    check_ids(min(ids), max(ids), None, name)
                limits.check_token_chars(max((len(value) for value in values if type(value) is str), default=0), name)
                flat.append(added)
    _check_pipeline(data, name, flat)
    padding = data.get("padding")
    if isinstance(padding, dict):
        strategy = padding.get("strategy")
        fixed = strategy.get("Fixed") if isinstance(strategy, dict) else None
        for what, value in (("padding length", fixed), ("padding multiple", padding.get("pad_to_multiple_of"))):
            if type(value) is int and not 0 <= value <= limits.MAX_PADDING_LENGTH:
                _refuse_length(name, what, value)
        for key in ("pad_id", "pad_type_id"):
            if type(padding.get(key)) is int:
                check_ids(padding[key], padding[key], None, name)
    truncation = data.get("truncation")
    if isinstance(truncation, dict):
        for key in ("max_length", "stride"):
            value = truncation.get(key)
            if type(value) is int and not 0 <= value <= limits.MAX_PADDING_LENGTH:
                _refuse_length(name, f"truncation {key.replace('_', ' ')}", value)


def _refuse_length(name: str, what: str, value: int) -> None:
    from tokviz import limits

    raise LimitExceededError(
        f"{name} asks for a {what} of {value:,} tokens, outside this server's range of 0 to "
        f"{limits.MAX_PADDING_LENGTH:,} (TOKVIZ_MAX_PADDING_LENGTH)."
    )


def check_ids(low: int, high: int, vocab: Mapping[str, int] | None, name: str) -> None:
    from tokviz import limits

    for value in (low, high):
        if not 0 <= value <= limits.MAX_TOKEN_ID:
            token = next((token for token, token_id in vocab.items() if token_id == value), None) if vocab is not None else None
            where = "" if token is None else f" (for {token[:40]!r})"
            raise LimitExceededError(
                f"{name} uses the id {value:,}{where}, outside this server's range of ids, 0 to {limits.MAX_TOKEN_ID:,} "
                "(TOKVIZ_MAX_TOKEN_ID)."
            )


def _check_pipeline(data: dict[str, Any], name: str, flat: list[Any]) -> None:
    """One walk, without recursion, over everything but the proven-flat vocabulary and merges: nesting
    depth, the length of every string, the range of every whole number (ids in the sections of
    :data:`_ID_SECTIONS`), the number of components."""
    from tokviz import limits

    skipped = {id(item) for item in flat}
    stack: list[tuple[Any, int, str, str]] = [(data, 1, "", "")]
    containers = 0
    while stack:
        item, depth, section, key = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limits.MAX_JSON_DEPTH:
                limits.raise_too_deep(name)
            if section in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
                containers += 1
                if containers > limits.MAX_PIPELINE_CONTAINERS:
                    raise LimitExceededError(
                        f"{name} has a pipeline of more than {limits.MAX_PIPELINE_CONTAINERS:,} parts; real ones have fewer than 100."
                    )
            pairs = item.items() if isinstance(item, dict) else ((key, child) for child in item)
            for child_key, child in pairs:
                if id(child) not in skipped:
                    stack.append((child, depth + 1, section or str(child_key), str(child_key)))
        elif isinstance(item, str) and section != "model":  # (the model's tokens are bounded above, as tokens)
            bound_name, env = _LONG_STRING_KEYS.get(key, ("MAX_TOKEN_CHARS", "TOKVIZ_MAX_TOKEN_CHARS"))
            bound = getattr(limits, bound_name)
            if len(item) > bound:
                raise LimitExceededError(
                    f"{name} has a string of {len(item):,} characters in its {section.replace('_', '-')} ({key!r}), "
                    f"above this server's limit of {bound:,} characters ({env})."
                )
        elif type(item) is int:
            if section in _ID_SECTIONS:
                check_ids(item, item, None, name)
            elif not -(2**63) <= item < 2**64:  # (HF reads its numbers as 64-bit ones)
                raise LimitExceededError(f"{name} has the number {item:,} in its {section.replace('_', '-')} ({key!r}), "
                                         "beyond the 64-bit numbers a tokenizer file holds.")
