"""Decoders: tokens back to text, undoing what the pre-tokenizer and model did to spaces.

Each decoder is HF's: ``decode_chain(tokens) -> tokens`` rewrites the token list (so decoders
compose in a :class:`Sequence`), and ``decode(tokens)`` joins the chain's output::

    ByteLevel   ['Hello', 'Ġw', 'orld']       -> 'Hello world'   (GPT-2 byte symbols -> UTF-8)
    WordPiece   ['hello', '##s', ',', 'you']  -> 'hellos, you'   ('##' glues, cleanup fixes ' ,')
    Metaspace   ['▁Hello', '▁world']          -> 'Hello world'   ('▁' -> ' ', first one dropped)
    BPEDecoder  ['hel', 'lo</w>', 'you</w>']  -> 'hello you'     (suffix -> ' ', last one dropped)

    CTC         ['<pad>', 'h', 'h', 'i', '|']   -> 'hi '          (repeats and pads dropped)

Decoders are mutable as HF's (``decoder.prefix = "__"``; each edit bumps the mutation
counter), print and pickle as HF's (their tokenizer.json fragment). :meth:`Decoder.custom`
wraps a Python object with ``decode_chain(tokens) -> tokens`` (it cannot be saved), and
:class:`DecodeStream` decodes ids one at a time, as a generation loop produces them.
"""

from __future__ import annotations

import sys
from typing import Any, Sequence as SequenceType

from tokviz._component import CustomComponent, JsonComponent, check_bool, check_str, check_whole, field_checks
from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.errors import SerializationError, TokvizError
from tokviz.patterns import Regex, compile_pattern, match_spans, replace_spans


class Decoder(JsonComponent):
    """Base class: subclasses implement ``decode_chain``."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: SequenceType[str]) -> str:
        return "".join(self.decode_chain(list(tokens)))

    @classmethod
    def _from_state_dict(cls, data: dict[str, Any]) -> "Decoder | None":
        return from_dict(data)

    @staticmethod
    def custom(decoder: Any) -> "CustomDecoder":
        """HF's ``Decoder.custom``: a Python object with ``decode_chain(tokens) -> tokens``.

        >>> class Upper:
        ...     def decode_chain(self, tokens):
        ...         return [token.upper() for token in tokens]
        >>> Decoder.custom(Upper()).decode(["a", "b"])
        'AB'
        """
        return CustomDecoder(decoder)


class CustomDecoder(CustomComponent, Decoder):
    """A Python object with ``decode_chain(tokens) -> tokens`` used as a decoder (HF's ``custom``)."""

    _WHAT = "decoder"
    _NEEDS = "decode_chain(tokens) -> list[str]"
    _UNSERIALIZABLE = "Custom PyDecoder cannot be serialized"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = self.inner.decode_chain(list(tokens))
        if isinstance(result, str) or not all(isinstance(token, str) for token in result):
            raise TypeError(f"A custom decoder's decode_chain must return a list of strings, got {result!r:.80}.")
        return list(result)


class ByteLevel(Decoder):
    """GPT-2 byte symbols back to UTF-8 text; invalid byte sequences become U+FFFD.

    >>> ByteLevel().decode(["Hello", "Ġw", "orld", "Ġê°Ģ"])
    'Hello world 가'
    """

    _FIELDS = ("add_prefix_space", "trim_offsets", "use_regex")
    _CHECKS = field_checks("ByteLevel", **dict.fromkeys(_FIELDS, check_bool))

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **kwargs: Any
    ) -> None:
        # Unused when decoding; kept because HF serializes one ByteLevel config for all roles.
        # HF accepts (and ignores) other keywords, so ByteLevel(**json.loads(state)) works.
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def decode_chain(self, tokens: list[str]) -> list[str]:
        data = bytearray()
        table = UNICODE_TO_BYTES
        for token in tokens:
            try:
                data.extend([table[char] for char in token])
            except KeyError:
                # A token outside the byte alphabet (an added token, say) keeps its own UTF-8.
                data.extend(token.encode("utf-8"))
        return [data.decode("utf-8", errors="replace")]


_CLEANUPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


def cleanup_tokenization_spaces(text: str) -> str:
    """Undo the spaces BERT-style splitting puts before punctuation: ``'a , b .' -> 'a, b.'``."""
    for dirty, clean in _CLEANUPS:
        text = text.replace(dirty, clean)
    return text


class WordPiece(Decoder):
    """Join WordPiece tokens: ``'##'`` glues to the previous token, other tokens get a space.

    >>> WordPiece().decode(["hello", "##s", ",", "you"])
    'hellos, you'
    """

    _FIELDS = ("prefix", "cleanup")
    _CHECKS = field_checks("WordPiece", prefix=check_str, cleanup=check_bool)

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for i, token in enumerate(tokens):
            if i != 0:
                token = token.replace(self.prefix, "", 1) if token.startswith(self.prefix) else " " + token
            if self.cleanup:
                token = cleanup_tokenization_spaces(token)
            result.append(token)
        return result


def _check_char(owner: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{owner} {name} must be a string of length 1, got {type(value).__name__} {value!r}.")
    if len(value) != 1:
        raise ValueError(f"{owner} {name}: expected a string of length 1, got {value!r}.")
    return value


def _check_scheme(value: Any) -> str:
    if value not in ("always", "first", "never"):
        raise ValueError(f"{value!r} is an unknown variant for the Metaspace prepend_scheme, should be one of ['first', 'never', 'always'].")
    return value


class Metaspace(Decoder):
    """``'▁'`` back to spaces; in the first token it is dropped (it was prepended).

    >>> Metaspace().decode(["▁Hello", "▁world"])
    'Hello world'
    """

    _FIELDS = ("replacement", "prepend_scheme", "split")
    _CHECKS = {**field_checks("Metaspace", replacement=_check_char, split=check_bool), "prepend_scheme": _check_scheme}

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise TokvizError(f"Metaspace replacement: expected a string of length 1 (exactly one character), got {replacement!r}.")
        if prepend_scheme not in ("always", "first", "never"):
            raise TokvizError(f"The Metaspace prepend_scheme must be 'always', 'first' or 'never', not {prepend_scheme!r}.")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for i, token in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                # HF drops every replacement char of the first token, not only the leading one.
                result.append(token.replace(self.replacement, ""))
            else:
                result.append(token.replace(self.replacement, " "))
        return result


class BPEDecoder(Decoder):
    """End-of-word suffix back to a space (none after the last token).

    >>> BPEDecoder().decode(["hel", "lo</w>", "you</w>"])
    'hello you'
    """

    _FIELDS = ("suffix",)
    _CHECKS = field_checks("BPEDecoder", suffix=check_str)

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [token.replace(self.suffix, "" if i == last else " ") for i, token in enumerate(tokens)]


class Replace(Decoder):
    """Replace a string (or a ``tokviz.Regex``) in every token: ``Replace('▁', ' ')``."""

    _CHECKS = field_checks("Replace", content=check_str)

    def __init__(self, pattern: Any, content: str) -> None:
        self.pattern = pattern
        self.content = content
        self._is_regex = not isinstance(pattern, str)
        if self._is_regex:
            source = _regex_source(pattern)
            self._compiled = compile_pattern(source)  # PatternError names a bad pattern
            self._source = source
        else:
            self._source = pattern

    def decode_chain(self, tokens: list[str]) -> list[str]:
        if not self._is_regex:
            if not self._source:
                return list(tokens)
            return [token.replace(self._source, self.content) for token in tokens]
        # A lambda keeps backslashes in the replacement literal, as in HF.
        return [replace_spans(token, match_spans(self._compiled, token), self.content) for token in tokens]

    def to_dict(self) -> dict[str, Any]:
        kind = "Regex" if self._is_regex else "String"
        return {"type": "Replace", "pattern": {kind: self._source}, "content": self.content}


def _regex_source(pattern: Any) -> str:
    for attribute in ("pattern", "source"):
        value = getattr(pattern, attribute, None)
        if isinstance(value, str):
            return value
    return str(pattern)


class Strip(Decoder):
    """Remove up to ``left`` leading and ``right`` trailing ``content`` chars from every token
    (HF's signature; the fragment and the attributes call them ``start`` and ``stop``).

    >>> Strip(content=" ", left=1, right=0).decode([" a", "  b"])
    'a b'
    """

    _FIELDS = ("content", "start", "stop")
    _CHECKS = field_checks("Strip", content=_check_char, start=check_whole, stop=check_whole)

    def __init__(self, content: str = " ", left: int = 0, right: int = 0) -> None:
        self.content = _check_char("Strip", "content", content)
        self.start = check_whole("Strip", "left", left)
        self.stop = check_whole("Strip", "right", right)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for token in tokens:
            head, tail = token[: self.start], token[len(token) - min(self.stop, len(token)):]
            start_cut = len(head) - len(head.lstrip(self.content))  # content chars leading the first `start`
            stop_cut = len(token) - (len(tail) - len(tail.rstrip(self.content)))
            result.append(token[start_cut:stop_cut] if start_cut <= stop_cut else "")
        return result


class CTC(Decoder):
    """Speech models' CTC output back to text: repeated tokens collapse, ``pad_token`` goes,
    and (``cleanup``) the WordPiece cleanup runs and ``word_delimiter_token`` becomes a space.

    >>> CTC().decode(["<pad>", "<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "o", "o", "<pad>"])
    'hello'
    >>> CTC().decode(["h", "i", "|", "y", "o", "u"])
    'hi you'
    """

    _FIELDS = ("pad_token", "word_delimiter_token", "cleanup")
    _CHECKS = field_checks("CTC", pad_token=check_str, word_delimiter_token=check_str, cleanup=check_bool)

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token = pad_token  # (each checked by _CHECKS)
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        previous = None
        for token in tokens:
            if token == previous:  # a repeat of the same frame's token collapses
                continue
            previous = token
            text = token.replace(self.pad_token, "") if self.pad_token else token
            if self.cleanup:
                text = cleanup_tokenization_spaces(text)
                if self.word_delimiter_token:
                    text = text.replace(self.word_delimiter_token, " ")
            if text:
                result.append(text)
        return result


class Fuse(Decoder):
    """Join all tokens into one: ``['a', 'b'] -> ['ab']`` (useful mid-Sequence)."""

    _FIELDS = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


class ByteFallback(Decoder):
    """Byte tokens ``<0xE2><0x96><0x81>`` back to text; an invalid run gives one U+FFFD per byte.

    >>> ByteFallback().decode(["<0x61>", "b", "<0xE2>", "<0x96>", "<0x81>"])
    'ab▁'
    """

    _FIELDS = ()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result: list[str] = []
        pending = bytearray()

        def flush() -> None:
            if pending:
                try:
                    result.append(pending.decode("utf-8"))
                except UnicodeDecodeError:
                    result.extend(["\ufffd"] * len(pending))
                pending.clear()

        for token in tokens:
            byte = _byte_token_value(token)
            if byte is None:
                flush()
                result.append(token)
            else:
                pending.append(byte)
        flush()
        return result


_HEX = frozenset("0123456789abcdefABCDEF")


def _byte_token_value(token: str) -> int | None:
    # HF checks the UTF-8 length (6 bytes), so only ASCII tokens like '<0x41>' qualify.
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">") and token[3] in _HEX and token[4] in _HEX:
        return int(token[3:5], 16)
    return None


class Sequence(Decoder):
    """Run decoders in order, each on the previous one's token list."""

    _CHECKS = {"decoders": lambda v: _check_decoders(v)}

    def __init__(self, decoders: SequenceType[Decoder]) -> None:
        self.decoders = decoders

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_dict() for d in self.decoders]}


class DecodeStreamError(TokvizError):
    """The decoded text of the stream no longer starts with what was already returned."""


class DecodeStream:
    """Decode ids one at a time, as a generation loop produces them (HF's ``DecodeStream``).

    ``step(tokenizer, id)`` returns the new text, or ``None`` while the ids so far end in
    an incomplete character (a byte token waiting for the rest of its UTF-8 sequence).
    Each step decodes only the ids since the last returned text, plus the few before it
    that give the decoder its context (the space a ``'Ġ'`` or ``'▁'`` stands for).

    >>> from tokviz import Tokenizer, models, decoders
    >>> tokenizer = Tokenizer(models.WordLevel({"▁Hello": 0, "▁world": 1}, unk_token="▁Hello"))
    >>> tokenizer.decoder = decoders.Metaspace()
    >>> stream = DecodeStream()
    >>> [stream.step(tokenizer, id) for id in [0, 1]]
    ['Hello', ' world']
    """

    def __init__(self, ids: SequenceType[int] | None = None, skip_special_tokens: bool = False) -> None:
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids: list[int] = list(ids or ())
        self._prefix = ""
        self._prefix_index = 0
        self._primed = not self._ids

    def step(self, tokenizer: Any, id: int | SequenceType[int]) -> str | None:
        """Feed one id (or a list of ids); the text they complete, or ``None``."""
        if not self._primed:  # ids given up front are context, never returned
            self._prefix = tokenizer.decode(self._ids, skip_special_tokens=self.skip_special_tokens)
            self._prefix_index = len(self._ids)
            self._primed = True
        if isinstance(id, int):
            self._ids.append(id)
        elif isinstance(id, (list, tuple)) and all(isinstance(item, int) for item in id):
            self._ids.extend(id)
        else:
            raise TypeError(f"DecodeStream.step takes an id or a list of ids (whole numbers), got {type(id).__name__} {id!r:.60}.")
        text = tokenizer.decode(self._ids, skip_special_tokens=self.skip_special_tokens)
        if len(text.encode("utf-8")) <= len(self._prefix.encode("utf-8")) or text.endswith("\ufffd"):
            return None
        if not text.startswith(self._prefix):
            raise DecodeStreamError(
                f"Invalid prefix encountered: the decoded text {text!r:.60} no longer starts with {self._prefix!r:.60}."
            )
        new_text = text[len(self._prefix):]
        new_prefix_index = len(self._ids) - self._prefix_index
        self._ids = self._ids[self._prefix_index:]
        self._prefix = tokenizer.decode(self._ids, skip_special_tokens=self.skip_special_tokens)
        self._prefix_index = new_prefix_index
        return new_text

    def __copy__(self) -> "DecodeStream":
        """An independent stream at the same point (HF's copies keep their own ids)."""
        twin = DecodeStream.__new__(DecodeStream)
        twin.__dict__.update(self.__dict__)
        twin._ids = list(self._ids)
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> "DecodeStream":
        return self.__copy__()

    def __repr__(self) -> str:
        return f"DecodeStream(skip_special_tokens={self.skip_special_tokens})"


def _check_decoders(decoders: Any) -> list[Decoder]:
    """A list of decoders (HF's ``TypeError`` for anything else)."""
    if isinstance(decoders, (str, bytes)) or not hasattr(decoders, "__iter__"):
        raise TypeError(f"decoders.Sequence takes a list of decoders, got {type(decoders).__name__} {decoders!r:.60}.")
    items = list(decoders)
    for item in items:
        if not callable(getattr(item, "decode_chain", None)):
            raise TypeError(f"decoders.Sequence takes decoders, got {type(item).__name__} {item!r:.60}.")
    return items


_TYPES = {kind.__name__: kind for kind in (ByteLevel, WordPiece, Metaspace, BPEDecoder, Replace, Strip, Fuse, ByteFallback, CTC, Sequence)}


def from_dict(data: dict[str, Any] | None) -> Decoder | None:
    """Build a decoder from its tokenizer.json section (None stays None)."""
    if data is None:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "Metaspace" and data.get("prepend_scheme") is None:  # files older than HF 0.15: add_prefix_space
            data = {**data, "prepend_scheme": "always" if data.get("add_prefix_space", True) else "never"}
        if kind == "Replace":
            pattern = data["pattern"]
            if "String" in pattern:
                return Replace(pattern["String"], data["content"])
            return Replace(Regex(pattern["Regex"]), data["content"])
        if kind == "Strip":
            return Strip(data.get("content", " "), data.get("start", 0), data.get("stop", 0))
        if kind == "Sequence":
            return Sequence([from_dict(item) for item in data["decoders"]])  # type: ignore[misc]
        if kind in _TYPES:
            return _TYPES[kind].from_fields(data)
    except (KeyError, TypeError) as error:
        raise SerializationError(f"The decoder {kind!r} in this tokenizer.json is malformed ({error}).") from error
    raise SerializationError(f"tokviz cannot represent the decoder {kind!r} (it knows {', '.join(_TYPES)}).")


# HF's compiled submodule is reachable as ``tokenizers.decoders.decoders``; here it is this module.
decoders = sys.modules[__name__]
