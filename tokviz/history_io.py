"""Training histories as JSON, both ways: what the CLI writes and the app opens ("open a training").

A history is saved as one JSON object (never a pickle: loading builds only the record types
below, field by field, and executes nothing from the file)::

    {"format": "tokviz-training-history", "version": 1, "type": "bpe",
     "strings": ["h", "u", "g", "ug", "hug", ...],           # every token string, once
     "history": {"algorithm": "BPE", "vocab": [0, 1, 2, 3, 4],
                 "merges": [[0, 1, 2, 3, 20, 20.0, 5, [0, 2, 5.0]], ...], ...}}

Token strings are written once, in ``strings``; records refer to them by index (a merge is
``[rank, left, right, token, count, score, vocab_size, [left, right, score, ...]]``), so a
50,000-merge history does not repeat its tokens a dozen times. Non-finite floats (a Unigram
trainer's ``<UNK>`` score is NaN) are written as the strings ``"nan"``, ``"inf"``, ``"-inf"``,
so the file is strict JSON. The final model is not written when the record derives it
(``model_at(max_vocab_size)``, checked when saving); otherwise its tokenizer.json section is.

>>> from tokviz.models.bpe.trainer import BpeTrainer
>>> history = BpeTrainer(vocab_size=7, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
>>> again = loads(dumps(history))
>>> [(step.left, step.right, step.count) for step in again.merges]
[('u', 'g', 20), ('h', 'ug', 15)]
>>> again.model_at(6).tokenize("hugs")[0].value
'h'
>>> loads('{"format": "tokviz-training-history", "version": 99}')
Traceback (most recent call last):
...
tokviz.history_io.HistoryFormatError: This training history is version 99; this tokviz reads versions up to 1. Update tokviz to open it.

Covered: BPE, WordPiece (both scorings), Unigram (em and course: EM steps, prune rounds,
snapshots), WordLevel, and :class:`tokviz.sentencepiece.SentencePieceHistory` (its ``.model``
is embedded as base64, the format sentencepiece itself writes), with the app's char/word
SentencePiece trainings (``tokviz.training.WholePieceHistory``, type ``"sentencepiece-whole"``).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gc
import json
import math
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from tokviz.errors import TokvizError
from tokviz.history import EmStep, MergeStep, PruneRound, TrainingHistory, WordCountSummary

__all__ = ["HistoryFormatError", "OpenedTraining", "dumps", "loads", "save", "load", "loads_training", "load_training",
           "FORMAT", "VERSION", "MAX_HISTORY_BYTES"]

FORMAT = "tokviz-training-history"
VERSION = 1
#: Largest history file :func:`load` / :func:`loads` accept (BPE histories take about 170 bytes
#: per merge: 50,000 merges, about 9 MB). Set ``TOKVIZ_MAX_HISTORY_JSON_MB`` to change it.
MAX_HISTORY_BYTES = int(float(os.environ.get("TOKVIZ_MAX_HISTORY_JSON_MB", "200")) * 1024 * 1024)


class HistoryFormatError(TokvizError):
    """A file that is not a tokviz training history, or one that is damaged; the message says what is wrong."""


# --------------------------------------------------------------------------- the record types


def _history_types() -> dict[str, type]:
    from tokviz.models.bpe.trainer import BpeTrainingHistory
    from tokviz.models.unigram.trainer import UnigramTrainingHistory
    from tokviz.models.wordlevel.trainer import WordLevelTrainingHistory
    from tokviz.models.wordpiece.trainer import WordPieceTrainingHistory
    from tokviz.sentencepiece.trainer import SentencePieceHistory

    types = {
        "bpe": BpeTrainingHistory,
        "wordpiece": WordPieceTrainingHistory,
        "unigram": UnigramTrainingHistory,
        "wordlevel": WordLevelTrainingHistory,
        "sentencepiece": SentencePieceHistory,
    }
    try:  # the app's SentencePiece char/word trainings: the same fields, a model_at(k) that is a tokviz model
        from tokviz.training import WholePieceHistory
    except ImportError:
        pass
    else:
        types["sentencepiece-whole"] = WholePieceHistory
    return types


def _type_name(history: Any) -> str:
    for name, cls in _history_types().items():
        if type(history) is cls:
            return name
    raise HistoryFormatError(f"tokviz cannot save a {type(history).__name__} as a training history.")


# --------------------------------------------------------------------------- writing


class _Writer:
    """Interns token strings: ``token("ug") -> 3`` the first time, the same index afterwards."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def token(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.strings)
            self.strings.append(text)
        return index

    def tokens(self, texts: Any) -> list[int]:
        return [self.token(text) for text in texts]

    def scored(self, pairs: Any) -> list[Any]:
        """``(("ab", -1.5), ("a", nan))`` -> ``[i_ab, -1.5, i_a, "nan"]`` (flat: half the brackets)."""
        flat: list[Any] = []
        for text, score in pairs:
            flat.append(self.token(text))
            flat.append(_float_out(score))
        return flat

    def merge(self, step: MergeStep) -> list[Any]:
        candidates: list[Any] = []
        for (left, right), score in step.candidates:
            candidates += [self.token(left), self.token(right), _float_out(score)]
        return [step.rank, self.token(step.left), self.token(step.right), self.token(step.token), step.count,
                _float_out(step.score), step.vocab_size, candidates]

    def prune_round(self, prune: PruneRound) -> list[Any]:
        return [prune.round, prune.size_before, prune.size_after, self.scored(prune.removed)]


def _float_out(value: float) -> Any:
    value = float(value)
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _plain_out(value: Any) -> Any:
    """Options and config values (``trainer_config``, ``extra``...): JSON, with tuples as arrays."""
    if value is None or isinstance(value, (bool, int, str)):
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": _float_out(value)}
    if isinstance(value, (tuple, list)):
        return [_plain_out(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {"dict": [[_plain_out(k), _plain_out(v)] for k, v in value.items()]}
    content = getattr(value, "content", None)  # an AddedToken among the special tokens
    if isinstance(content, str):
        return content
    raise HistoryFormatError(f"tokviz cannot save a {type(value).__name__} value ({value!r:.60}) in a training history.")


def _summary_out(summary: WordCountSummary, writer: _Writer) -> dict[str, Any]:
    return {
        "total_words": summary.total_words,
        "unique_words": summary.unique_words,
        "total_characters": summary.total_characters,
        "distinct_characters": summary.distinct_characters,
        "top_words": [[word, count] for word, count in summary.top_words],
    }


def _model_out(history: Any, derive: Callable[[Any], Any]) -> Any:
    """``{"derived": true}`` when the record rebuilds the same model, else its tokenizer.json section."""
    model = history.model
    if model is None:
        return None
    try:
        derived = derive(history)
    except Exception:  # noqa: BLE001 - a record that cannot derive its model keeps it written out
        derived = None
    if derived is not None and type(derived) is type(model) and derived.to_dict() == model.to_dict():
        return {"derived": True}
    return {"section": model.to_dict()}


def _derive_model(history: Any) -> Any:
    return history.model_at(history.max_vocab_size)


def _derive_sentencepiece_model(history: Any) -> Any:
    from tokviz.sentencepiece.convert import model_from_proto

    return model_from_proto(history.proto)


def _unigram_model_out(history: Any, writer: _Writer) -> Any:
    if history.model is None:
        return None
    section = history.model.to_dict()
    return {"unigram": {"unk_id": section["unk_id"], "byte_fallback": section["byte_fallback"],
                        "vocab": writer.scored(section["vocab"])}}


_BASE_FIELDS = ("algorithm", "model", "special_tokens", "alphabet", "word_counts", "stop_reason", "min_vocab_size",
                "max_vocab_size", "trainer_config", "seconds", "extra")


def _history_out(history: Any, kind: str, writer: _Writer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    handled = set(_BASE_FIELDS)
    out["algorithm"] = history.algorithm
    out["special_tokens"] = list(history.special_tokens)
    out["alphabet"] = writer.tokens(history.alphabet)
    out["word_counts"] = _summary_out(history.word_counts, writer)
    out["stop_reason"] = history.stop_reason
    out["min_vocab_size"] = history.min_vocab_size
    out["max_vocab_size"] = history.max_vocab_size
    out["trainer_config"] = _plain_out(history.trainer_config)
    out["seconds"] = _float_out(history.seconds)
    out["extra"] = _plain_out(history.extra)
    if kind in ("bpe", "wordpiece"):
        out["vocab"] = writer.tokens(history.vocab)
        out["merges"] = [writer.merge(step) for step in history.merges]
        handled |= {"vocab", "merges"}
        out["model"] = _model_out(history, _derive_model)
    elif kind == "wordlevel":
        out["vocab"] = writer.tokens(history.vocab)
        out["kept"] = [value for word, count in history.kept for value in (writer.token(word), count)]
        handled |= {"vocab", "kept"}
        out["model"] = _model_out(history, _derive_model)
    elif kind == "unigram":
        out["em_steps"] = [_em_out(step) for step in history.em_steps]
        out["prune_rounds"] = [writer.prune_round(prune) for prune in history.prune_rounds]
        out["final_pieces"] = writer.scored(history.final_pieces)
        out["snapshots"] = [
            {"round": snap.round, "pieces": writer.scored(snap.pieces), "losses": writer.scored(snap.losses)}
            for snap in history.snapshots
        ]
        out["initial_loss"] = None if history.initial_loss is None else _float_out(history.initial_loss)
        out["required_chars"] = writer.tokens(history.required_chars)
        handled |= {"em_steps", "prune_rounds", "final_pieces", "snapshots", "initial_loss", "required_chars"}
        out["model"] = _unigram_model_out(history, writer)
    else:  # sentencepiece, sentencepiece-whole
        out["proto"] = None if history.proto is None else _proto_out(history.proto)
        out["merge_steps"] = [writer.merge(step) for step in history.merge_steps]
        result = history.unigram
        out["unigram"] = None if result is None else {
            "pieces": writer.scored(result.pieces),
            "em_steps": [_em_out(step) for step in result.em_steps],
            "prune_rounds": [writer.prune_round(prune) for prune in result.prune_rounds],
            "snapshots": [writer.scored(snapshot) for snapshot in result.snapshots],
            "stop_reason": result.stop_reason,
        }
        out["character_coverage"] = _float_out(history.character_coverage)
        handled |= {"proto", "merge_steps", "unigram", "character_coverage"}
        derive = _derive_model if kind == "sentencepiece-whole" else _derive_sentencepiece_model  # whole: model_at is tokviz's
        out["model"] = _model_out(history, derive)
    # every other field is a plain value (ints, strings, option tuples): written as it is
    for spec in dataclasses.fields(history):
        if spec.name not in handled:
            out[spec.name] = _plain_out(getattr(history, spec.name))
    return out


def _proto_out(proto: Any) -> str:
    """The ``.model`` as base64, without the normalization rule's charsmap when it is the rule's
    standard one (about 240 KB that every nmt_nfkc model repeats); :func:`_proto_in` restores it."""
    from tokviz.sentencepiece.normalizer import RULE_NAMES, charsmap_for_rule

    spec = proto.normalizer_spec
    if spec.name in RULE_NAMES and spec.is_set("precompiled_charsmap") and spec.precompiled_charsmap:
        if spec.precompiled_charsmap == charsmap_for_rule(spec.name):
            values = spec.set_fields()
            del values["precompiled_charsmap"]
            proto = dataclasses.replace(proto, normalizer_spec=type(spec)(_unknown=spec._unknown, **values))
            return "standard-charsmap:" + base64.b64encode(proto.to_bytes()).decode("ascii")
    return base64.b64encode(proto.to_bytes()).decode("ascii")


def _proto_in(text: str) -> Any:
    from tokviz.sentencepiece.model_proto import ModelProto
    from tokviz.sentencepiece.normalizer import RULE_NAMES, charsmap_for_rule

    standard = text.startswith("standard-charsmap:")
    proto = ModelProto.from_bytes(base64.b64decode(text.removeprefix("standard-charsmap:"), validate=True))
    if standard:
        spec = proto.normalizer_spec
        if spec.name not in RULE_NAMES:
            raise HistoryFormatError(f"The training history's SentencePiece model names an unknown rule {spec.name!r}.")
        proto = dataclasses.replace(proto, normalizer_spec=spec.replace(precompiled_charsmap=charsmap_for_rule(spec.name)))
    return proto


def _em_out(step: EmStep) -> list[Any]:
    return [step.round, step.sub_iteration, step.vocab_size, _float_out(step.objective), step.num_tokens]


def dumps(history: TrainingHistory, config: Any = None) -> str:
    """The history as compact JSON text (see the module docstring for the layout).

    ``config``, the :class:`~tokviz.pipeline_config.PipelineConfig` it was trained with, is
    written too (as the app's link parameters), so that whoever opens the file gets the whole
    tokenizer at any size (:func:`loads_training`), not only its model.
    """
    kind = _type_name(history)
    writer = _Writer()
    body = _history_out(history, kind, writer)
    document: dict[str, Any] = {"format": FORMAT, "version": VERSION, "type": kind}
    if config is not None:
        from tokviz.links import to_query_params

        document["pipeline"] = to_query_params(config, max(1, history.max_vocab_size))
    document["strings"] = writer.strings
    document["history"] = body
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def save(history: TrainingHistory, path: str | os.PathLike[str], config: Any = None) -> None:
    """Write :func:`dumps` to ``path`` (UTF-8)."""
    Path(path).write_text(dumps(history, config), encoding="utf-8")


# --------------------------------------------------------------------------- reading


class _Reader:
    """Reads one decoded document; every check names where in the file it failed."""

    def __init__(self, strings: Any) -> None:
        if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
            raise HistoryFormatError('The training history\'s "strings" must be a list of strings.')
        self.strings = strings

    def fail(self, where: str, what: str) -> HistoryFormatError:
        return HistoryFormatError(f"The training history is damaged: {where} {what}.")

    def int(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"should be a whole number, not {_show(value)}")
        return value

    def float(self, value: Any, where: str) -> float:
        if isinstance(value, bool):
            raise self.fail(where, f"should be a number, not {_show(value)}")
        if isinstance(value, (int, float)):
            return float(value)
        if value in ("nan", "inf", "-inf"):
            return float(value)
        raise self.fail(where, f"should be a number, not {_show(value)}")

    def optional_float(self, value: Any, where: str) -> float | None:
        return None if value is None else self.float(value, where)

    def str(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"should be text, not {_show(value)}")
        return value

    def optional_str(self, value: Any, where: str) -> str | None:
        return None if value is None else self.str(value, where)

    def list(self, value: Any, where: str, length: int | None = None) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"should be a list, not {_show(value)}")
        if length is not None and len(value) != length:
            raise self.fail(where, f"should have {length} entries, not {len(value)}")
        return value

    def token(self, value: Any, where: str) -> str:
        index = self.int(value, where)
        if not 0 <= index < len(self.strings):
            raise self.fail(where, f"refers to string {index}, but there are {len(self.strings)}")
        return self.strings[index]

    def _all_tokens(self, ids: list[Any]) -> list[str] | None:
        """The strings of ``ids`` if every one is a valid string index (checked in bulk: a history holds
        hundreds of thousands), else None, and the caller's item-by-item reading names the bad one."""
        count = len(self.strings)
        if all(type(index) is int and 0 <= index < count for index in ids):
            return list(map(self.strings.__getitem__, ids))
        return None

    @staticmethod
    def _all_floats(values: list[Any]) -> list[float] | None:
        """``values`` as floats if every one is a number (or "nan"/"inf"/"-inf", as written), else None."""
        if all(type(value) is float or type(value) is int or value in ("nan", "inf", "-inf") for value in values):
            return list(map(float, values))
        return None

    def tokens(self, value: Any, where: str) -> tuple[str, ...]:
        items = self.list(value, where)
        fast = self._all_tokens(items)
        if fast is not None:
            return tuple(fast)
        return tuple(self.token(item, f"{where}[{i}]") for i, item in enumerate(items))

    def strs(self, value: Any, where: str) -> tuple[str, ...]:
        return tuple(self.str(item, f"{where}[{i}]") for i, item in enumerate(self.list(value, where)))

    def scored(self, value: Any, where: str) -> tuple[tuple[str, float], ...]:
        flat = self.list(value, where)
        if len(flat) % 2:
            raise self.fail(where, "should hold (string, score) pairs, but has an odd number of entries")
        pieces, scores = self._all_tokens(flat[0::2]), self._all_floats(flat[1::2])
        if pieces is not None and scores is not None:
            return tuple(zip(pieces, scores))
        return tuple(
            (self.token(flat[i], f"{where}[{i}]"), self.float(flat[i + 1], f"{where}[{i + 1}]"))
            for i in range(0, len(flat), 2)
        )

    def counted(self, value: Any, where: str) -> tuple[tuple[str, int], ...]:
        flat = self.list(value, where)
        if len(flat) % 2:
            raise self.fail(where, "should hold (string, count) pairs, but has an odd number of entries")
        return tuple(
            (self.token(flat[i], f"{where}[{i}]"), self.int(flat[i + 1], f"{where}[{i + 1}]"))
            for i in range(0, len(flat), 2)
        )

    def merge(self, value: Any, where: str) -> MergeStep:
        row = self.list(value, where, 8)
        flat = self.list(row[7], f"{where} candidates")
        if len(flat) % 3:
            raise self.fail(f"{where} candidates", "should hold (left, right, score) triples")
        lefts, rights, scores = self._all_tokens(flat[0::3]), self._all_tokens(flat[1::3]), self._all_floats(flat[2::3])
        if lefts is not None and rights is not None and scores is not None:
            candidates = tuple(zip(zip(lefts, rights), scores))
        else:  # item by item, to name the damaged entry
            candidates = tuple(
                ((self.token(flat[i], where), self.token(flat[i + 1], where)), self.float(flat[i + 2], where))
                for i in range(0, len(flat), 3)
            )
        return MergeStep(
            rank=self.int(row[0], f"{where} rank"),
            left=self.token(row[1], f"{where} left"),
            right=self.token(row[2], f"{where} right"),
            token=self.token(row[3], f"{where} token"),
            count=self.int(row[4], f"{where} count"),
            score=self.float(row[5], f"{where} score"),
            vocab_size=self.int(row[6], f"{where} vocab_size"),
            candidates=candidates,
        )

    def merges(self, value: Any, where: str) -> tuple[MergeStep, ...]:
        rows = self.list(value, where)
        from tokviz.limits import check_tokenizer_merges

        check_tokenizer_merges(len(rows), "This training history")
        steps = []
        for i, row in enumerate(rows):
            step = self.merge(row, f"{where}[{i}]")
            if step.rank != i:  # (a list repeated or cut: refused at its first wrong row, not after all are read)
                raise self.fail(f"{where}[{i}]", f"has rank {step.rank:,}; merges are numbered in order from 0, so the list is damaged")
            steps.append(step)
        return tuple(steps)

    def em_step(self, value: Any, where: str) -> EmStep:
        row = self.list(value, where, 5)
        return EmStep(self.int(row[0], where), self.int(row[1], where), self.int(row[2], where),
                      self.float(row[3], where), self.int(row[4], where))

    def em_steps(self, value: Any, where: str) -> tuple[EmStep, ...]:
        return tuple(self.em_step(row, f"{where}[{i}]") for i, row in enumerate(self.list(value, where)))

    def prune_rounds(self, value: Any, where: str) -> tuple[PruneRound, ...]:
        rounds = []
        for i, row in enumerate(self.list(value, where)):
            at = f"{where}[{i}]"
            row = self.list(row, at, 4)
            rounds.append(PruneRound(self.int(row[0], at), self.int(row[1], at), self.int(row[2], at),
                                     self.scored(row[3], f"{at} removed")))
        return tuple(rounds)

    def plain(self, value: Any, where: str, depth: int = 0) -> Any:
        if depth > 20:
            raise self.fail(where, "is nested too deeply")
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            return tuple(self.plain(item, where, depth + 1) for item in value)
        if isinstance(value, dict) and len(value) == 1:
            (key, inner), = value.items()
            if key == "float":
                return self.float(inner, where)
            if key == "bytes":
                try:
                    return base64.b64decode(self.str(inner, where), validate=True)
                except ValueError:
                    raise self.fail(where, "holds bytes that are not base64") from None
            if key == "dict":
                pairs = self.list(inner, where)
                return {self.plain(self.list(p, where, 2)[0], where, depth + 1): self.plain(p[1], where, depth + 1)
                        for p in pairs}
        raise self.fail(where, f"holds a value tokviz does not know: {_show(value)}")

    def pairs(self, value: Any, where: str) -> tuple[tuple[str, Any], ...]:
        items = self.plain(value, where)
        if not isinstance(items, tuple) or not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                                                    for p in items):
            raise self.fail(where, "should be a list of [name, value] pairs")
        return items


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, (bytes, bytearray)) else repr(value)
    kind = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}.get(type(value), "a number")
    return f"{kind} {text[:40]}{'…' if len(text) > 40 else ''}"


def _field(body: dict[str, Any], name: str) -> Any:
    if name not in body:
        raise HistoryFormatError(f'The training history is damaged: it has no "{name}".')
    return body[name]


def _summary_in(value: Any, reader: _Reader) -> WordCountSummary:
    if not isinstance(value, dict):
        raise reader.fail("word_counts", "should be an object")
    top = []
    for i, pair in enumerate(reader.list(value.get("top_words", []), "word_counts.top_words")):
        word, count = reader.list(pair, f"word_counts.top_words[{i}]", 2)
        top.append((reader.str(word, "word_counts.top_words"), reader.int(count, "word_counts.top_words")))
    return WordCountSummary(
        total_words=reader.int(value.get("total_words"), "word_counts.total_words"),
        unique_words=reader.int(value.get("unique_words"), "word_counts.unique_words"),
        total_characters=reader.int(value.get("total_characters"), "word_counts.total_characters"),
        distinct_characters=reader.int(value.get("distinct_characters"), "word_counts.distinct_characters"),
        top_words=tuple(top),
    )


def _model_section_in(section: Any, reader: _Reader) -> Any:
    """A tokenizer.json "model" section, checked by the same reader as tokenizer.json files."""
    from tokviz.serialization import model_from_dict

    if not isinstance(section, dict):
        raise reader.fail("model.section", "should be an object")
    return model_from_dict(section)


def _history_in(kind: str, body: Any, reader: _Reader) -> Any:
    if not isinstance(body, dict):
        raise HistoryFormatError('The training history is damaged: "history" should be an object.')
    cls = _history_types()[kind]
    field = lambda name: _field(body, name)  # noqa: E731
    values: dict[str, Any] = {
        "algorithm": reader.str(field("algorithm"), "algorithm"),
        "special_tokens": reader.strs(field("special_tokens"), "special_tokens"),
        "alphabet": reader.tokens(field("alphabet"), "alphabet"),
        "word_counts": _summary_in(field("word_counts"), reader),
        "stop_reason": reader.str(field("stop_reason"), "stop_reason"),
        "min_vocab_size": reader.int(field("min_vocab_size"), "min_vocab_size"),
        "max_vocab_size": reader.int(field("max_vocab_size"), "max_vocab_size"),
        "trainer_config": reader.pairs(field("trainer_config"), "trainer_config"),
        "seconds": reader.float(field("seconds"), "seconds"),
        "extra": reader.pairs(field("extra"), "extra"),
        "model": None,
    }
    model_value = field("model")
    derive: Callable[[Any], Any] | None = None
    if kind in ("bpe", "wordpiece"):
        values["vocab"] = reader.tokens(field("vocab"), "vocab")
        values["merges"] = reader.merges(field("merges"), "merges")
        derive = _derive_model
    elif kind == "wordlevel":
        values["vocab"] = reader.tokens(field("vocab"), "vocab")
        values["kept"] = reader.counted(field("kept"), "kept")
        derive = _derive_model
    elif kind == "unigram":
        from tokviz.models.unigram.trainer import VocabSnapshot

        values["em_steps"] = reader.em_steps(field("em_steps"), "em_steps")
        values["prune_rounds"] = reader.prune_rounds(field("prune_rounds"), "prune_rounds")
        values["final_pieces"] = reader.scored(field("final_pieces"), "final_pieces")
        snapshots = []
        for i, snap in enumerate(reader.list(field("snapshots"), "snapshots")):
            if not isinstance(snap, dict):
                raise reader.fail(f"snapshots[{i}]", "should be an object")
            snapshots.append(VocabSnapshot(reader.int(snap.get("round"), f"snapshots[{i}].round"),
                                           reader.scored(snap.get("pieces"), f"snapshots[{i}].pieces"),
                                           reader.scored(snap.get("losses", []), f"snapshots[{i}].losses")))
        values["snapshots"] = tuple(snapshots)
        values["initial_loss"] = reader.optional_float(field("initial_loss"), "initial_loss")
        values["required_chars"] = reader.tokens(field("required_chars"), "required_chars")
    else:
        values.update(_sentencepiece_in(body, reader))
        derive = _derive_model if kind == "sentencepiece-whole" else _derive_sentencepiece_model
    known = set(values)
    for spec in dataclasses.fields(cls):
        if spec.name not in known and spec.name in body:
            values[spec.name] = _plain_field(spec, body[spec.name], reader)
    unknown = sorted(set(body) - {spec.name for spec in dataclasses.fields(cls)})
    if unknown:
        raise HistoryFormatError(
            f"The training history has fields this tokviz does not know ({', '.join(unknown[:5])}); update tokviz to open it.")
    try:
        history = cls(**values)
    except (TypeError, ValueError) as error:
        raise HistoryFormatError(f"The training history is damaged: {error}") from error
    object.__setattr__(history, "model", _final_model(history, kind, model_value, derive, reader))
    return history


def _plain_field(spec: dataclasses.Field, value: Any, reader: _Reader) -> Any:
    """Fields without a codec of their own: ints, floats, text, None and option tuples."""
    decoded = reader.plain(value, spec.name)
    default = spec.default
    if isinstance(default, float) and isinstance(decoded, int) and not isinstance(decoded, bool):
        return float(decoded)
    return decoded


def _final_model(history: Any, kind: str, value: Any, derive: Callable[[Any], Any] | None, reader: _Reader) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        raise reader.fail("model", "should be an object with one entry")
    (how, inner), = value.items()
    try:
        if how == "derived" and inner is True and derive is not None:
            return derive(history)
        if how == "section":
            return _model_section_in(inner, reader)
        if how == "unigram" and kind == "unigram" and isinstance(inner, dict):
            from tokviz.models.unigram.model import Unigram

            vocab = reader.scored(_field(inner, "vocab"), "model.unigram.vocab")
            unk_id = inner.get("unk_id")
            if unk_id is not None:
                unk_id = reader.int(unk_id, "model.unigram.unk_id")
            byte_fallback = inner.get("byte_fallback", False)
            if not isinstance(byte_fallback, bool):
                raise reader.fail("model.unigram.byte_fallback", "should be true or false")
            return Unigram(list(vocab), unk_id, byte_fallback)
    except HistoryFormatError:
        raise
    except (TokvizError, TypeError, ValueError, KeyError, IndexError) as error:
        raise HistoryFormatError(f"The training history's final model cannot be rebuilt: {error}") from error
    raise reader.fail("model", f"names a way of storing it tokviz does not know ({how!r})")


def _sentencepiece_in(body: dict[str, Any], reader: _Reader) -> dict[str, Any]:
    from tokviz.sentencepiece.trainer_unigram import UnigramResult

    values: dict[str, Any] = {}
    blob = _field(body, "proto")
    if blob is None:
        values["proto"] = None
    else:
        try:
            values["proto"] = _proto_in(reader.str(blob, "proto"))
        except (TokvizError, ValueError, IndexError, TypeError) as error:
            raise HistoryFormatError(f"The training history's SentencePiece model (proto) cannot be read: {error}") from error
    values["merge_steps"] = reader.merges(_field(body, "merge_steps"), "merge_steps")
    result = _field(body, "unigram")
    if result is None:
        values["unigram"] = None
    else:
        if not isinstance(result, dict):
            raise reader.fail("unigram", "should be an object")
        values["unigram"] = UnigramResult(
            pieces=reader.scored(_field(result, "pieces"), "unigram.pieces"),
            em_steps=reader.em_steps(_field(result, "em_steps"), "unigram.em_steps"),
            prune_rounds=reader.prune_rounds(_field(result, "prune_rounds"), "unigram.prune_rounds"),
            snapshots=tuple(reader.scored(snap, f"unigram.snapshots[{i}]")
                            for i, snap in enumerate(reader.list(_field(result, "snapshots"), "unigram.snapshots"))),
            stop_reason=reader.str(_field(result, "stop_reason"), "unigram.stop_reason"),
        )
    values["character_coverage"] = reader.float(_field(body, "character_coverage"), "character_coverage")
    return values


def loads(text: str | bytes, max_bytes: int | None = None, *, from_worker: bool = False) -> Any:
    """Read a history written by :func:`dumps`; anything else raises :class:`HistoryFormatError`.

    ``max_bytes`` (default :data:`MAX_HISTORY_BYTES`) refuses larger texts before parsing them.
    ``from_worker``: the text is one our own training worker wrote (:mod:`tokviz.jobs`), not a user's
    file, so the upload guards' whole-text scans (:func:`tokviz.limits.parse_json`) are skipped.
    """
    return loads_training(text, max_bytes, from_worker=from_worker).history


_collector_lock = threading.Lock()
_collector_pauses = 0
_collector_was_enabled = True


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a history's records are built.

    A 50,000-merge history is half a million new objects, none of them in a cycle; building them
    set off full collections over every object of the app process (the other sessions' histories
    too), each holding the interpreter lock: 6.5 s to read the history and the longest pause of the
    other threads 1.1 s, against 1.2 s and 31 ms paused (measured on a loaded machine). Reference
    counting still frees everything that is not in a cycle; concurrent reads nest.
    """
    global _collector_pauses, _collector_was_enabled
    with _collector_lock:
        _collector_pauses += 1
        if _collector_pauses == 1:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0 and _collector_was_enabled:
                # What was allocated meanwhile moves to the oldest generation without being walked (freeze and
                # unfreeze splice lists): re-enabled as it was, the collector walked those half million young
                # objects at once (0.3 s and more). Cycles among them are found by the next full collection.
                gc.freeze()
                gc.unfreeze()
                gc.enable()


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
#: How many levels :func:`_parse_in_steps` walks itself: document -> history -> a list (merges, strings,
#: snapshots) -> a snapshot's pieces; everything below is one ``raw_decode`` (a merge row, a piece).
_STEP_DEPTH = 4


def _parse_in_steps(text: str) -> Any:
    """``json.loads(text)``, one element at a time in the outer :data:`_STEP_DEPTH` levels.

    ``json.loads`` holds the interpreter lock for the whole text (0.56 s for a 50,000-merge history of
    7 MB, on a loaded machine), and every other session of the app process waits for it; parsed an
    element at a time, the lock changes hands between elements (the longest hold measured: 20 ms)
    for about three times the parse time. The depth is bounded, so this walks no user nesting.

    >>> _parse_in_steps('{"a": [1, [2, {"b": null}]], "c": "d"}')
    {'a': [1, [2, {'b': None}]], 'c': 'd'}
    """
    value, end = _parsed_value(text, _SPACE.match(text, 0).end(), _STEP_DEPTH)
    end = _SPACE.match(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _parsed_value(text: str, index: int, depth: int) -> tuple[Any, int]:
    """The JSON value at ``index`` and the index after it (``depth`` more levels walked here)."""
    opening = text[index:index + 1]
    if depth == 0 or opening not in ("[", "{"):
        return _DECODER.raw_decode(text, index)
    space = _SPACE.match
    index = space(text, index + 1).end()
    closing = "]" if opening == "[" else "}"
    items: list[Any] = []
    members: dict[str, Any] = {}
    if text[index:index + 1] == closing:
        return (items if opening == "[" else members), index + 1
    while True:
        if opening == "[":
            value, index = _parsed_value(text, index, depth - 1)
            items.append(value)
        else:
            if text[index:index + 1] != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
            key, index = json.decoder.scanstring(text, index + 1)
            index = space(text, index).end()
            if text[index:index + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
            members[key], index = _parsed_value(text, space(text, index + 1).end(), depth - 1)
        index = space(text, index).end()
        mark = text[index:index + 1]
        if mark == closing:
            return (items if opening == "[" else members), index + 1
        if mark != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, index)
        index = space(text, index + 1).end()


@dataclasses.dataclass(frozen=True)
class OpenedTraining:
    """A training read from a history file: the history and, when the file says it, its pipeline.

    ``tokenizer_at(k)`` is the whole tokenizer at vocab size ``k`` (normalizers, pre-tokenizer,
    special tokens, post-processor and decoder around ``history.model_at(k)``); without a
    pipeline in the file it is the bare model in a ``Tokenizer`` (``has_pipeline`` is False).
    """

    history: Any
    config: Any = None

    @property
    def has_pipeline(self) -> bool:
        return self.config is not None or hasattr(self.history, "proto_at")

    def tokenizer_at(self, vocab_size: int | None = None) -> Any:
        history = self.history
        size = history.max_vocab_size if vocab_size is None else min(max(vocab_size, history.min_vocab_size), history.max_vocab_size)
        if hasattr(history, "proto_at"):  # SentencePiece: the .model at that size, converted as HF does
            from tokviz.sentencepiece.convert import tokenizer_from_proto

            return tokenizer_from_proto(history.proto_at(size))
        model = history.model_at(size)
        if self.config is not None:
            from tokviz.pipeline_config import tokenizer_with_model

            return tokenizer_with_model(self.config, model)
        from tokviz.tokenizer import Tokenizer

        return Tokenizer(model)


def load_training(path: str | os.PathLike[str], max_bytes: int | None = None) -> OpenedTraining:
    """:func:`load`, with the pipeline: what "Open a training" on the Train and Inspect pages calls."""
    return loads_training(_read_limited(path, max_bytes), max_bytes)


def loads_training(text: str | bytes, max_bytes: int | None = None, *, from_worker: bool = False) -> OpenedTraining:
    """:func:`loads`, with the pipeline the file names (see :class:`OpenedTraining`).

    >>> from tokviz.presets import PRESETS
    >>> from tokviz.training import run_training
    >>> config = PRESETS["bert"].build()
    >>> history = run_training(config, 60, ["Hugging Face tokenizers", "hugging faces"])
    >>> opened = loads_training(dumps(history, config))
    >>> opened.config == config, opened.tokenizer_at(50).encode("Hugs!").tokens[0]
    (True, '[CLS]')
    """
    limit = MAX_HISTORY_BYTES if max_bytes is None else max_bytes
    size = len(text.encode("utf-8")) if isinstance(text, str) else len(text)
    if size > limit:
        raise HistoryFormatError(
            f"This training history is {size / 1e6:.1f} MB; the limit is {limit / 1e6:.1f} MB.")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise HistoryFormatError("This file is not a tokviz training history: it is not UTF-8 text.") from None
    with _collector_paused():
        return _training_in(text, limit, from_worker)


def _training_in(text: str, limit: int, from_worker: bool) -> OpenedTraining:
    from tokviz import limits

    if from_worker:  # our own worker's dumps(): no user's bytes to guard against, only the lock to share
        try:
            document = _parse_in_steps(text)
        except (json.JSONDecodeError, IndexError):
            raise HistoryFormatError("The training worker sent back a damaged history.") from None
    else:
        # The guarded JSON entry every uploaded file goes through: values counted before parsing (a merge
        # list repeated 150 times is refused at once), numbers, Unicode and nesting checked.
        document = limits.parse_json(text, "This training history", what="training history", max_bytes=limit,
                                     max_values=limits.MAX_HISTORY_JSON_VALUES, values_env="TOKVIZ_MAX_HISTORY_JSON_VALUES",
                                     loads=_parse_in_steps, error=HistoryFormatError)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise HistoryFormatError(
            "This file is not a tokviz training history (a history.json as `python -m tokviz train` writes it): "
            "its \"format\" is not \"tokviz-training-history\".")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise HistoryFormatError(f"This training history has no valid version (got {_show(version)}).")
    if version > VERSION:
        raise HistoryFormatError(
            f"This training history is version {version}; this tokviz reads versions up to {VERSION}. Update tokviz to open it.")
    kind = document.get("type")
    if kind not in _history_types():
        raise HistoryFormatError(
            f"This training history is of an unknown type {_show(kind)}; tokviz knows {', '.join(_history_types())}.")
    limits.check_history_sizes(document.get("history"))  # merges and steps counted before any record is built
    reader = _Reader(document.get("strings"))
    try:
        history = _history_in(kind, document.get("history"), reader)
    except RecursionError:
        raise HistoryFormatError("The training history is damaged: it is nested too deeply.") from None
    finally:
        _dismantle(document)
    return OpenedTraining(history, _pipeline_in(document.get("pipeline")))


def _dismantle(document: Any, depth: int = _STEP_DEPTH) -> None:
    """Free the parsed JSON a slice at a time: dropped at once, its half million lists and numbers were
    one deallocation holding the interpreter lock (0.26 s on a loaded machine). ``pipeline`` is kept."""
    if depth == 0:
        return
    if isinstance(document, dict):
        for key in [key for key in document if key != "pipeline"]:
            _dismantle(document[key], depth - 1)
            if isinstance(document[key], (list, dict)):
                document[key] = None
    elif isinstance(document, list):
        while document:
            for item in document[-2000:]:
                _dismantle(item, depth - 1)
            del document[-2000:]


def _pipeline_in(params: Any) -> Any:
    if params is None:
        return None
    if not isinstance(params, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in params.items()):
        raise HistoryFormatError('The training history\'s "pipeline" should be an object of text values.')
    from tokviz.links import from_query_params

    try:
        return from_query_params(params)[0]
    except TokvizError as error:
        raise HistoryFormatError(f"The training history's pipeline cannot be used: {error}") from error


def load(path: str | os.PathLike[str], max_bytes: int | None = None) -> Any:
    """Read a history file written by :func:`save`; the size is checked before the file is read."""
    return loads(_read_limited(path, max_bytes), max_bytes)


def _read_limited(path: str | os.PathLike[str], max_bytes: int | None) -> bytes:
    limit = MAX_HISTORY_BYTES if max_bytes is None else max_bytes
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise HistoryFormatError(f"{path} is {size / 1e6:.1f} MB; the limit for a training history is {limit / 1e6:.1f} MB.")
        return Path(path).read_bytes()
    except OSError as error:
        raise HistoryFormatError(f"Cannot read the training history {path}: {error.strerror or error}.") from None
