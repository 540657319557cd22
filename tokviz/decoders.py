"""Decoders: tokens back to text, undoing what the pre-tokenizer and model did to spaces.

Each decoder is HF's: ``decode_chain(tokens) -> tokens`` rewrites the token list (so decoders
compose in a :class:`Sequence`), and ``decode(tokens)`` joins the chain's output::

    ByteLevel   ['Hello', 'Ġw', 'orld']       -> 'Hello world'   (GPT-2 byte symbols -> UTF-8)
    WordPiece   ['hello', '##s', ',', 'you']  -> 'hellos, you'   ('##' glues, cleanup fixes ' ,')
    Metaspace   ['▁Hello', '▁world']          -> 'Hello world'   ('▁' -> ' ', first one dropped)
    BPEDecoder  ['hel', 'lo</w>', 'you</w>']  -> 'hello you'     (suffix -> ' ', last one dropped)

What this version leaves out: the CTC decoder (speech models).
"""

from __future__ import annotations

from typing import Any, Sequence as SequenceType

from tokviz._component import JsonComponent
from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.errors import SerializationError
from tokviz.patterns import compile_pattern, match_spans


class Decoder(JsonComponent):
    """Base class: subclasses implement ``decode_chain``."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: SequenceType[str]) -> str:
        return "".join(self.decode_chain(list(tokens)))


class ByteLevel(Decoder):
    """GPT-2 byte symbols back to UTF-8 text; invalid byte sequences become U+FFFD.

    >>> ByteLevel().decode(["Hello", "Ġw", "orld", "Ġê°Ģ"])
    'Hello world 가'
    """

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        # Unused when decoding; kept because HF serializes one ByteLevel config for all roles.
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }


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

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = str(prefix)
        self.cleanup = bool(cleanup)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for i, token in enumerate(tokens):
            if i != 0:
                token = token.replace(self.prefix, "", 1) if token.startswith(self.prefix) else " " + token
            if self.cleanup:
                token = cleanup_tokenization_spaces(token)
            result.append(token)
        return result

    def to_dict(self) -> dict[str, Any]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


class Metaspace(Decoder):
    """``'▁'`` back to spaces; in the first token it is dropped (it was prepended).

    >>> Metaspace().decode(["▁Hello", "▁world"])
    'Hello world'
    """

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            from tokviz.errors import TokvizError

            raise TokvizError(f"The Metaspace replacement must be a single character, not {replacement!r}.")
        if prepend_scheme not in ("always", "first", "never"):
            from tokviz.errors import TokvizError

            raise TokvizError(f"The Metaspace prepend_scheme must be 'always', 'first' or 'never', not {prepend_scheme!r}.")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for i, token in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                # HF drops every replacement char of the first token, not only the leading one.
                result.append(token.replace(self.replacement, ""))
            else:
                result.append(token.replace(self.replacement, " "))
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split,
        }


class BPEDecoder(Decoder):
    """End-of-word suffix back to a space (none after the last token).

    >>> BPEDecoder().decode(["hel", "lo</w>", "you</w>"])
    'hello you'
    """

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = str(suffix)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [token.replace(self.suffix, "" if i == last else " ") for i, token in enumerate(tokens)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "BPEDecoder", "suffix": self.suffix}


class Replace(Decoder):
    """Replace a string (or a ``tokviz.Regex``) in every token: ``Replace('▁', ' ')``."""

    def __init__(self, pattern: Any, content: str) -> None:
        self.pattern = pattern
        self.content = str(content)
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
        return [_replace_spans(token, match_spans(self._compiled, token), self.content) for token in tokens]

    def to_dict(self) -> dict[str, Any]:
        kind = "Regex" if self._is_regex else "String"
        return {"type": "Replace", "pattern": {kind: self._source}, "content": self.content}


def _replace_spans(text: str, spans: list[tuple[int, int]], content: str) -> str:
    # Spliced by hand so backslashes in ``content`` stay literal, as in HF.
    if not spans:
        return text
    parts = []
    previous = 0
    for start, end in spans:
        parts.append(text[previous:start])
        parts.append(content)
        previous = end
    parts.append(text[previous:])
    return "".join(parts)


def _regex_source(pattern: Any) -> str:
    for attribute in ("pattern", "source"):
        value = getattr(pattern, attribute, None)
        if isinstance(value, str):
            return value
    return str(pattern)


class Strip(Decoder):
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` chars from every token.

    >>> Strip(" ", 1, 0).decode([" a", "  b"])
    'a b'
    """

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        self.content = str(content)
        self.start = int(start)
        self.stop = int(stop)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        result = []
        for token in tokens:
            start_cut = 0
            for i, char in enumerate(token[: self.start]):
                if char != self.content:
                    break
                start_cut = i + 1
            stop_cut = len(token)
            for i in range(min(self.stop, len(token))):
                index = len(token) - i - 1
                if token[index] != self.content:
                    break
                stop_cut = index
            result.append(token[start_cut:stop_cut] if start_cut <= stop_cut else "")
        return result

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


class Fuse(Decoder):
    """Join all tokens into one: ``['a', 'b'] -> ['ab']`` (useful mid-Sequence)."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Fuse"}


class ByteFallback(Decoder):
    """Byte tokens ``<0xE2><0x96><0x81>`` back to text; an invalid run gives one U+FFFD per byte.

    >>> ByteFallback().decode(["<0x61>", "b", "<0xE2>", "<0x96>", "<0x81>"])
    'ab▁'
    """

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

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ByteFallback"}


_HEX = frozenset("0123456789abcdefABCDEF")


def _byte_token_value(token: str) -> int | None:
    # HF checks the UTF-8 length (6 bytes), so only ASCII tokens like '<0x41>' qualify.
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">") and token[3] in _HEX and token[4] in _HEX:
        return int(token[3:5], 16)
    return None


class Sequence(Decoder):
    """Run decoders in order, each on the previous one's token list."""

    def __init__(self, decoders: SequenceType[Decoder]) -> None:
        self.decoders = list(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_dict() for d in self.decoders]}


_TYPES = ("ByteLevel", "WordPiece", "Metaspace", "BPEDecoder", "Replace", "Strip", "Fuse", "ByteFallback", "Sequence")


def from_dict(data: dict[str, Any] | None) -> Decoder | None:
    """Build a decoder from its tokenizer.json section (None stays None)."""
    if data is None:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "ByteLevel":
            return ByteLevel(data.get("add_prefix_space", True), data.get("trim_offsets", True), data.get("use_regex", True))
        if kind == "WordPiece":
            return WordPiece(data.get("prefix", "##"), data.get("cleanup", True))
        if kind == "Metaspace":
            scheme = data.get("prepend_scheme")
            if scheme is None:  # files older than HF 0.15 store add_prefix_space instead
                scheme = "always" if data.get("add_prefix_space", True) else "never"
            return Metaspace(data.get("replacement", "▁"), scheme, data.get("split", True))
        if kind == "BPEDecoder":
            return BPEDecoder(data.get("suffix", "</w>"))
        if kind == "Replace":
            pattern = data["pattern"]
            if "String" in pattern:
                return Replace(pattern["String"], data["content"])
            from tokviz.patterns import Regex

            return Replace(Regex(pattern["Regex"]), data["content"])
        if kind == "Strip":
            return Strip(data.get("content", " "), data.get("start", 0), data.get("stop", 0))
        if kind == "Fuse":
            return Fuse()
        if kind == "ByteFallback":
            return ByteFallback()
        if kind == "Sequence":
            return Sequence([from_dict(item) for item in data["decoders"]])  # type: ignore[misc]
    except (KeyError, TypeError) as error:
        raise SerializationError(f"The decoder {kind!r} in this tokenizer.json is malformed ({error}).") from error
    raise SerializationError(f"tokviz cannot represent the decoder {kind!r} (it knows {', '.join(_TYPES)}).")

