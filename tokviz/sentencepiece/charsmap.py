"""Compile normalization rules into a precompiled charsmap, the form a ``.model`` holds them in.

A charsmap is ``uint32 trie_size`` + a Darts-clone double-array trie over the UTF-8 bytes of the
rule sources + the NUL-terminated targets (see :mod:`tokviz.sentencepiece.normalizer`, which reads
it). In the double array, the node at ``pos`` has its children at ``base ^ label`` with
``base = pos ^ offset(unit[pos])``; a child's unit holds its label in the low 8 bits, bit 8 says
that the node ends a key, and then the unit at ``base`` (label 0) holds the target's offset with
bit 31 set. Compiling places each node's children at the first free ``base`` (breadth first),
every base used once, so no lookup can land on another node's child with the same label.

    >>> blob = compile_charsmap({"ab": "x", "a": "y"})
    >>> from tokviz.sentencepiece.normalizer import parse_charsmap
    >>> sorted(parse_charsmap(blob).items())
    [('a', 'y'), ('ab', 'x')]

sentencepiece (the C++ library) reads these charsmaps too: the tests train with one and compare.
This version places nodes with a plain first-fit search, fine for user maps and TSVs of a few
thousand rules (the built-in NFKC rules ship precompiled).
"""

from __future__ import annotations

import os
import struct
from collections import deque
from typing import Mapping

__all__ = ["compile_charsmap", "read_rule_tsv"]

_LEAF = 1 << 31
_HAS_LEAF = 1 << 8


def _encode_offset(offset: int) -> int:
    if offset < 1 << 21:
        return offset << 10
    if offset < 1 << 29 and not offset & 0xFF:
        return (offset << 2) | (1 << 9)
    raise ValueError("the normalization rules are too many to compile into one charsmap.")


def compile_charsmap(rules: Mapping[str, str]) -> bytes:
    """``{source: target}`` -> precompiled charsmap bytes (empty rules: ``b""``, the identity)."""
    if not rules:
        return b""
    blob = bytearray()
    value_at: dict[bytes, int] = {}
    trie: dict = {}
    for source in sorted(rules):
        if not source:
            raise ValueError("a normalization rule has an empty source.")
        target = rules[source].encode("utf-8")
        if target not in value_at:
            value_at[target] = len(blob)
            blob += target + b"\0"
        node = trie
        for byte in source.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[-1] = value_at[target]  # (-1: the key ends here, with this target)
    units: list[int] = [0]
    used = {0}
    bases: set[int] = set()
    queue: deque[tuple[int, dict]] = deque([(0, trie)])
    search_from = 1
    while queue:
        pos, node = queue.popleft()
        labels = sorted(label for label in node if label >= 0)
        if -1 in node:
            labels = [0, *labels]
        if not labels:
            continue
        while search_from in used:
            search_from += 1
        # first fit: the first free slot for the first label decides the base
        free = search_from
        while True:
            base = free ^ labels[0]
            if base not in bases and not any((base ^ label) in used for label in labels[1:]):
                break
            free += 1
            while free in used:
                free += 1
        bases.add(base)
        needed = max(base ^ label for label in labels) + 1
        if needed > len(units):
            units.extend([0] * (needed - len(units)))
        units[pos] |= _encode_offset(pos ^ base)
        if -1 in node:
            units[pos] |= _HAS_LEAF
            units[base] = _LEAF | node[-1]
            used.add(base)
        used.add(free)
        for label in labels:
            if label == 0:
                continue
            child = base ^ label
            units[child] = label
            used.add(child)
            queue.append((child, node[label]))
    units.extend([0] * (-len(units) % 256))  # (sentencepiece reads tries in blocks of 256 units)
    trie_bytes = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie_bytes)) + trie_bytes + bytes(blob)


def read_rule_tsv(path: str | os.PathLike) -> dict[str, str]:
    """sentencepiece's normalization TSV: ``41 42<TAB>43`` maps "AB" to "C" (code points in hex; ``#`` comments)."""
    rules: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise ValueError(f"{os.fspath(path)}:{number}: a rule is 'source<TAB>target' in hex code points.")
            try:
                source = "".join(chr(int(code, 16)) for code in fields[0].split())
                target = "".join(chr(int(code, 16)) for code in fields[1].split())
            except ValueError:
                raise ValueError(f"{os.fspath(path)}:{number}: {line!r} is not hex code points.") from None
            if not source:
                raise ValueError(f"{os.fspath(path)}:{number}: a rule has an empty source.")
            rules[source] = target
    return rules
