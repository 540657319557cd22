"""``SentencePieceProcessor`` with the ``sentencepiece`` package's Python API (0.2.x, snake_case and CamelCase).

    >>> from tokviz.sentencepiece import SentencePieceTrainer
    >>> import io
    >>> out = io.BytesIO()
    >>> _ = SentencePieceTrainer.train(sentence_iterator=iter(["hug pug hugs", "hug the pug"] * 5), model_writer=out,
    ...                                vocab_size=20, model_type="bpe")
    >>> sp = SentencePieceProcessor(model_proto=out.getvalue())
    >>> sp.encode_as_pieces("hugs")
    ['▁hugs']
    >>> sp.decode(sp.encode("the pug"))
    'the pug'
    >>> sp.encode("hugs", return_type="offset_mapping")
    {'ids': [11], 'pieces': ['▁hugs'], 'offsets': [(0, 4)]}

What each call returns is chosen by ``return_type`` (``out_type`` is its older name; give one):
``int`` ids, ``str`` pieces, ``bytes`` pieces as UTF-8, ``"numpy"`` a read-only ``int32`` array,
``"proto"`` a :class:`~tokviz.sentencepiece.sentencepiece_pb2.SentencePieceText` (pieces with their
``surface`` and byte ``begin`` / ``end`` in the input), ``"serialized_proto"`` its bytes,
``"offset_mapping"`` a dict of ids, pieces and character offsets (byte offsets for bytes input or
``return_bytes=True``). Inputs may be ``str`` or UTF-8 ``bytes``, one or a list; decode takes ids,
pieces, numpy arrays (1-D, or 2-D for a batch) and lists of them.

Threads: sentencepiece encodes a batch (and ``parallel_encode``'s chunks of one long text) on a
thread pool. Python threads would not run tokviz's pure-Python encoder in parallel, so
``num_threads``, ``thread_pool`` and ``chunk_len`` are accepted and checked, and the text is
encoded in the calling thread in one pass (the results are those of ``encode``; the interpreter
switches threads while it runs, so other threads are not blocked).

This version leaves out ``SetDataDir`` and the FlatBuffer model format (``ConvertToFlatbuffer``
raises a :class:`SentencePieceError` saying so).
"""

from __future__ import annotations

import gc
import os
import random
import time
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from tokviz.errors import TokvizError
from tokviz.sentencepiece.model import SentencePieceModel
from tokviz.sentencepiece.model_proto import ModelProto, ModelType, PieceType

__all__ = ["SentencePieceProcessor", "SentencePieceError", "ThreadPool", "SetRandomGeneratorSeed", "SetMinLogLevel",
           "SetNBestTimeout", "ConvertToFlatbuffer", "set_random_generator_seed", "set_min_log_level",
           "set_nbest_timeout", "convert_to_flatbuffer"]

_SPACE = "\u2581"


class SentencePieceError(TokvizError, RuntimeError):
    """A SentencePiece call that cannot be done (bad option, missing model file, bad id).

    A ``RuntimeError`` as in the ``sentencepiece`` package, and a :class:`TokvizError` (``ValueError``).
    """


# -- process-wide settings, as sentencepiece's are ---------------------------------------

_RANDOM = random.Random()
_NBEST_TIMEOUT = [0.0]  # milliseconds; 0 = none
_LOG_LEVEL = [0]


def SetRandomGeneratorSeed(seed: int) -> None:
    """Seed the generator every processor samples with (``enable_sampling``), as sentencepiece's global seed."""
    _RANDOM.seed(int(seed))


def SetMinLogLevel(level: int) -> None:
    """Accepted for compatibility: tokviz's SentencePiece writes no log lines to stderr at any level."""
    _LOG_LEVEL[0] = int(level)


def SetNBestTimeout(timeout_ms: float) -> None:
    """n-best search longer than ``timeout_ms`` milliseconds (sentencepiece's unit) stops and returns
    only the best segmentation (0: no limit)."""
    if timeout_ms < 0:
        raise ValueError("the n-best timeout must be 0 (none) or positive milliseconds.")
    _NBEST_TIMEOUT[0] = float(timeout_ms)


set_random_generator_seed = SetRandomGeneratorSeed
set_min_log_level = SetMinLogLevel
set_nbest_timeout = SetNBestTimeout


class ThreadPool:
    """``sentencepiece.ThreadPool(n)``: accepted by ``encode(..., thread_pool=pool)`` (see the module docstring)."""

    def __init__(self, num_threads: int = -1) -> None:
        if not isinstance(num_threads, int) or isinstance(num_threads, bool):
            raise TypeError("num_threads must be an int.")
        self._num_threads = num_threads if num_threads > 0 else (os.cpu_count() or 1)

    def num_threads(self) -> int:
        return self._num_threads


def ConvertToFlatbuffer(model_file: str | os.PathLike | None = None, serialized_model_proto: bytes | None = None,
                        model_proto: Any = None, output_file: str | None = None, skip_char_bigrams: bool = False,
                        allow_unsupported_model_type: bool = False) -> bytes | None:
    """Checks its arguments as sentencepiece does, then says that tokviz cannot write the FlatBuffer format."""
    given = [x for x in (model_file, serialized_model_proto, model_proto) if x is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of model_file, serialized_model_proto and model_proto.")
    if model_file is not None and not os.fspath(model_file):
        raise ValueError("model_file is empty.")
    if output_file is not None and not output_file:
        raise ValueError("output_file is empty.")
    if serialized_model_proto is not None and not isinstance(serialized_model_proto, (bytes, bytearray)):
        raise TypeError("serialized_model_proto must be bytes.")
    if model_proto is not None and not isinstance(model_proto, (bytes, bytearray)) and not hasattr(model_proto, "SerializeToString"):
        raise TypeError("model_proto must be bytes or a ModelProto.")
    data = serialized_model_proto if serialized_model_proto is not None else model_proto
    if model_file is not None:
        with open(model_file, "rb") as handle:
            data = handle.read()
    elif hasattr(data, "SerializeToString"):
        data = data.SerializeToString()
    try:
        ModelProto.from_bytes(bytes(data))
    except TokvizError as exc:
        raise ValueError(f"the model is not a valid ModelProto: {exc}") from exc
    raise SentencePieceError("UNIMPLEMENTED: tokviz does not write sentencepiece's FlatBuffer model format (.spm.fb); "
                             "use the .model file (ModelProto) it was made from.")


convert_to_flatbuffer = ConvertToFlatbuffer


# -- helpers ---------------------------------------------------------------------------

_RETURN_TYPES: dict[Any, str] = {int: "int", str: "str", bytes: "bytes", "int": "int", "str": "str", "bytes": "bytes",
                                 "serialized_proto": "serialized_proto", "proto": "proto",
                                 "offset_mapping": "offset_mapping", "numpy": "numpy"}


def _return_kind(return_type: Any, out_type: Any, default: Any) -> str:
    if return_type is not None and out_type is not None:
        raise ValueError("return_type and out_type are two names of one option: give only one.")
    chosen = return_type if return_type is not None else out_type if out_type is not None else default
    if chosen == "immutable_proto":  # (sentencepiece 0.2.3 refuses it too, with this sentence)
        raise ValueError("immutable_proto is deprecated and no longer supported. Use return_type='proto' instead.")
    try:
        return _RETURN_TYPES[chosen]
    except (KeyError, TypeError):
        raise ValueError(f"unknown return_type={chosen!r}: use int, str, bytes, 'numpy', 'proto', "
                         "'serialized_proto' or 'offset_mapping'.") from None


def _check_return_bytes(kind: str, return_bytes: bool | None) -> None:
    if return_bytes is None or kind == "offset_mapping":
        return
    if kind == "bytes" and return_bytes:
        return
    if kind == "str" and not return_bytes:
        return
    raise ValueError(f"return_bytes={return_bytes} does not go with return_type={kind}.")


def _as_text(value: Any) -> tuple[str, bool]:
    """``(text, was_bytes)`` of one encode input."""
    if isinstance(value, str):
        return value, False
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace"), True
    raise TypeError(f"encode takes text (str or UTF-8 bytes), got {type(value).__name__}.")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while a model is built, then one pass over the young generations:
    the model's tens of thousands of objects all live as long as it does. Collections while they
    are made walk them again and again (a third of building a 4k unigram model's automaton); left
    young, the first encode pass would walk them (its collections took 2x longer): one pass here
    moves them to the old generation."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(1)


def _plain(defaults: dict[str, Any]) -> bool:
    """No default option changes what a plain encode gives (the processor's fast path)."""
    return not (defaults["add_bos"] or defaults["add_eos"] or defaults["reverse"] or defaults["emit_unk_piece"]
                or defaults["enable_sampling"])


def _is_batch(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _utf8_len(data: bytes, pos: int) -> int:
    """Length of the valid UTF-8 character at ``pos``, 0 when it is not valid."""
    first = data[pos]
    if first < 0x80:
        return 1
    if 0xC2 <= first <= 0xDF:
        need = 2
    elif 0xE0 <= first <= 0xEF:
        need = 3
    elif 0xF0 <= first <= 0xF4:
        need = 4
    else:
        return 0
    if pos + need > len(data):
        return 0
    try:
        data[pos:pos + need].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return need


def _char_offsets(text: str) -> list[int]:
    """Character index of every UTF-8 byte offset of ``text`` (and of its end): ``_char_offsets("é!") == [0, 0, 1, 2]``."""
    out: list[int] = []
    for index, char in enumerate(text):
        out.extend([index] * len(char.encode("utf-8")))
    out.append(len(text))
    return out


class VectorBuffer(bytearray):
    """The buffer under an ``encode(..., return_type="numpy")`` array (the array shares its memory)."""

    def data_address(self) -> int:
        import ctypes

        if not self:
            return 0
        return ctypes.addressof((ctypes.c_char * len(self)).from_buffer(self))


def _numpy_ids(ids: Sequence[int]) -> Any:
    import numpy as np

    buffer = VectorBuffer(np.asarray(ids, dtype=np.int32).tobytes())
    array = np.frombuffer(memoryview(buffer), dtype=np.int32)
    array.flags.writeable = False
    return array


# A piece with where it is: (piece, id, surface, begin, end), begin / end UTF-8 byte offsets.
_Record = tuple[str, int, str, int, int]


class SentencePieceProcessor:
    """Load a ``.model`` and encode / decode like ``sentencepiece.SentencePieceProcessor``."""

    def __init__(self, model_file: str | os.PathLike | None = None, model_proto: bytes | None = None,
                 out_type: Any = None, add_bos: bool = False, add_eos: bool = False, reverse: bool = False,
                 emit_unk_piece: bool = False, enable_sampling: bool = False, nbest_size: int = -1,
                 alpha: float = 0.1, num_threads: int = -1, return_type: Any = None) -> None:
        self._model: SentencePieceModel | None = None
        kind = _return_kind(return_type, out_type, int)
        self._defaults = dict(return_type=kind, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                              emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling,
                              nbest_size=nbest_size, alpha=alpha, num_threads=num_threads)
        self._plain = _plain(self._defaults)
        if model_file is not None or model_proto is not None:
            self.Load(model_file=model_file, model_proto=model_proto)

    @classmethod
    def from_file(cls, model_file: str | os.PathLike, **options: Any) -> "SentencePieceProcessor":
        if options.get("model_proto") is not None:
            raise ValueError("from_file takes a model file, not model_proto.")
        return cls(model_file=model_file, **options)

    @classmethod
    def from_proto(cls, model_proto: bytes, **options: Any) -> "SentencePieceProcessor":
        if options.get("model_file") is not None:
            raise ValueError("from_proto takes the model's bytes, not model_file.")
        return cls(model_proto=model_proto, **options)

    # -- pickling (the model's bytes and the options) -------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        model = state.pop("_model", None)
        state["_model_bytes"] = model.proto.to_bytes() if model is not None else None
        return state

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, (bytes, bytearray)):  # older pickles hold only the model
            state = {"_model_bytes": bytes(state)}
        state = dict(state)
        data = state.pop("_model_bytes", None)
        self.__dict__.update(state)
        self.__dict__.setdefault("_defaults", SentencePieceProcessor().__dict__["_defaults"])
        self._plain = _plain(self._defaults)
        self._model = None
        if data is not None:
            self.LoadFromSerializedProto(data)

    # -- loading ----------------------------------------------------------------------

    def Load(self, model_file: str | os.PathLike | None = None, model_proto: bytes | None = None) -> bool:
        if model_file is not None and model_proto is not None:
            raise ValueError("give model_file or model_proto, not both.")
        if model_proto is not None:
            return self.LoadFromSerializedProto(model_proto)
        if model_file is None:
            raise SentencePieceError("Give a model file (model_file=...) or its bytes (model_proto=...).")
        return self.LoadFromFile(model_file)

    def LoadFromFile(self, filename: str | os.PathLike) -> bool:
        try:
            with open(filename, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise SentencePieceError(f'NOT_FOUND: "{os.fspath(filename)}": {exc.strerror or exc}') from exc
        return self.LoadFromSerializedProto(data)

    def LoadFromSerializedProto(self, serialized: Any) -> bool:
        if hasattr(serialized, "SerializeToString"):  # a sentencepiece_model_pb2.ModelProto
            serialized = serialized.SerializeToString()
        with _collector_paused():
            self.load_proto(ModelProto.from_bytes(serialized))
        return True

    def load_proto(self, proto: ModelProto) -> None:
        """Load an already-parsed :class:`ModelProto` (tokviz addition)."""
        self._model = SentencePieceModel(proto)

    @property
    def model(self) -> SentencePieceModel:
        """The loaded :class:`SentencePieceModel` (tokviz addition)."""
        if self._model is None:
            raise SentencePieceError("No model is loaded: call load('name.model') first.")
        return self._model

    @property
    def proto(self) -> ModelProto:
        return self.model.proto

    def serialized_model_proto(self) -> bytes:
        return self.model.proto.to_bytes()

    # -- vocabulary -------------------------------------------------------------------

    def GetPieceSize(self) -> int:
        return len(self.model.pieces)

    def _check_id(self, id: Any) -> int:
        if isinstance(id, (str, bytes, float)) or isinstance(id, bool) or not hasattr(id, "__index__"):
            raise TypeError(f"a piece id must be an int, got {type(id).__name__}.")
        index = int(id)
        if not 0 <= index < len(self.model.pieces):
            raise IndexError(f"piece id {index} is out of range (0..{len(self.model.pieces) - 1}).")
        return index

    def _each_id(self, id: Any, get: Any) -> Any:
        if _is_batch(id) or hasattr(id, "ndim"):
            return [get(self._check_id(i)) for i in list(id)]
        return get(self._check_id(id))

    def IdToPiece(self, id: Any) -> Any:
        return self._each_id(id, self.model.pieces.__getitem__)

    def PieceToId(self, piece: Any) -> Any:
        if _is_batch(piece):
            return [self.PieceToId(p) for p in piece]
        if isinstance(piece, (bytes, bytearray)):
            piece = bytes(piece).decode("utf-8", errors="replace")
        if not isinstance(piece, str):
            raise TypeError(f"a piece must be str, got {type(piece).__name__}.")
        return self.model.piece_to_id.get(piece, self.model.unk_id)

    def GetScore(self, id: Any) -> Any:
        return self._each_id(id, self.model.scores.__getitem__)

    def _is(self, id: Any, kind: PieceType) -> Any:
        types = self.model.types
        return self._each_id(id, lambda i: types[i] == kind)

    def IsUnknown(self, id: Any) -> Any:
        return self._is(id, PieceType.UNKNOWN)

    def IsControl(self, id: Any) -> Any:
        return self._is(id, PieceType.CONTROL)

    def IsUnused(self, id: Any) -> Any:
        return self._is(id, PieceType.UNUSED)

    def IsByte(self, id: Any) -> Any:
        return self._is(id, PieceType.BYTE)

    def _special_id(self, name: str) -> int:
        spec = self.model.proto.trainer_spec
        if name == "unk":
            return self.model.unk_id  # type: ignore[return-value]
        found = self.model.piece_to_id.get(getattr(spec, f"{name}_piece"))
        if found is not None and self.model.types[found] == PieceType.CONTROL:
            return found
        return -1

    def unk_id(self) -> int:
        return self._special_id("unk")

    def bos_id(self) -> int:
        return self._special_id("bos")

    def eos_id(self) -> int:
        return self._special_id("eos")

    def pad_id(self) -> int:
        return self._special_id("pad")

    # -- encoding ---------------------------------------------------------------------

    def _options(self, **given: Any) -> dict[str, Any]:
        options = dict(self._defaults)
        options.update({k: v for k, v in given.items() if v is not None})
        return options

    def _records(self, text: str, pairs: list[tuple[str, int]]) -> list[_Record]:
        """Where each piece of ``pairs`` (the model's pieces of ``text``) is in ``text``, as sentencepiece's proto says."""
        normalized, align = self.model.normalizer.normalize_with_offsets(text)
        data = text.encode("utf-8")
        types = self.model.types
        records: list[_Record] = []
        pos = 0
        for piece, piece_id in pairs:
            length = 1 if types[piece_id] == PieceType.BYTE else len(piece.encode("utf-8"))
            end = min(pos + length, len(align) - 1)
            begin_at, end_at = align[min(pos, len(align) - 1)], align[end]
            surface = data[begin_at:end_at].decode("utf-8", errors="replace")
            records.append((piece, piece_id, surface, begin_at, end_at))
            pos += length
        return records

    def _shape_records(self, records: list[_Record], options: dict[str, Any], text_bytes: int) -> list[_Record]:
        model = self.model
        if options["emit_unk_piece"]:
            unk_piece = model.pieces[model.unk_id]  # type: ignore[index]
            records = [(unk_piece if r[1] == model.unk_id else r[0], *r[1:]) for r in records]  # type: ignore[misc]
        if options["reverse"]:
            records = records[::-1]
        if options["add_bos"]:
            bos = self.bos_id()
            if bos < 0:
                raise ValueError("add_bos=True, but this model has no BOS control piece (bos_id() is -1).")
            records = [(model.pieces[bos], bos, "", 0, 0), *records]
        if options["add_eos"]:
            eos = self.eos_id()
            if eos < 0:
                raise ValueError("add_eos=True, but this model has no EOS control piece (eos_id() is -1).")
            records = [*records, (model.pieces[eos], eos, "", text_bytes, text_bytes)]
        return records

    def _spt(self, text: str, records: list[_Record], score: float | None = None) -> Any:
        from tokviz.sentencepiece.sentencepiece_pb2 import SentencePieceText

        spt = SentencePieceText(text=text)
        for piece, piece_id, surface, begin, end in records:
            spt.pieces.add(piece=piece, id=piece_id, surface=surface, begin=begin, end=end)
        if score is not None:
            spt.score = score
        return spt

    def _output(self, kind: str, text: str, was_bytes: bool, records: list[_Record], return_bytes: bool | None,
                score: float | None = None) -> Any:
        if kind == "int":
            return [r[1] for r in records]
        if kind == "str":
            return [r[0] for r in records]
        if kind == "bytes":
            return [r[0].encode("utf-8") for r in records]
        if kind == "numpy":
            return _numpy_ids([r[1] for r in records])
        if kind == "proto":
            return self._spt(text, records, score)
        if kind == "serialized_proto":
            return self._spt(text, records, score).SerializeToString()
        as_bytes = was_bytes if return_bytes is None else return_bytes
        if as_bytes:
            offsets = [(r[3], r[4]) for r in records]
            pieces: list[Any] = [r[0].encode("utf-8") for r in records]
        else:
            chars = _char_offsets(text)
            offsets = [(chars[r[3]], chars[r[4]]) for r in records]
            pieces = [r[0] for r in records]
        return {"ids": [r[1] for r in records], "pieces": pieces, "offsets": offsets}

    def _encode_one(self, value: Any, kind: str, options: dict[str, Any], return_bytes: bool | None) -> Any:
        text, was_bytes = _as_text(value)
        model = self.model
        plain = not (options["add_bos"] or options["add_eos"] or options["reverse"] or options["emit_unk_piece"])
        if options["enable_sampling"]:
            pairs = model.sample(text, int(options["nbest_size"]), float(options["alpha"]), _RANDOM)
        elif plain and (kind == "int" or kind == "str"):  # (the common call: a batch's texts as one text is encoded)
            return model.encode_as(text, kind == "int")
        else:
            pairs = model.encode(text)
        if plain and (kind == "int" or kind == "str"):
            return [i for _, i in pairs] if kind == "int" else [p for p, _ in pairs]
        if kind in ("int", "str", "bytes", "numpy"):  # no offsets needed
            records = [(p, i, "", 0, 0) for p, i in pairs]
        else:
            records = self._records(text, pairs)
        records = self._shape_records(records, options, len(text.encode("utf-8")))
        return self._output(kind, text, was_bytes, records, return_bytes)

    def _check_offset_options(self, kind: str, options: dict[str, Any]) -> None:
        if kind in ("offset_mapping", "proto", "serialized_proto") and any(
                options[k] for k in ("add_bos", "add_eos", "reverse", "emit_unk_piece")):
            raise SentencePieceError(f"UNIMPLEMENTED: add_bos, add_eos, reverse and emit_unk_piece do not go with "
                                     f"return_type={kind!r} (its offsets are into the input text).")

    def Encode(self, input: Any, add_bos: bool | None = None, add_eos: bool | None = None, reverse: bool | None = None,
               emit_unk_piece: bool | None = None, enable_sampling: bool | None = None, nbest_size: int | None = None,
               alpha: float | None = None, num_threads: int | None = None, thread_pool: ThreadPool | None = None,
               return_type: Any = None, out_type: Any = None, return_bytes: bool | None = None) -> Any:
        if (type(input) is str and add_bos is None and add_eos is None and reverse is None and emit_unk_piece is None
                and enable_sampling is None and num_threads is None and thread_pool is None and return_bytes is None
                and self._plain):
            # (the common call: one text, ids or pieces, no option; nbest_size and alpha only matter when sampling)
            kind = _return_kind(return_type, out_type, self._defaults["return_type"])
            if kind == "int" or kind == "str":
                return self.model.encode_as(input, kind == "int")
        options = self._options(add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
                                enable_sampling=enable_sampling, nbest_size=nbest_size, alpha=alpha)
        kind = _return_kind(return_type, out_type, options["return_type"])
        _check_return_bytes(kind, return_bytes)
        self._check_offset_options(kind, options)
        _check_threads(num_threads, thread_pool)
        if _is_batch(input):
            return [self._encode_one(text, kind, options, return_bytes) for text in input]
        return self._encode_one(input, kind, options, return_bytes)

    def _encode_as(self, kind: Any, input: Any, **options: Any) -> Any:
        options.pop("out_type", None)
        options.pop("return_type", None)
        return self.Encode(input, return_type=kind, **options)

    def EncodeAsPieces(self, input: Any, **options: Any) -> Any:
        if not options and type(input) is str and self._plain and self._model is not None:  # (no property call)
            return self._model.encode_as(input, False)
        return self._encode_as(str, input, **options)

    def EncodeAsIds(self, input: Any, **options: Any) -> Any:
        if not options and type(input) is str and self._plain and self._model is not None:  # (no property call)
            return self._model.encode_as(input, True)
        return self._encode_as(int, input, **options)

    def EncodeAsProto(self, input: Any, **options: Any) -> Any:
        return self._encode_as("proto", input, **options)

    def EncodeAsNumpy(self, input: Any, **options: Any) -> Any:
        return self._encode_as("numpy", input, **options)

    def EncodeAsOffsetMapping(self, input: Any, **options: Any) -> Any:
        return self._encode_as("offset_mapping", input, **options)

    def ParallelEncode(self, input: Any, add_bos: bool | None = None, add_eos: bool | None = None,
                       reverse: bool | None = None, emit_unk_piece: bool | None = None, chunk_len: int | None = None,
                       num_threads: int | None = None, thread_pool: ThreadPool | None = None, return_type: Any = None,
                       out_type: Any = None) -> Any:
        """``encode`` of long texts; sentencepiece cuts them into chunks for its threads, with the
        same result as one pass, which is what tokviz does (see the module docstring)."""
        if chunk_len is not None and (not isinstance(chunk_len, int) or chunk_len <= 0):
            raise ValueError("chunk_len must be a positive int.")
        return self.Encode(input, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
                           enable_sampling=False, num_threads=num_threads, thread_pool=thread_pool,
                           return_type=return_type, out_type=out_type)

    def ParallelEncodeAsPieces(self, input: Any, **options: Any) -> Any:
        return self.ParallelEncode(input, return_type=str, **options)

    def ParallelEncodeAsIds(self, input: Any, **options: Any) -> Any:
        return self.ParallelEncode(input, return_type=int, **options)

    def ParallelEncodeAsProto(self, input: Any, **options: Any) -> Any:
        return self.ParallelEncode(input, return_type="proto", **options)

    def ParallelEncodeAsNumpy(self, input: Any, **options: Any) -> Any:
        return self.ParallelEncode(input, return_type="numpy", **options)

    def NBestEncode(self, input: Any, add_bos: bool | None = None, add_eos: bool | None = None,
                    reverse: bool | None = None, emit_unk_piece: bool | None = None, nbest_size: int | None = None,
                    return_type: Any = None, out_type: Any = None) -> Any:
        options = self._options(add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece)
        kind = _return_kind(return_type, out_type, options["return_type"])
        self._check_offset_options(kind, options)
        if self.model.model_type != ModelType.UNIGRAM:
            raise SentencePieceError("UNIMPLEMENTED: n-best segmentation needs a unigram model "
                                     f"(this one is {self.model.model_type.name.lower()}).")
        size = int(nbest_size if nbest_size is not None else self._defaults.get("nbest_size", 1))
        if _is_batch(input):
            return [self._nbest_one(text, kind, options, size) for text in input]
        return self._nbest_one(input, kind, options, size)

    def _nbest_one(self, value: Any, kind: str, options: dict[str, Any], size: int) -> Any:
        text, was_bytes = _as_text(value)
        timeout = _NBEST_TIMEOUT[0]
        deadline = time.monotonic() + timeout / 1000 if timeout > 0 else None
        paths = self.model.nbest(text, max(1, size), deadline=deadline)
        text_bytes = len(text.encode("utf-8"))
        results = []
        for pairs, score in paths:
            records = self._records(text, pairs) if kind in ("proto", "serialized_proto", "offset_mapping") else \
                [(p, i, "", 0, 0) for p, i in pairs]
            records = self._shape_records(records, options, text_bytes)
            results.append((records, score))
        if kind in ("proto", "serialized_proto"):
            from tokviz.sentencepiece.sentencepiece_pb2 import NBestSentencePieceText

            nbest = NBestSentencePieceText()
            for records, score in results:
                nbest.nbests.append(self._spt(text, records, score))
            return nbest if kind == "proto" else nbest.SerializeToString()
        return [self._output(kind, text, was_bytes, records, None) for records, _ in results]

    def NBestEncodeAsPieces(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, return_type=str, **options)

    def NBestEncodeAsIds(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, return_type=int, **options)

    def NBestEncodeAsProto(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, return_type="proto", **options)

    def NBestEncodeAsNumpy(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, return_type="numpy", **options)

    def _sample_as(self, kind: Any, input: Any, nbest_size: int | None, alpha: float | None, options: dict[str, Any]) -> Any:
        options.pop("out_type", None)
        options.pop("return_type", None)
        return self.Encode(input, return_type=kind, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **options)

    def SampleEncodeAsPieces(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self._sample_as(str, input, nbest_size, alpha, options)

    def SampleEncodeAsIds(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self._sample_as(int, input, nbest_size, alpha, options)

    def SampleEncodeAsProto(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self._sample_as("proto", input, nbest_size, alpha, options)

    def SampleEncodeAsNumpy(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self._sample_as("numpy", input, nbest_size, alpha, options)

    # -- normalizing ------------------------------------------------------------------

    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """The normalized text sentencepiece segments; ``with_offsets=True`` adds, for every normalized
        character (byte, for bytes input), where it came from in the input, then where the input ends."""
        return normalize_like_sentencepiece(self.model.normalizer, input, bool(with_offsets))

    # -- decoding ---------------------------------------------------------------------

    def _decode_records(self, pieces: Sequence[str], ids: Sequence[int], with_records: bool = True
                        ) -> tuple[str, list[_Record]]:
        """The decoded text and (``with_records``), for each piece, its surface and byte offsets in that
        text (sentencepiece's rules)."""
        model = self.model
        spec, nspec = model.proto.trainer_spec, model.proto.normalizer_spec
        types, model_pieces = model.types, model.pieces
        unk_surface = spec.unk_surface
        strip_bos = nspec.add_dummy_prefix or nspec.remove_extra_whitespaces
        suffix = spec.treat_whitespace_as_suffix
        byte, control, unknown = PieceType.BYTE, PieceType.CONTROL, PieceType.UNKNOWN
        surfaces: list[str] = [""] * len(ids)
        pending = bytearray()
        pending_owners: list[int] = []
        is_bos_ws = True

        def flush() -> None:
            nonlocal is_bos_ws
            if pending:
                is_bos_ws = False
            pos = 0
            while pos < len(pending):
                length = _utf8_len(pending, pos)
                if length == 0:
                    surfaces[pending_owners[pos]] += "\ufffd"
                    pos += 1
                else:  # the piece whose byte completes the character shows it
                    surfaces[pending_owners[pos + length - 1]] += pending[pos:pos + length].decode("utf-8")
                    pos += length
            pending.clear()
            pending_owners.clear()

        index = -1
        for piece, piece_id in zip(pieces, ids):
            index += 1
            kind = types[piece_id]
            if kind == byte:
                pending.append(int(model_pieces[piece_id][3:5], 16))
                pending_owners.append(index)
                continue
            if pending:
                flush()
            if kind == control:
                continue
            if kind == unknown:
                surfaces[index] = unk_surface if model_pieces[piece_id] == piece else piece
                is_bos_ws = False
                continue
            if is_bos_ws:
                consumed = False
                # sentencepiece 0.2.3 strips the dummy prefix only; a suffix "▁" decodes to a space
                if not suffix and strip_bos and piece.startswith(_SPACE):
                    piece = piece[len(_SPACE):]
                    consumed = not nspec.remove_extra_whitespaces
                text = piece.replace(_SPACE, " ")
                if consumed or text:
                    is_bos_ws = False
            else:
                text = piece.replace(_SPACE, " ")
            surfaces[index] = text
        flush()
        if not with_records:
            return "".join(surfaces), []
        records: list[_Record] = []
        pos = 0
        for piece, piece_id, surface in zip(pieces, ids, surfaces):
            size = len(surface.encode("utf-8"))
            records.append((piece, piece_id, surface, pos, pos + size))
            pos += size
        return "".join(surfaces), records

    def _pieces_and_ids(self, items: Sequence[Any]) -> tuple[list[str], list[int], bool]:
        """``(pieces, ids, were the pieces bytes)`` of one decode input (ids or pieces)."""
        model = self.model
        if items and all(type(item) is int for item in items):  # (the usual input: plain ids)
            size = len(model.pieces)
            for item in items:
                if not 0 <= item < size:
                    raise IndexError(f"piece id {item} is out of range (0..{size - 1}).")
            return [model.pieces[i] for i in items], list(items), False
        pieces: list[str] = []
        ids: list[int] = []
        as_bytes = False
        for item in items:
            if isinstance(item, (bytes, bytearray)):
                as_bytes = True
                item = bytes(item).decode("utf-8", errors="replace")
            if isinstance(item, str):
                pieces.append(item)
                ids.append(model.piece_to_id.get(item, model.unk_id))  # type: ignore[arg-type]
            else:
                index = self._check_id(item)
                pieces.append(model.pieces[index])
                ids.append(index)
        return pieces, ids, as_bytes

    def _decode_one(self, items: Sequence[Any], kind: str, return_bytes: bool | None, chosen: bool = True) -> Any:
        pieces, ids, pieces_were_bytes = self._pieces_and_ids(items)
        if kind == "str" and not chosen and pieces_were_bytes:  # (bytes pieces in, bytes out, unless told)
            kind = "bytes"
        text, records = self._decode_records(pieces, ids, with_records=kind not in ("str", "bytes"))
        if kind == "str":
            return text
        if kind == "bytes":
            return text.encode("utf-8")
        if kind in ("proto", "serialized_proto"):
            spt = self._spt(text, records)
            return spt if kind == "proto" else spt.SerializeToString()
        as_bytes = pieces_were_bytes if return_bytes is None else return_bytes
        if as_bytes:
            return {"text": text.encode("utf-8"), "ids": [r[1] for r in records],
                    "pieces": [r[0].encode("utf-8") for r in records], "offsets": [(r[3], r[4]) for r in records]}
        chars = _char_offsets(text)
        return {"text": text, "ids": [r[1] for r in records], "pieces": [r[0] for r in records],
                "offsets": [(chars[r[3]], chars[r[4]]) for r in records]}

    def Decode(self, input: Any, return_type: Any = None, out_type: Any = None, num_threads: int | None = None,
               thread_pool: ThreadPool | None = None, return_bytes: bool | None = None) -> Any:
        kind = _return_kind(return_type, out_type, str)
        if kind in ("int", "numpy"):
            raise ValueError(f"decode returns text: return_type={kind} is not one of str, bytes, 'proto', "
                             "'serialized_proto', 'offset_mapping'.")
        _check_return_bytes(kind, return_bytes)
        _check_threads(num_threads, thread_pool)
        items, batch = _decode_input(input)
        chosen = return_type is not None or out_type is not None
        if batch:
            return [self._decode_one(item, kind, return_bytes, chosen) for item in items]
        return self._decode_one(items, kind, return_bytes, chosen)

    def DecodePieces(self, input: Any, out_type: Any = None, **options: Any) -> Any:
        return self.Decode(input, out_type=out_type, **options)

    def DecodeIds(self, input: Any, out_type: Any = None, **options: Any) -> Any:
        return self.Decode(input, out_type=out_type, **options)

    def DecodePiecesAsProto(self, input: Any, **options: Any) -> Any:
        return self.Decode(input, return_type="proto", **options)

    def DecodeIdsAsProto(self, input: Any, **options: Any) -> Any:
        return self.Decode(input, return_type="proto", **options)

    # -- sizes ------------------------------------------------------------------------

    def vocab_size(self) -> int:
        return self.GetPieceSize()

    def piece_size(self) -> int:
        return self.GetPieceSize()

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece: str) -> int:
        return self.PieceToId(piece)

    # snake_case names, as the sentencepiece package defines them
    load = Load
    load_from_file = LoadFromFile
    load_from_serialized_proto = LoadFromSerializedProto
    encode = Encode
    encode_as_pieces = EncodeAsPieces
    encode_as_ids = EncodeAsIds
    encode_as_proto = EncodeAsProto
    encode_as_numpy = EncodeAsNumpy
    encode_as_offset_mapping = EncodeAsOffsetMapping
    parallel_encode = ParallelEncode
    parallel_encode_as_pieces = ParallelEncodeAsPieces
    parallel_encode_as_ids = ParallelEncodeAsIds
    parallel_encode_as_proto = ParallelEncodeAsProto
    parallel_encode_as_numpy = ParallelEncodeAsNumpy
    nbest_encode = NBestEncode
    nbest_encode_as_pieces = NBestEncodeAsPieces
    nbest_encode_as_ids = NBestEncodeAsIds
    nbest_encode_as_proto = NBestEncodeAsProto
    nbest_encode_as_numpy = NBestEncodeAsNumpy
    sample_encode_as_pieces = SampleEncodeAsPieces
    sample_encode_as_ids = SampleEncodeAsIds
    sample_encode_as_proto = SampleEncodeAsProto
    sample_encode_as_numpy = SampleEncodeAsNumpy
    decode = Decode
    decode_ids = DecodeIds
    decode_pieces = DecodePieces
    decode_ids_as_proto = DecodeIdsAsProto
    decode_pieces_as_proto = DecodePiecesAsProto
    normalize = Normalize
    get_piece_size = GetPieceSize
    id_to_piece = IdToPiece
    piece_to_id = PieceToId
    get_score = GetScore
    is_unknown = IsUnknown
    is_control = IsControl
    is_unused = IsUnused
    is_byte = IsByte
    Tokenize = tokenize = Encode
    Detokenize = detokenize = Decode


def _check_threads(num_threads: Any, thread_pool: Any) -> None:
    if num_threads is not None and (not isinstance(num_threads, int) or isinstance(num_threads, bool)):
        raise TypeError("num_threads must be an int.")
    if thread_pool is not None and not isinstance(thread_pool, ThreadPool):
        raise TypeError("thread_pool must be a sentencepiece ThreadPool.")


def _decode_input(value: Any) -> tuple[Any, bool]:
    """``(items, is_batch)``: one sequence of ids / pieces, or a batch of them (see ``Decode``)."""
    if value is None:
        return [], False
    if hasattr(value, "ndim") and hasattr(value, "dtype"):  # numpy
        if value.dtype.kind not in "iu":
            raise TypeError(f"decode takes integer ids; this array holds {value.dtype}.")
        if value.ndim == 0:
            return [int(value)], False
        if value.ndim == 1:
            return value.tolist(), False
        if value.ndim == 2:
            return value.tolist(), True
        raise TypeError(f"decode takes a 1-D array of ids or a 2-D batch, not {value.ndim}-D.")
    if isinstance(value, (str, bytes, bytearray)) or hasattr(value, "__index__"):
        return [value], False
    items = list(value)  # (one read of the input: a sequence whose length changes is read once)
    nested = [item for item in items if hasattr(item, "ndim") and getattr(item, "ndim", 0) > 0
              or not isinstance(item, (str, bytes, bytearray)) and not hasattr(item, "__index__")]
    if not nested:
        return items, False
    batch = []
    for item in items:
        inner, is_batch = _decode_input(item)
        if is_batch:
            raise TypeError("decode takes ids, pieces, or a batch of them (one level of nesting).")
        batch.append(inner)
    return batch, True


def normalize_like_sentencepiece(normalizer: Any, input: Any, with_offsets: bool) -> Any:
    """``Normalize`` of str / bytes / a list of them, with sentencepiece's offsets when asked."""
    if _is_batch(input):
        return [normalize_like_sentencepiece(normalizer, item, with_offsets) for item in input]
    text, was_bytes = _as_text(input)
    if not with_offsets:
        normalized = normalizer.normalize(text)
        return normalized.encode("utf-8") if was_bytes else normalized
    normalized, align = normalizer.normalize_with_offsets(text)
    if was_bytes:
        return normalized.encode("utf-8"), align
    chars = _char_offsets(text)
    offsets: list[int] = []
    pos = 0
    for char in normalized:
        offsets.append(chars[align[pos]])
        pos += len(char.encode("utf-8"))
    offsets.append(chars[align[-1]] if align else 0)
    return normalized, offsets

