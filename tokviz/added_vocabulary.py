"""Added tokens: strings matched whole in the input BEFORE the model ever sees them.

``tok.add_special_tokens(["[CLS]"])`` or ``tok.add_tokens(["<name>"])`` puts tokens on top of
the model's vocabulary. When encoding, the text is first cut on these tokens, so
``"[CLS] hi"`` becomes ``[CLS]`` (one token, never split, never normalized) and ``" hi"``
(which goes through the normal pipeline). As in HF, matching happens twice:

1. tokens with ``normalized=False`` (special tokens by default) are found in the raw text;
2. the remaining pieces are normalized, and tokens with ``normalized=True`` are found in
   the normalized text (so ``"yesterday"`` added to a lowercasing tokenizer matches
   ``"Yesterday"``).

Matching is leftmost-longest over all tokens of a pass. Options, as in HF: ``single_word``
(only match when not inside a word), ``lstrip`` / ``rstrip`` (swallow the whitespace on that
side), ``special`` (dropped by ``decode(skip_special_tokens=True)``).

>>> vocab = AddedVocabulary()
>>> vocab.add_tokens([AddedToken("[CLS]", special=True), AddedToken("name")], model=None)
2
>>> vocab.find_matches("[CLS] my name", normalized=False)
[(0, (0, 5)), (None, (5, 13))]

``encode_special_tokens = True`` (HF's switch) stops matching special tokens: they are
encoded as the text they are made of.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import Any, Iterable

import regex


_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE_SET = frozenset(_WHITESPACE)
_WORD_CHAR = regex.compile(r"\w")


_ADDED_TOKEN_FIELDS = ("content", "single_word", "lstrip", "rstrip", "normalized", "special")


class AddedToken:
    """A token added on top of the model's vocabulary, with HF's matching options.

    HF's defaults: ``AddedToken()`` is the empty token; ``normalized`` defaults to
    ``not special`` (special tokens match the raw text). As in HF, ``content`` and ``special``
    can be set afterwards (``transformers`` sets ``token.special = True``; ``normalized`` then
    follows, ``not special``, unless it was given); the other options are fixed. A tokenizer keeps its
    own copy of every token it is given, so editing a token later never changes a tokenizer.
    Equal when every option is equal; hashed by content, as HF's.

    >>> token = AddedToken("[MASK]")
    >>> token.special = True
    >>> token
    AddedToken("[MASK]", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)
    >>> token.lstrip = True
    Traceback (most recent call last):
    ...
    AttributeError: attribute 'lstrip' of 'AddedToken' objects is not writable
    """

    __slots__ = _ADDED_TOKEN_FIELDS + ("_normalized_given",)

    def __init__(
        self,
        content: str | None = None,
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: bool | None = None,
        special: bool = False,
    ) -> None:
        content = "" if content is None else content
        if not isinstance(content, str):
            raise TypeError(f"AddedToken content must be a string, got {type(content).__name__} {content!r:.60}.")
        object.__setattr__(self, "content", content)
        for name, value in (("single_word", single_word), ("lstrip", lstrip), ("rstrip", rstrip), ("special", special)):
            _check_flag(name, value)
            object.__setattr__(self, name, value)
        if normalized is not None:
            _check_flag("normalized", normalized)
        object.__setattr__(self, "normalized", (not special) if normalized is None else normalized)
        object.__setattr__(self, "_normalized_given", normalized is not None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "content":
            if not isinstance(value, str):
                raise TypeError(f"AddedToken content must be a string, got {type(value).__name__} {value!r:.60}.")
            object.__setattr__(self, name, value)
        elif name == "special":
            _check_flag("special", value)
            object.__setattr__(self, "special", value)
            if not self._normalized_given:  # HF: normalized defaults to not special
                object.__setattr__(self, "normalized", not value)
        elif name in _ADDED_TOKEN_FIELDS:
            raise AttributeError(f"attribute '{name}' of 'AddedToken' objects is not writable")
        else:
            raise AttributeError(f"'AddedToken' object has no attribute '{name}'")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddedToken):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _ADDED_TOKEN_FIELDS)

    def __hash__(self) -> int:
        return hash(self.content)

    def __repr__(self) -> str:
        return (
            f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '  # unescaped, as HF
            f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in _ADDED_TOKEN_FIELDS:
            object.__setattr__(self, name, state[name] if name in state else getattr(AddedToken(), name))
        object.__setattr__(self, "_normalized_given", "normalized" in state)

    def __reduce__(self) -> tuple[Any, ...]:
        return (AddedToken, (), self.__getstate__())

    def __copy__(self) -> "AddedToken":
        twin = object.__new__(AddedToken)  # (the fields were checked when this one was made)
        for name in AddedToken.__slots__:
            object.__setattr__(twin, name, getattr(self, name))
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> "AddedToken":
        return self.__copy__()

    def to_dict(self, id: int | None = None) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in _ADDED_TOKEN_FIELDS}
        return fields if id is None else {"id": id, **fields}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AddedToken":
        content = data["content"]
        if not isinstance(content, str):
            return cls(content)  # (None is the empty token; anything else is refused with a sentence)
        # Every flag is read with bool(), so only the content needed a check (Whisper loads 1,509 tokens).
        token = object.__new__(cls)
        setter = object.__setattr__
        get = data.get
        special = bool(get("special", False))
        setter(token, "content", content)
        setter(token, "single_word", bool(get("single_word", False)))
        setter(token, "lstrip", bool(get("lstrip", False)))
        setter(token, "rstrip", bool(get("rstrip", False)))
        setter(token, "special", special)
        setter(token, "normalized", bool(get("normalized", not special)))
        setter(token, "_normalized_given", True)
        return token

    def __str__(self) -> str:
        return self.content


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"AddedToken {name} must be True or False, got {type(value).__name__} {value!r:.60}.")


class AddedVocabulary:
    """The tokens added to a tokenizer, their ids, and the two matchers (raw / normalized).

    Ids: a token already in the model's vocabulary keeps the model's id; a new one gets the
    next id after the model's vocabulary and the tokens added so far (HF's rule).
    """

    def __init__(self) -> None:
        self._content_to_id: dict[str, int] = {}
        self._id_to_token: dict[int, AddedToken] = {}
        self._classic: list[AddedToken] = []  # non-special, in the order they were added
        self._special: list[AddedToken] = []
        self._special_contents: set[str] = set()
        # The (content, id) pairs matched in the raw and in the normalized text, whether each pass has
        # one, and its matcher (see _build_matcher), built when first needed: a load does not pay
        # for the regex of Whisper's 1,509 tokens (~4 ms), the first encode does.
        self._patterns: tuple[list[tuple[str, int]], list[tuple[str, int]]] = ([], [])
        self._has_matchers = (False, False)
        self._matchers: tuple[Any, Any] | None = (None, None)
        # id -> normalized content of a normalized=True token: what decoding shows, as in
        # HF (so a decoder can invert e.g. a byte-level normalizer).
        self._normalized_cache: dict[int, str] = {}
        self._tokens: set[AddedToken] = set()  # every token added, for the "already there" test
        #: HF's switch: True encodes special tokens as ordinary text (they are not matched).
        self.encode_special_tokens = False

    def __copy__(self) -> "AddedVocabulary":
        """An independent copy (the compiled matchers are shared: a change rebuilds them)."""
        twin = AddedVocabulary.__new__(AddedVocabulary)
        twin.__dict__.update(self.__dict__)
        for name in ("_content_to_id", "_id_to_token", "_normalized_cache"):
            setattr(twin, name, dict(getattr(self, name)))
        twin._classic, twin._special = list(self._classic), list(self._special)
        twin._special_contents, twin._tokens = set(self._special_contents), set(self._tokens)
        return twin

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._content_to_id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._content_to_id)

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return dict(sorted(self._id_to_token.items()))

    def token_to_id(self, token: str) -> int | None:
        return self._content_to_id.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The token's text for decoding: its normalized form when it is matched normalized."""
        added = self._id_to_token.get(id)
        if added is None:
            return None
        return self._normalized_cache.get(id, added.content)

    def is_special_token(self, token: str) -> bool:
        return token in self._special_contents

    @property
    def is_empty(self) -> bool:
        return not self._content_to_id

    # ----------------------------------------------------------------- adding
    def add_tokens(self, tokens: Iterable[AddedToken], model: Any, normalizer: Any = None, *, owned: bool = False) -> int:
        """Add tokens; returns how many were new (empty and repeated tokens are ignored).
        The vocabulary keeps copies (``owned``: the caller made them for it and keeps none):
        editing a token afterwards changes nothing here."""
        tokens = list(tokens) if owned else [token.__copy__() for token in tokens]
        for token in tokens:
            if token.special and token.content and token.content not in self._special_contents:
                self._special.append(token)
                self._special_contents.add(token.content)
        added = 0
        highest = max(self._content_to_id.values(), default=None)  # kept up to date (1,500 Whisper tokens: one max each was 50 ms)
        for token in tokens:
            if not token.content or token in self._tokens:
                continue
            self._tokens.add(token)
            added += 1
            new_id = self._content_to_id.get(token.content)
            if new_id is None and model is not None:
                new_id = model.token_to_id(token.content)
            if new_id is None:
                model_size = model.get_vocab_size() if model is not None else 0
                if highest is not None:
                    new_id = highest + 1 if highest >= model_size or model_size == 0 else model_size
                else:
                    new_id = model_size
            self._content_to_id[token.content] = new_id
            highest = new_id if highest is None or new_id > highest else highest
            self._id_to_token[new_id] = token
            if token.content not in self._special_contents:
                self._classic.append(token)
        self.refresh(model, normalizer)
        return added

    def refresh(self, model: Any, normalizer: Any = None) -> None:
        """Rebuild the two matchers (call again after the normalizer changes)."""
        raw: list[tuple[str, int]] = []
        normalized: list[tuple[str, int]] = []
        self._normalized_cache = {}
        for token in [*self._special, *self._classic]:
            token_id = self._content_to_id.get(token.content)
            if token_id is None and model is not None:
                token_id = model.token_to_id(token.content)
            if token_id is None or (self.encode_special_tokens and token.special):
                continue
            if token.normalized:
                content = normalizer.normalize_str(token.content) if normalizer is not None else token.content
                normalized.append((content, token_id))
                if normalizer is not None:
                    self._normalized_cache[token_id] = content
            else:
                raw.append((token.content, token_id))
        self._patterns = (raw, normalized)
        self._has_matchers = (any(content for content, _ in raw), any(content for content, _ in normalized))
        self._matchers = None

    def _matcher(self, normalized: bool) -> tuple[Any, dict[str, int]] | None:
        matchers = self._matchers
        if matchers is None:
            matchers = self._matchers = (_build_matcher(self._patterns[0]), _build_matcher(self._patterns[1]))
        return matchers[normalized]

    # ----------------------------------------------------------------- matching
    def searches(self) -> tuple[Any, Any]:
        """The ``search`` of the raw and of the normalized matcher (None where there is none)."""
        raw, normalized = self._matcher(False), self._matcher(True)
        return (None if raw is None else raw[0].search, None if normalized is None else normalized[0].search)

    def has_matchers(self) -> tuple[bool, bool]:
        return self._has_matchers

    def find_matches(self, sentence: str, normalized: bool) -> list[tuple[int | None, tuple[int, int]]]:
        """Cover ``sentence`` with ``(id or None, (start, end))`` pieces, HF's ``find_matches``."""
        matcher = self._matcher(normalized)
        if not sentence:
            return [(None, (0, 0))]
        if matcher is None:
            return [(None, (0, len(sentence)))]
        compiled, ids_by_content = matcher
        splits: list[tuple[int | None, tuple[int, int]]] = []
        start_offset = 0
        for match in compiled.finditer(sentence):
            start, stop = match.span()
            token_id = ids_by_content[match.group()]
            token = self._id_to_token[token_id]
            if token.single_word:
                start_space = start == 0 or _WORD_CHAR.match(sentence[start - 1]) is None
                stop_space = stop == len(sentence) or _WORD_CHAR.match(sentence[stop]) is None
                if not (start_space and stop_space):
                    continue
            if token.lstrip:
                new_start = start
                while new_start > 0 and sentence[new_start - 1] in _WHITESPACE_SET:
                    new_start -= 1
                # A previous match may already own those spaces.
                start = max(new_start, start_offset)
            if token.rstrip:
                while stop < len(sentence) and sentence[stop] in _WHITESPACE_SET:
                    stop += 1
            if start_offset < start:
                splits.append((None, (start_offset, start)))
            splits.append((token_id, (start, stop)))
            start_offset = stop
        if start_offset != len(sentence):
            splits.append((None, (start_offset, len(sentence))))
        return splits


def _build_matcher(patterns: list[tuple[str, int]]) -> tuple[Any, dict[str, int]] | None:
    """One regex over a trie of the contents, and content -> id.

    At each position the regex follows the one branch of the trie the text takes and is
    greedy at every node, so it finds the leftmost-longest match like HF's Aho-Corasick,
    in one scan whatever the number of tokens: ``["ab", "abc", "b"] -> '(?:ab(?:c)?|b)'``.

    >>> _build_matcher([("ab", 5), ("abc", 6), ("b", 7)])[0].pattern
    '(?:ab(?:c)?|b)'
    """
    ids: dict[str, int] = {}
    for content, token_id in patterns:
        if content and content not in ids:  # the first token with a content wins
            ids[content] = token_id
    if not ids:
        return None
    trie: dict[str, Any] = {}
    for content in ids:
        node = trie
        for char in content:
            node = node.setdefault(char, {})
        node[""] = True  # a content ends here
    pattern, depth = _trie_pattern(trie)
    return _compile_nested(pattern, depth), ids


def _trie_pattern(root: dict[str, Any]) -> tuple[str, int]:
    """The regex of a trie and how deeply its groups nest, built bottom-up without recursion
    (a token of 1,024 characters is a path of 1,024 nodes).

    >>> _trie_pattern({"a": {"": True, "b": {"": True}}, "c": {"": True}})
    ('(?:a(?:b)?|c)', 2)
    """
    patterns: dict[int, tuple[str, int]] = {}  # id(node) -> (its pattern, group depth)
    stack: list[tuple[dict[str, Any], bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    escaped = _ESCAPED.get
    while stack:
        node, children_done = pop()
        if not children_done:
            push((node, True))
            for char, child in node.items():
                if char:
                    push((child, False))
            continue
        branches, depth = [], 0
        for char, child in node.items():
            if char:
                child_pattern, child_depth = patterns.pop(id(child))
                branches.append((escaped(char) or _escape(char)) + child_pattern)
                if child_depth > depth:
                    depth = child_depth
        if not branches:
            patterns[id(node)] = ("", 0)
            continue
        if len(branches) == 1:
            body = branches[0]
        else:
            body, depth = "(?:" + "|".join(branches) + ")", depth + 1
        if "" in node:  # a shorter content ends here: the longer ones are optional, tried first
            if len(branches) == 1 and not body.startswith("(?:"):
                body, depth = "(?:" + body + ")?", depth + 1
            else:
                body += "?"
        patterns[id(node)] = (body, depth)
    return patterns[id(root)]


#: char -> re.escape(char), filled as chars are met (1,500 Whisper tokens: ~5,000 trie nodes).
_ESCAPED: dict[str, str] = {}


def _escape(char: str) -> str:
    escaped = _ESCAPED[char] = re.escape(char)
    return escaped


_COMPILE_LOCK = threading.Lock()


def _compile_nested(pattern: str, depth: int) -> Any:
    """``re.compile(pattern)`` for groups nested ``depth`` deep: Python's regex parser recurses
    about three calls per group, so 1,024 overlapping tokens (``a``, ``aa``, ... up to the token
    length limit) need more than its default 1,000 calls. The limit is raised for this compile
    only, under a lock (it is the interpreter's, shared by the server's threads); pure-Python
    calls use no C stack in Python 3.11+, so the headroom is safe.
    """
    needed = 4 * depth + 200
    if needed + 100 < sys.getrecursionlimit():
        return re.compile(pattern)
    with _COMPILE_LOCK:
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before, needed + 1_000))
        try:
            return re.compile(pattern)
        finally:
            sys.setrecursionlimit(before)
