"""``sentencepiece.SentencePieceNormalizer``: a model's (or a rule's, or your map's) normalization on its own.

    >>> n = SentencePieceNormalizer(rule_name="nmt_nfkc")
    >>> n.normalize("  Ｈｅｌｌｏ   world ")
    '▁Hello▁world'
    >>> SentencePieceNormalizer(norm_map=[("foo", "bar")], add_dummy_prefix=False).normalize("a foo")
    'a▁bar'

The rules come from one of ``model_file`` / ``model_proto`` (a ``.model``: its normalizer spec),
``normalizer_spec`` (a serialized ``NormalizerSpec``), ``rule_name`` (a built-in rule), ``rule_tsv``
(a file of ``source<TAB>target`` code points in hex, sentencepiece's normalization TSV) or
``norm_map`` (``[(source, target), ...]``). The flags ``add_dummy_prefix``, ``escape_whitespaces``,
``remove_extra_whitespaces`` (and ``treat_whitespace_as_suffix``) keep the spec's values unless
given; given ones are written into :meth:`serialized_normalizer_spec`. A map or TSV is compiled into
a precompiled charsmap (:func:`~tokviz.sentencepiece.charsmap.compile_charsmap`), the form a
``.model`` holds, so the spec can train a model (``SentencePieceTrainer.train(normalizer=n)``).
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from tokviz.sentencepiece.charsmap import compile_charsmap, read_rule_tsv
from tokviz.sentencepiece.model_proto import ModelProto, NormalizerSpec
from tokviz.sentencepiece.normalizer import RULE_NAMES, SentencePieceNormalizer as _Normalizer
from tokviz.sentencepiece.normalizer import charsmap_for_rule, parse_charsmap
from tokviz.sentencepiece.processor import normalize_like_sentencepiece

__all__ = ["SentencePieceNormalizer"]

_FLAGS = ("add_dummy_prefix", "escape_whitespaces", "remove_extra_whitespaces")


def _text(value: Any, what: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"the {what} {bytes(value)!r} of the normalization map is not valid UTF-8.") from None
    if not isinstance(value, str):
        raise TypeError(f"the normalization map holds pairs of str (or UTF-8 bytes), not {type(value).__name__}.")
    return value


def _check_map(pairs: Iterable[Any]) -> dict[str, str]:
    rules: dict[str, str] = {}
    for pair in pairs:
        source, target = pair
        source, target = _text(source, "source"), _text(target, "target")
        if not source:
            raise ValueError("the normalization map has an empty source.")
        if source == target:
            raise ValueError(f"the normalization map maps {source!r} to itself.")
        if source in rules:
            raise ValueError(f"the normalization map has {source!r} twice.")
        rules[source] = target
    return rules


class SentencePieceNormalizer:
    """Normalize text as a SentencePiece model does (see the module docstring)."""

    def __init__(self, model_file: str | os.PathLike | None = None, model_proto: bytes | None = None,
                 normalizer_spec: bytes | None = None, rule_tsv: str | os.PathLike | None = None,
                 rule_name: str | None = None, norm_map: Iterable[Any] | None = None,
                 add_dummy_prefix: bool | None = None, escape_whitespaces: bool | None = None,
                 remove_extra_whitespaces: bool | None = None, treat_whitespace_as_suffix: bool | None = None) -> None:
        sources = [x for x in (model_file, model_proto, normalizer_spec, rule_tsv, rule_name, norm_map) if x is not None]
        if len(sources) > 1:
            raise ValueError("give one of model_file, model_proto, normalizer_spec, rule_tsv, rule_name and norm_map.")
        suffix = False
        if model_file is not None or model_proto is not None:
            if model_file is not None:
                with open(model_file, "rb") as handle:
                    model_proto = handle.read()
            proto = ModelProto.from_bytes(model_proto)  # type: ignore[arg-type]
            spec = proto.normalizer_spec
            suffix = bool(proto.trainer_spec.treat_whitespace_as_suffix)
        elif normalizer_spec is not None:
            spec = NormalizerSpec.from_bytes(bytes(normalizer_spec))
        elif rule_name is not None:
            if rule_name not in RULE_NAMES:
                raise ValueError(f"unknown normalization rule {rule_name!r}; choose one of {', '.join(RULE_NAMES)}.")
            spec = NormalizerSpec(name=rule_name, precompiled_charsmap=charsmap_for_rule(rule_name))
        elif rule_tsv is not None:
            spec = NormalizerSpec(name="user_defined", precompiled_charsmap=compile_charsmap(read_rule_tsv(rule_tsv)))
        elif norm_map is not None:
            spec = NormalizerSpec(name="user_defined", precompiled_charsmap=compile_charsmap(_check_map(norm_map)))
        else:
            spec = NormalizerSpec(name="nmt_nfkc", precompiled_charsmap=charsmap_for_rule("nmt_nfkc"))
        given = {name: bool(value) for name, value in zip(_FLAGS, (add_dummy_prefix, escape_whitespaces,
                                                                    remove_extra_whitespaces)) if value is not None}
        if given:
            spec = spec.replace(**given)
        if treat_whitespace_as_suffix is not None:
            suffix = bool(treat_whitespace_as_suffix)
        self._spec: NormalizerSpec = spec
        self._normalizer = _Normalizer(spec.precompiled_charsmap, add_dummy_prefix=spec.add_dummy_prefix,
                                       remove_extra_whitespaces=spec.remove_extra_whitespaces,
                                       escape_whitespaces=spec.escape_whitespaces, treat_whitespace_as_suffix=suffix)
        self._given_flags = tuple(given)

    @property
    def spec(self) -> NormalizerSpec:
        """The :class:`NormalizerSpec` (tokviz addition)."""
        return self._spec

    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        return normalize_like_sentencepiece(self._normalizer, input, bool(with_offsets))

    def serialized_normalizer_spec(self) -> bytes:
        return self._spec.to_bytes()

    def Decompile(self) -> list[tuple[str, str]]:
        """The rules as ``[(source, target), ...]``, sorted by source."""
        return sorted(parse_charsmap(self._spec.precompiled_charsmap).items())

    normalize = Normalize
    decompile = Decompile
