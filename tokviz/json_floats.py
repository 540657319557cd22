"""JSON numbers as HF ``tokenizers`` reads them from a tokenizer.json.

HF parses tokenizer.json with serde_json built without its ``float_roundtrip`` feature: a
number's digits are gathered into a 64-bit integer (digits past what it holds are dropped),
converted to a float, then multiplied or divided by a power of ten. Two roundings, so the
float is not always the nearest one to the literal: a Unigram score HF itself wrote as
``-3.6622784482770996`` is read back as ``-3.662278448277099`` (one unit in the last place
less). About a quarter of a real Unigram vocabulary's scores come out so, and where two
segmentations of a word tie to the last bit HF's pick follows the floats it holds (a run of
dots under ALBERT's vocabulary: 1 line in 106,852 of the shared corpora). Python's
``float()`` rounds once, so tokviz reads the literals of a Unigram model's scores here,
as HF does.

>>> serde_float("-3.6622784482770996"), float("-3.6622784482770996")
(-3.662278448277099, -3.6622784482770996)
>>> serde_float("1.5e-3"), serde_float("-0.0"), serde_float("123456789012345678901.5")
(0.0015, -0.0, 1.2345678901234567e+20)
"""

from __future__ import annotations

import json
from itertools import repeat
from operator import sub, truediv
from typing import Any

#: serde_json's table of powers of ten (each literal rounded once, as Python's float() does).
_POW10 = tuple(float(f"1e{k}") for k in range(309))
_POW10_SHIFTED = (0.0, *_POW10)  # [k + 1] = 10**k
_U64_MAX = 2**64 - 1
_U64_MAX_TENTH = (2**64 - 1) // 10  # serde_json's overflow test: significand * 10 + digit > u64::MAX
_U64_MAX_LAST = (2**64 - 1) % 10
_I32_MAX = 2**31 - 1


class JsonNumber(str):
    """The literal of a JSON number with a fraction or an exponent, as ``json.loads(text,
    parse_float=JsonNumber)`` leaves it, for :func:`hf_floats` to read as HF does."""

    __slots__ = ()


class JsonNumberError(ValueError):
    """A number HF refuses to read (too large for a float)."""


def _overflows(significand: int, digit: int) -> bool:
    return significand >= _U64_MAX_TENTH and (significand > _U64_MAX_TENTH or digit > _U64_MAX_LAST)


def serde_float(text: str) -> float:
    """One JSON number literal read as serde_json reads it (see the module's docstring)."""
    size = len(text)
    negative = text.startswith("-")
    index = 1 if negative else 0
    significand = 0
    exponent = 0
    overflowed = False
    while index < size and "0" <= text[index] <= "9":
        digit = ord(text[index]) - 48
        if overflowed or _overflows(significand, digit):
            overflowed = True  # the integer part's further digits only scale it
            exponent += 1
        else:
            significand = significand * 10 + digit
        index += 1
    if index < size and text[index] == ".":
        index += 1
        dropping = False
        while index < size and "0" <= text[index] <= "9":
            digit = ord(text[index]) - 48
            if dropping or _overflows(significand, digit):
                dropping = True  # the fraction's digits past 64 bits are ignored
            else:
                significand = significand * 10 + digit
                exponent -= 1
            index += 1
    if index < size and text[index] in "eE":
        index += 1
        positive_exponent = True
        if index < size and text[index] in "+-":
            positive_exponent = text[index] == "+"
            index += 1
        written = 0
        while index < size and "0" <= text[index] <= "9":
            digit = ord(text[index]) - 48
            if written >= _I32_MAX // 10 and (written > _I32_MAX // 10 or digit > _I32_MAX % 10):
                if significand and positive_exponent:
                    raise JsonNumberError(f"The number {text} is out of range.")
                return -0.0 if negative else 0.0
            written = written * 10 + digit
            index += 1
        exponent = exponent + written if positive_exponent else exponent - written
        exponent = max(-(2**31), min(_I32_MAX, exponent))  # (saturating, as in i32 arithmetic)
    value = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            if exponent >= 0:
                value *= _POW10[exponent]
                if value == float("inf"):
                    raise JsonNumberError(f"The number {text} is out of range.")
            else:
                value /= _POW10[-exponent]
            break
        if value == 0.0:
            break
        if exponent >= 0:
            raise JsonNumberError(f"The number {text} is out of range.")
        value /= 1e308
        exponent += 308
    return -value if negative else value


def hf_floats(values: list[Any]) -> list[float]:
    """Numbers of a parsed tokenizer.json as HF holds them: :class:`JsonNumber` literals read
    as serde_json does, other values by ``float()`` (ints, and floats made elsewhere).

    The common case in C: literals ``-d.ddd`` whose digits fit 64 bits are one integer
    divided by a power of ten, as serde_json computes them (no slower than ``float()`` of
    the literals, which parses each one exactly).

    >>> hf_floats([JsonNumber("-3.6622784482770996"), -2, 0.5, JsonNumber("2e-1")])
    [-3.662278448277099, -2.0, 0.5, 0.2]
    """
    if not values:
        return []
    if set(map(type, values)) != {JsonNumber}:
        return [serde_float(value) if isinstance(value, JsonNumber) else float(value) for value in values]
    literals = values  # (str's methods read the JsonNumbers as they are: a copy to plain strs cost more than it saved)
    joined = "".join(literals)
    if "e" in joined or "E" in joined or joined.count(".") != len(literals):
        return list(map(serde_float, values))
    significands = list(map(int, map(str.replace, literals, repeat("."), repeat(""))))
    if max(significands) > _U64_MAX or min(significands) < -_U64_MAX:
        return list(map(serde_float, values))
    # (len - position of the point) is one more than the count of fraction digits.
    fraction_sizes = list(map(sub, map(len, literals), map(str.find, literals, repeat("."))))
    if max(fraction_sizes) > len(_POW10):
        return list(map(serde_float, values))
    floats = list(map(truediv, map(float, significands), map(_POW10_SHIFTED.__getitem__, fraction_sizes)))
    if 0.0 in floats:  # "-0.0": serde_json negates the float, so the zero keeps its sign
        index = floats.index(0.0)
        while True:
            floats[index] = serde_float(literals[index])
            try:
                index = floats.index(0.0, index + 1)
            except ValueError:
                break
    return floats


def _plain_numbers(value: Any) -> Any:
    """``value`` with every :class:`JsonNumber` in it read as HF does."""
    if isinstance(value, JsonNumber):
        return serde_float(value)
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list, JsonNumber)):
                value[key] = _plain_numbers(item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, (dict, list, JsonNumber)):
                value[index] = _plain_numbers(item)
    return value


def loads_tokenizer_json(text: str) -> Any:
    """``json.loads`` of a tokenizer.json, its floats read as HF reads them. A Unigram
    model's scores stay :class:`JsonNumber` literals (``Unigram.from_dict`` reads them all
    at once with :func:`hf_floats`); any other float is read here. Other files are parsed
    as usual (serde's floats matter only to Unigram scores).

    >>> data = loads_tokenizer_json('{"model": {"type": "Unigram", "vocab": [["a", -3.6622784482770996]]}, "x": [0.5]}')
    >>> type(data["model"]["vocab"][0][1]).__name__, data["x"]
    ('JsonNumber', [0.5])
    """
    if "Unigram" not in text:
        return json.loads(text)
    data = json.loads(text, parse_float=JsonNumber)
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "Unigram") != "Unigram" or not isinstance(model.get("vocab"), list):
        return json.loads(text)  # (a word "Unigram" in another kind of file: read it again, plainly)
    for key, item in data.items():
        if key != "model":
            data[key] = _plain_numbers(item)
    for key, item in model.items():
        if key != "vocab":
            model[key] = _plain_numbers(item)
    return data
