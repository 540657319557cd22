"""What a pipeline component described by its tokenizer.json fragment shares.

Post-processors and decoders are plain classes whose identity is their ``to_dict()``: two
components are equal when they would serialize the same, and they print as their options.

>>> class Strip(JsonComponent):
...     def to_dict(self):
...         return {"type": "Strip", "content": " ", "start": 1}
>>> Strip(), Strip() == Strip()
(Strip(content=' ', start=1), True)
"""

from __future__ import annotations

from typing import Any


class JsonComponent:
    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable: not hashable, as before

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self.to_dict().items() if key != "type")
        return f"{type(self).__name__}({fields})"
