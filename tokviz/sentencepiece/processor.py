"""``SentencePieceProcessor`` with the ``sentencepiece`` package's Python names (snake_case and CamelCase).

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
"""

from __future__ import annotations

import os
import random
from typing import Any, Sequence

from tokviz.errors import TokvizError
from tokviz.sentencepiece.model import SentencePieceModel
from tokviz.sentencepiece.model_proto import ModelProto, PieceType

__all__ = ["SentencePieceProcessor", "SentencePieceError"]

_SPACE = "\u2581"


class SentencePieceError(TokvizError, RuntimeError):
    """A SentencePiece call that cannot be done (bad option, missing model file, bad id).

    A ``RuntimeError`` as in the ``sentencepiece`` package, and a :class:`TokvizError` (``ValueError``).
    """


def _piece_to_byte(piece: str) -> int:
    return int(piece[3:5], 16)


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


class SentencePieceProcessor:
    """Load a ``.model`` and encode / decode like ``sentencepiece.SentencePieceProcessor``."""

    def __init__(self, model_file: str | os.PathLike | None = None, model_proto: bytes | None = None,
                 out_type: type = int, add_bos: bool = False, add_eos: bool = False, reverse: bool = False,
                 emit_unk_piece: bool = False, enable_sampling: bool = False, nbest_size: int = -1,
                 alpha: float = 0.1, num_threads: int = -1) -> None:
        self._model: SentencePieceModel | None = None
        self._defaults = dict(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                              emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling,
                              nbest_size=nbest_size, alpha=alpha)
        self._rng = random.Random()
        if model_file is not None or model_proto is not None:
            self.Load(model_file=model_file, model_proto=model_proto)

    # -- loading ----------------------------------------------------------------------

    def Load(self, model_file: str | os.PathLike | None = None, model_proto: bytes | None = None) -> bool:
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

    def LoadFromSerializedProto(self, serialized: bytes) -> bool:
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

    def _check_id(self, id: int) -> int:
        if not 0 <= id < len(self.model.pieces):
            raise IndexError("piece id is out of range.")
        return id

    def IdToPiece(self, id: int | Sequence[int]) -> Any:
        if isinstance(id, (list, tuple)):
            return [self.IdToPiece(i) for i in id]
        return self.model.pieces[self._check_id(int(id))]

    def PieceToId(self, piece: str | Sequence[str]) -> Any:
        if isinstance(piece, (list, tuple)):
            return [self.PieceToId(p) for p in piece]
        return self.model.piece_to_id.get(piece, self.model.unk_id)

    def GetScore(self, id: int | Sequence[int]) -> Any:
        if isinstance(id, (list, tuple)):
            return [self.GetScore(i) for i in id]
        return self.model.scores[self._check_id(int(id))]

    def _is(self, id: Any, kind: PieceType) -> Any:
        if isinstance(id, (list, tuple)):
            return [self._is(i, kind) for i in id]
        return self.model.types[self._check_id(int(id))] == kind

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
        piece = getattr(spec, f"{name}_piece")
        found = self.model.piece_to_id.get(piece)
        if name == "unk":
            return self.model.unk_id  # type: ignore[return-value]
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

    def _shape(self, pairs: list[tuple[str, int]], options: dict[str, Any]) -> list[Any]:
        model = self.model
        if options["emit_unk_piece"]:
            unk_piece = model.pieces[model.unk_id]  # type: ignore[index]
            pairs = [(unk_piece if i == model.unk_id else p, i) for p, i in pairs]
        if options["reverse"]:
            pairs = pairs[::-1]
        if options["add_bos"] and self.bos_id() >= 0:
            pairs = [(model.pieces[self.bos_id()], self.bos_id()), *pairs]
        if options["add_eos"] and self.eos_id() >= 0:
            pairs = [*pairs, (model.pieces[self.eos_id()], self.eos_id())]
        out_type = options["out_type"]
        if out_type is str or out_type == "str":
            return [p for p, _ in pairs]
        if out_type is int or out_type == "int":
            return [i for _, i in pairs]
        raise SentencePieceError(f"out_type must be int or str, got {out_type!r}.")

    def _encode_one(self, text: str, options: dict[str, Any]) -> list[Any]:
        if not isinstance(text, str):
            raise TypeError(f"encode takes text (str), got {type(text).__name__}")
        if options["enable_sampling"]:
            pairs = self.model.sample(text, int(options["nbest_size"]), float(options["alpha"]), self._rng)
        else:
            pairs = self.model.encode(text)
        return self._shape(pairs, options)

    def Encode(self, input: str | Sequence[str], out_type: type | None = None, add_bos: bool | None = None,
               add_eos: bool | None = None, reverse: bool | None = None, emit_unk_piece: bool | None = None,
               enable_sampling: bool | None = None, nbest_size: int | None = None, alpha: float | None = None,
               num_threads: int | None = None) -> Any:
        options = self._options(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                                emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling,
                                nbest_size=nbest_size, alpha=alpha)
        if isinstance(input, str):
            return self._encode_one(input, options)
        return [self._encode_one(text, options) for text in input]

    def EncodeAsPieces(self, input: Any, **options: Any) -> Any:
        return self.Encode(input, out_type=str, **options)

    def EncodeAsIds(self, input: Any, **options: Any) -> Any:
        return self.Encode(input, out_type=int, **options)

    def NBestEncode(self, input: Any, out_type: type | None = None, nbest_size: int | None = None, **options: Any) -> Any:
        if not isinstance(input, str):
            return [self.NBestEncode(text, out_type, nbest_size, **options) for text in input]
        shaped = self._options(out_type=out_type, **options)
        paths = self.model.nbest(input, int(nbest_size if nbest_size is not None else 1))
        return [self._shape(pairs, shaped) for pairs, _ in paths]

    def NBestEncodeAsPieces(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, out_type=str, nbest_size=nbest_size, **options)

    def NBestEncodeAsIds(self, input: Any, nbest_size: int | None = None, **options: Any) -> Any:
        return self.NBestEncode(input, out_type=int, nbest_size=nbest_size, **options)

    def SampleEncodeAsPieces(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self.Encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **options)

    def SampleEncodeAsIds(self, input: Any, nbest_size: int | None = None, alpha: float | None = None, **options: Any) -> Any:
        return self.Encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **options)

    def Normalize(self, input: str) -> str:
        return self.model.normalizer.normalize(input)

    # -- decoding ---------------------------------------------------------------------

    def _decode_pairs(self, pairs: Sequence[tuple[str, int]]) -> str:
        model = self.model
        spec, nspec = model.proto.trainer_spec, model.proto.normalizer_spec
        types = model.types
        unk_surface = spec.unk_surface
        strip_bos = nspec.add_dummy_prefix or nspec.remove_extra_whitespaces
        suffix = spec.treat_whitespace_as_suffix
        parts: list[str] = []
        pending = bytearray()
        is_bos_ws = True

        def flush() -> None:
            nonlocal is_bos_ws
            if pending:
                is_bos_ws = False
            pos = 0
            while pos < len(pending):
                length = _utf8_len(pending, pos)
                if length == 0:
                    parts.append("\ufffd")
                    pos += 1
                else:
                    parts.append(pending[pos:pos + length].decode("utf-8"))
                    pos += length
            pending.clear()

        for piece, piece_id in pairs:
            kind = types[piece_id]
            if kind == PieceType.BYTE:
                pending.append(_piece_to_byte(model.pieces[piece_id]))
                continue
            flush()
            if kind == PieceType.CONTROL:
                continue
            if kind == PieceType.UNKNOWN:
                parts.append(unk_surface if model.pieces[piece_id] == piece else piece)
                is_bos_ws = False
                continue
            consumed = False
            # sentencepiece 0.2.3 strips the dummy prefix only; a suffix "▁" decodes to a space
            if not suffix and is_bos_ws and strip_bos and piece.startswith(_SPACE):
                piece = piece[len(_SPACE):]
                consumed = not nspec.remove_extra_whitespaces
            text = piece.replace(_SPACE, " ")
            parts.append(text)
            if consumed or text:
                is_bos_ws = False
        flush()
        return "".join(parts)

    def DecodePieces(self, pieces: Sequence[str] | Sequence[Sequence[str]]) -> Any:
        if pieces and not isinstance(pieces[0], str):
            return [self.DecodePieces(p) for p in pieces]  # type: ignore[arg-type]
        model = self.model
        return self._decode_pairs([(p, model.piece_to_id.get(p, model.unk_id)) for p in pieces])  # type: ignore[misc]

    def DecodeIds(self, ids: Sequence[int] | Sequence[Sequence[int]]) -> Any:
        if ids and isinstance(ids[0], (list, tuple)):
            return [self.DecodeIds(i) for i in ids]  # type: ignore[arg-type]
        pieces = self.model.pieces
        return self._decode_pairs([(pieces[self._check_id(int(i))], int(i)) for i in ids])  # type: ignore[arg-type]

    def Decode(self, input: Any, out_type: type = str, num_threads: int | None = None) -> Any:
        if isinstance(input, int):
            return self.DecodeIds([input])
        if isinstance(input, str):
            return self.DecodePieces([input])
        if not input:
            return ""
        first = input[0]
        if isinstance(first, str):
            return self.DecodePieces(input)
        if isinstance(first, (list, tuple)):
            return [self.Decode(item) for item in input]
        return self.DecodeIds(input)

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
    nbest_encode = NBestEncode
    nbest_encode_as_pieces = NBestEncodeAsPieces
    nbest_encode_as_ids = NBestEncodeAsIds
    sample_encode_as_pieces = SampleEncodeAsPieces
    sample_encode_as_ids = SampleEncodeAsIds
    decode = Decode
    decode_ids = DecodeIds
    decode_pieces = DecodePieces
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

