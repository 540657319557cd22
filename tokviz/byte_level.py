"""The GPT-2 byte <-> unicode table, shared by the ByteLevel pre-tokenizer and decoder.

Byte-level BPE works on UTF-8 bytes, but its vocabulary is stored as text. GPT-2 maps
each of the 256 byte values to one printable character: the 188 bytes that are already
printable Latin-1 characters map to themselves, the other 68 (controls, space, ...) map
to code points 256, 257, ... in byte order. So space (0x20) becomes 'Ġ' (U+0120) and
newline (0x0A) becomes 'Ċ' (U+010A).

>>> BYTES_TO_UNICODE[ord(" ")], BYTES_TO_UNICODE[ord("\\n")], BYTES_TO_UNICODE[ord("a")]
('Ġ', 'Ċ', 'a')
>>> bytes_to_symbols("a가".encode("utf-8"))
'aê°Ģ'
>>> symbols_to_bytes("aê°Ģ").decode("utf-8")
'a가'
"""

from __future__ import annotations


def _build_bytes_to_unicode() -> dict[int, str]:
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {byte: chr(byte) for byte in printable}
    next_code_point = 256
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(next_code_point)
            next_code_point += 1
    return dict(sorted(table.items()))


BYTES_TO_UNICODE: dict[int, str] = _build_bytes_to_unicode()
UNICODE_TO_BYTES: dict[str, int] = {symbol: byte for byte, symbol in BYTES_TO_UNICODE.items()}


#: str.translate table of the ASCII chars whose symbol is not the char itself (controls, space,
#: DEL): ``word.translate(ASCII_TO_SYMBOLS)`` maps an ASCII word without a UTF-8 round trip.
ASCII_TO_SYMBOLS = {byte: symbol for byte, symbol in BYTES_TO_UNICODE.items() if byte < 128 and symbol != chr(byte)}


def bytes_to_symbols(data: bytes) -> str:
    """Map raw bytes to their byte-level symbols, one symbol per byte."""
    return data.decode("latin-1").translate(BYTES_TO_UNICODE)  # (a byte decoded as latin-1 is the char of its value)


def text_to_symbols(text: str) -> str:
    """UTF-8 encode ``text`` and map each byte to its symbol: ``'a b' -> 'aĠb'``."""
    if text.isascii():
        # One symbol per char: printable ASCII is its own symbol but for the space (no round trip).
        return text.replace(" ", "Ġ") if text.isprintable() else text.translate(ASCII_TO_SYMBOLS)
    return bytes_to_symbols(text.encode("utf-8"))


def symbols_to_bytes(symbols: str) -> bytes:
    """Inverse of :func:`bytes_to_symbols`. Characters outside the table raise ``KeyError``."""
    return bytes(UNICODE_TO_BYTES[symbol] for symbol in symbols)


def alphabet() -> list[str]:
    """All 256 byte-level symbols, in byte order."""
    return list(BYTES_TO_UNICODE.values())
