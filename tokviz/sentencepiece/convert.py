"""A SentencePiece model as a tokviz ``Tokenizer`` (in HF's components) and back.

``tokenizer_from_proto`` encodes and decodes as sentencepiece does, where HF's converters differ
(whitespace rules, user-defined symbols, the unknown piece's text):

- normalizer: :func:`normalizer_from_spec` over the whole line (charsmap, whitespace removal,
  escaping, dummy prefix);
- pre-tokenizer: a ``Split`` isolating user-defined symbols in the normalized text, and
  ``Metaspace(split=True)`` when cutting before each ``▁`` provably changes nothing;
- model: ``Unigram(pieces, unk_id, byte_fallback)``, or ``BPE(vocab, merges, unk_token,
  fuse_unk=True, byte_fallback)`` with the merges read off the vocabulary (every split of a
  piece into two pieces, ranked by the piece's score, as HF's ``SentencePieceExtractor`` does);
- decoder: ``Sequence([Replace(unk, ' ⁇ '), Replace('▁', ' '), ByteFallback(), Fuse(), Strip(' ', 1, 0)])``
  (ByteFallback with byte fallback, Strip with a dummy prefix);
- control pieces become special added tokens: typed in the text they are matched as HF matches them,
  where sentencepiece never does (see :func:`tokenizer_from_proto`).

``proto_from_tokenizer`` goes back: a Unigram or BPE tokenizer with a ``Precompiled`` (or no)
normalizer and a ``Metaspace`` pre-tokenizer becomes a ``ModelProto`` that sentencepiece loads.

    >>> from tokviz.sentencepiece.model_proto import ModelProto, SentencePiece, PieceType, TrainerSpec, NormalizerSpec
    >>> proto = ModelProto(pieces=[SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("▁h", -1),
    ...     SentencePiece("ug", -2), SentencePiece("▁", -3), SentencePiece("h", -4), SentencePiece("u", -5), SentencePiece("g", -6)],
    ...     trainer_spec=TrainerSpec(model_type=2), normalizer_spec=NormalizerSpec(name="identity"))
    >>> tok = tokenizer_from_proto(proto)
    >>> tok.encode("hug").tokens
    ['▁h', 'ug']
    >>> [p.piece for p in proto_from_tokenizer(tok).pieces] == [p.piece for p in proto.pieces]
    True

HF's BPE ranks merges, sentencepiece's BPE ranks the merged pieces' scores: for models made by
sentencepiece's BPE trainer the two agree on almost every word, not all (see the tests).
"""

from __future__ import annotations

from typing import Any, Sequence

from tokviz import decoders, normalizers, pre_tokenizers
from tokviz.added_vocabulary import AddedToken
from tokviz.errors import SerializationError
from tokviz.models.bpe.model import BPE
from tokviz.models.unigram.model import Unigram
from tokviz.patterns import Regex
from tokviz.sentencepiece.model_proto import ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec
from tokviz.sentencepiece.normalizer import charsmap_for_rule

__all__ = ["tokenizer_from_proto", "assemble_tokenizer", "normalizer_from_spec", "proto_from_tokenizer", "model_from_proto", "bpe_merges", "from_model_bytes", "to_model_bytes"]

_SPACE = "\u2581"


def bpe_merges(pieces: list[tuple[str, float]]) -> list[tuple[str, str]]:
    """HF's ``SentencePieceExtractor``: every ``(left, right)`` split of a piece into two pieces,
    ordered by the piece's score (best first), then by the ids of ``left`` and ``right``.

    >>> bpe_merges([("<unk>", 0.0), ("ab", -1.0), ("abc", -2.0), ("a", -3.0), ("b", -4.0), ("c", -5.0)])
    [('a', 'b'), ('ab', 'c')]
    """
    vocab = {piece: i for i, (piece, _) in enumerate(pieces)}
    merges: list[tuple[str, str, float, int]] = []
    for piece, score in pieces:
        local = []
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                local.append((left, right))
        local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        merges.extend((left, right, score, vocab[piece]) for left, right in local)
    merges.sort(key=lambda m: (-m[2], m[3]))
    return [(left, right) for left, right, _, _ in merges]


def _charsmap_of(spec: NormalizerSpec) -> bytes:
    if spec.precompiled_charsmap:
        return spec.precompiled_charsmap
    if spec.name and spec.name != "identity":
        try:
            return charsmap_for_rule(spec.name)
        except ValueError:
            return b""
    return b""


def model_from_proto(proto: ModelProto) -> Any:
    """The tokviz model (``Unigram`` or ``BPE``) of a SentencePiece model."""
    spec = proto.trainer_spec
    byte_fallback = bool(spec.byte_fallback) or any(p.type == PieceType.BYTE for p in proto.pieces)
    unk_id = next((i for i, p in enumerate(proto.pieces) if p.type == PieceType.UNKNOWN), None)
    pairs = [(p.piece, p.score) for p in proto.pieces]
    if spec.model_type == ModelType.UNIGRAM:
        return Unigram(pairs, unk_id=unk_id, byte_fallback=byte_fallback)
    if spec.model_type == ModelType.BPE:
        vocab = {piece: i for i, (piece, _) in enumerate(pairs)}
        unk = proto.pieces[unk_id].piece if unk_id is not None else None
        return BPE(vocab, bpe_merges(pairs), unk_token=unk, fuse_unk=True, byte_fallback=byte_fallback)
    raise SerializationError(
        f"A SentencePiece {ModelType(spec.model_type).name.lower()} model has no tokviz model to convert to (only unigram and bpe).")


def normalizer_from_spec(spec: NormalizerSpec) -> Any:
    """sentencepiece's ``Normalizer::Normalize`` for a ``NormalizerSpec`` as tokviz normalizers, field by field.

    - the charsmap (``precompiled_charsmap``, or the named rule's): ``Precompiled``;
    - ``remove_extra_whitespaces``: spaces at both ends removed and runs of spaces made one (spaces
      only, as sentencepiece: tabs and newlines stay unless the charsmap maps them to spaces);
    - ``escape_whitespaces``: every space becomes ``▁``;
    - ``add_dummy_prefix``: ``▁`` (a space when not escaping) in front of any non-empty text.

    >>> n = normalizer_from_spec(NormalizerSpec(name="identity", remove_extra_whitespaces=False))
    >>> n.normalize_str("x  y")
    '▁x▁▁y'
    >>> normalizer_from_spec(NormalizerSpec(name="identity")).normalize_str("  x  y ")
    '▁x▁y'
    """
    steps: list[Any] = []
    charsmap = _charsmap_of(spec)
    if charsmap:
        steps.append(normalizers.Precompiled(charsmap))
    if spec.remove_extra_whitespaces:
        # (\A and \z: the text's ends; ^ and $ are line anchors and would strip spaces after a newline)
        steps += [normalizers.Replace(Regex(r"\A +| +\z"), ""), normalizers.Replace(Regex(" {2,}"), " ")]
    if spec.escape_whitespaces:
        steps.append(normalizers.Replace(" ", _SPACE))
    if spec.add_dummy_prefix:
        steps.append(normalizers.Prepend(_SPACE if spec.escape_whitespaces else " "))
    return normalizers.Sequence(steps)


def _words_start_at_spaces(proto: ModelProto) -> bool:
    """Whether no piece the model can pick holds a ``▁`` after its first character: then every ``▁``
    starts a new piece, and cutting the text before each one (``Metaspace(split=True)``) changes no
    segmentation. Llama 2's ``▁▁`` / ``▁▁▁▁`` pieces (code indentation) make this false."""
    if proto.trainer_spec.treat_whitespace_as_suffix or not proto.normalizer_spec.escape_whitespaces:
        return False
    matchable = (PieceType.NORMAL, PieceType.UNUSED)
    return not any(_SPACE in p.piece[1:] for p in proto.pieces if p.type in matchable)


def tokenizer_from_proto(proto: ModelProto, *, add_bos: bool = False) -> Any:
    """The tokviz ``Tokenizer`` of a SentencePiece model: the one conversion (``tokviz.load``, Compare and
    Inspect of a ``.model`` through :func:`from_model_bytes`, trained models through their histories).

    It segments as sentencepiece does (every ``normalizer_spec`` field honoured, see
    :func:`normalizer_from_spec`; no word split unless it provably changes nothing, see
    :func:`_words_start_at_spaces`). Control pieces become special added tokens; user-defined ones are
    found in the normalized text (:func:`assemble_tokenizer`). The decoder writes the unknown piece as
    ``unk_surface`` (' ⁇ '), turns ``▁`` back into spaces, joins byte pieces and drops the dummy prefix,
    as sentencepiece's ``decode``. With ``add_bos`` the model's BOS piece (``bos_piece``, when it is a
    control piece) goes in front, as transformers' ``LlamaTokenizerFast`` puts it for the same file (then
    ``encode(text, add_special_tokens=False)`` is sentencepiece's ``encode(text)``); without, ``encode``
    is sentencepiece's ``encode`` (what the app shows for the models it trains).

    Control pieces typed in the text (``"a <s> b"``): we follow HF, not sentencepiece. They are special
    added tokens, as in every HF conversion of a ``.model`` (transformers' ``LlamaTokenizerFast``,
    ``T5TokenizerFast``), so ``<s>`` typed is the piece ``<s>`` (``['▁a', '<s>', '▁b']``); sentencepiece
    never matches a control piece in text (``['▁a', '▁', '<', 's', '>', '▁b']``). Why: this tokenizer is
    also the ``tokenizer.json`` and transformers folder the app writes, where users load it in HF and
    expect HF's answer, and ``decode(..., skip_special_tokens=True)`` needs them special. HF's switch gives
    sentencepiece's reading: with ``tokenizer.encode_special_tokens = True`` a BPE model's ids are
    sentencepiece's; a Unigram model still picks a typed control piece or ``<unk>`` as that piece (score
    0 in its vocabulary, as in HF's conversion). Compare with :class:`~tokviz.sentencepiece.SentencePieceProcessor`
    for sentencepiece's own answer.
    """
    from tokviz.processors import TemplateProcessing

    spec = proto.trainer_spec
    tokenizer = assemble_tokenizer(
        model_from_proto(proto), proto.normalizer_spec,
        byte_fallback=bool(spec.byte_fallback) or any(p.type == PieceType.BYTE for p in proto.pieces),
        controls=[p.piece for p in proto.pieces if p.type == PieceType.CONTROL],
        user_defined=[p.piece for p in proto.pieces if p.type == PieceType.USER_DEFINED],
        split_at_spaces=_words_start_at_spaces(proto), treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix,
        unk_surface=spec.unk_surface)
    bos = _control_id(proto, spec.bos_piece) if add_bos else None
    if bos is not None:
        piece = proto.pieces[bos].piece
        tokenizer.post_processor = TemplateProcessing(single=f"{piece}:0 $A:0", pair=f"{piece}:0 $A:0 {piece}:1 $B:1",
                                                      special_tokens=[(piece, bos)])
    return tokenizer


def assemble_tokenizer(model: Any, normalizer_spec: NormalizerSpec, *, byte_fallback: bool, controls: Sequence[str] = (),
                       user_defined: Sequence[str] = (), split_at_spaces: bool = False,
                       treat_whitespace_as_suffix: bool = False, unk_surface: str = " \u2047 ") -> Any:
    """The ``Tokenizer`` around a SentencePiece model's segmenter (tokviz ``Unigram`` or ``BPE``):
    :func:`normalizer_from_spec`, ``Metaspace(split=True)`` when ``split_at_spaces`` (see
    :func:`_words_start_at_spaces`), the decoder, ``controls`` as special added tokens and
    ``user_defined`` as added tokens. :func:`tokenizer_from_proto` and the app's SentencePiece
    pipelines (``pipeline_config.sentencepiece_tokenizer``) both build through it."""
    from tokviz.tokenizer import Tokenizer

    tokenizer = Tokenizer(model)
    tokenizer.normalizer = _keeping_symbols(normalizer_from_spec(normalizer_spec), normalizer_spec, user_defined)
    parts: list[Any] = []
    unk = _unk_piece(model)
    if unk:
        # sentencepiece decodes the unknown piece as trainer_spec.unk_surface (' ⁇ '), not as '<unk>'
        parts.append(decoders.Replace(Regex(r"\A" + _literal(unk) + r"\z"), unk_surface))
    if normalizer_spec.escape_whitespaces:
        parts.append(decoders.Replace(_SPACE, " "))
    if byte_fallback:
        parts.append(decoders.ByteFallback())
    parts.append(decoders.Fuse())
    if normalizer_spec.add_dummy_prefix and not treat_whitespace_as_suffix:
        parts.append(decoders.Strip(" ", 1, 0))
    tokenizer.decoder = decoders.Sequence(parts)
    splitters: list[Any] = []
    if user_defined:
        # sentencepiece finds user-defined symbols inside the normalized text (dummy prefix, whitespace
        # rules and escaping applied to the whole line), longest match first, each one piece. HF's
        # converters make them added tokens cut out of the raw text, each remaining part normalized on
        # its own: 'a<sep>b' gives ['▁a', '<sep>', '▁b'] there, ['▁a', '<sep>', 'b'] in sentencepiece,
        # and '<sep>' alone ['<sep>'] against ['▁', '<sep>']. We follow sentencepiece: a Split
        # pre-tokenizer isolates them after normalization; the model keeps each whole (a Unigram
        # piece of score 0 beats any split of it; BPE returns a word that is a piece as that piece).
        # A symbol the charsmap would change is kept as typed (_keeping_symbols), as sentencepiece does.
        symbols = sorted(dict.fromkeys(user_defined), key=lambda piece: (-len(piece), piece))
        splitters.append(pre_tokenizers.Split(Regex("|".join(map(_literal, symbols))), "isolated"))
        if isinstance(model, BPE):
            model.ignore_merges = True
    if split_at_spaces:
        splitters.append(pre_tokenizers.Metaspace(replacement=_SPACE, prepend_scheme="never", split=True))
    if splitters:
        tokenizer.pre_tokenizer = splitters[0] if len(splitters) == 1 else pre_tokenizers.Sequence(splitters)
    if controls:
        tokenizer.add_tokens([AddedToken(piece, normalized=False, special=True) for piece in controls])
    return tokenizer


#: stand-ins for user-defined symbols while the charsmap runs: Unicode noncharacters (U+FDD0-U+FDEF),
#: "reserved for a process's internal use", which no charsmap maps and text should never hold
_STAND_INS = [chr(code) for code in range(0xFDD0, 0xFDF0)]


def _keeping_symbols(normalizer: Any, normalizer_spec: NormalizerSpec, user_defined: Sequence[str]) -> Any:
    """``normalizer`` keeping, as typed, each user-defined symbol its charsmap would change: sentencepiece's
    normalizer copies a symbol it meets in the raw text without normalizing it (``Ｘ`` stays ``Ｘ`` under
    nmt_nfkc, and is then found as that piece), where ``Precompiled`` would make it ``X``. Each such symbol
    (longest first) becomes a stand-in before the charsmap and itself again after the other steps.

    >>> spec = NormalizerSpec(name="nmt_nfkc", precompiled_charsmap=charsmap_for_rule("nmt_nfkc"))
    >>> _keeping_symbols(normalizer_from_spec(spec), spec, ["Ｘ", "<sep>"]).normalize_str("Ｘ ＡＸ")
    '▁Ｘ▁AＸ'

    Where sentencepiece can still differ: a charsmap entry of several characters that starts before a
    symbol and runs into it (sentencepiece applies the entry, the stand-in takes the symbol first), and
    more than 32 changed symbols (the rest are normalized, as before)."""
    charsmap = _charsmap_of(normalizer_spec)
    if not charsmap or not user_defined:
        return normalizer
    precompiled = normalizers.Precompiled(charsmap)
    changed = [symbol for symbol in sorted(dict.fromkeys(user_defined), key=lambda piece: (-len(piece), piece))
               if precompiled.normalize_str(symbol) != symbol][: len(_STAND_INS)]
    if not changed:
        return normalizer
    stand_ins = list(zip(changed, _STAND_INS))
    return normalizers.Sequence([*(normalizers.Replace(symbol, stand_in) for symbol, stand_in in stand_ins),
                                 *normalizer.normalizers,
                                 *(normalizers.Replace(stand_in, symbol) for symbol, stand_in in stand_ins)])


def _unk_piece(model: Any) -> str | None:
    if isinstance(model, Unigram):
        return None if model.unk_id is None else model.id_to_token(model.unk_id)
    return getattr(model, "unk_token", None)


def _literal(text: str) -> str:
    """``text`` as a pattern matching itself, escaping only the metacharacters Python's ``regex`` and
    HF's Oniguruma share (``regex.escape`` writes ``\\<``, a word boundary in some Oniguruma syntaxes)."""
    return "".join("\\" + char if char in "\\.^$|?*+()[]{}" else char for char in text)


def _control_id(proto: ModelProto, piece: str) -> int | None:
    """The id of ``piece`` when it is a control piece of the model (sentencepiece's ``bos_id()`` rule)."""
    for i, p in enumerate(proto.pieces):
        if p.piece == piece:
            return i if p.type == PieceType.CONTROL else None
    return None


def _find(component: Any, kind: type) -> Any:
    if component is None:
        return None
    if isinstance(component, kind):
        return component
    for inner in getattr(component, "normalizers", ()) or getattr(component, "pretokenizers", ()) or ():
        found = _find(inner, kind)
        if found is not None:
            return found
    return None


def proto_from_tokenizer(tokenizer: Any) -> ModelProto:
    """A ``ModelProto`` for a tokviz ``Tokenizer`` with a Unigram or BPE model (SentencePiece-shaped pipelines)."""
    model = tokenizer.model
    added = {token.content: token for token in tokenizer.get_added_tokens_decoder().values()}
    if isinstance(model, Unigram):
        pairs = list(model.vocab)
        model_type = ModelType.UNIGRAM
        unk_id = model.unk_id
        byte_fallback = model.byte_fallback
    elif isinstance(model, BPE):
        vocab = model.get_vocab()
        ordered = sorted(vocab.items(), key=lambda item: item[1])
        if [i for _, i in ordered] != list(range(len(ordered))):
            raise SerializationError("The BPE vocabulary has gaps in its ids; a .model needs ids 0..n-1.")
        # sentencepiece's BPE merges the pair whose piece scores highest: a piece made by merge r scores -r,
        # a piece no merge makes (characters, bytes, Mistral's '▁▁') scores below every merge
        rank_of: dict[str, int] = {}
        for rank, (left, right) in enumerate(model.merges):
            rank_of.setdefault(left + right, rank)
        below = len(rank_of) + len(ordered)
        pairs = [(piece, -float(rank_of[piece]) if piece in rank_of else -float(below + i)) for piece, i in ordered]
        model_type = ModelType.BPE
        unk_id = vocab.get(model.unk_token) if getattr(model, "unk_token", None) else None
        byte_fallback = bool(getattr(model, "byte_fallback", False))
    else:
        raise SerializationError(f"Only Unigram and BPE tokenizers can be written as a .model, not {type(model).__name__}.")
    if unk_id is None:
        raise SerializationError("A .model needs an unknown piece: the model has no unk token.")
    # user-defined pieces: non-special added tokens, or the symbols assemble_tokenizer's Split cuts out
    split = _find(tokenizer.pre_tokenizer, pre_tokenizers.Split)
    symbol = split.pattern.compiled.fullmatch if split is not None and isinstance(split.pattern, Regex) else (lambda _: None)
    pieces: list[SentencePiece] = []
    for i, (piece, score) in enumerate(pairs):
        if i == unk_id:
            kind = PieceType.UNKNOWN
        elif piece in added:
            kind = PieceType.CONTROL if added[piece].special else PieceType.USER_DEFINED
        elif symbol(piece):
            kind = PieceType.USER_DEFINED
        elif byte_fallback and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            kind = PieceType.BYTE
        else:
            kind = PieceType.NORMAL
        pieces.append(SentencePiece(piece, 0.0 if kind != PieceType.NORMAL else score, kind))
    precompiled = _find(tokenizer.normalizer, normalizers.Precompiled)
    metaspace = _find(tokenizer.pre_tokenizer, pre_tokenizers.Metaspace)
    prepend = _find(tokenizer.normalizer, normalizers.Prepend)
    add_dummy_prefix = prepend is not None or (metaspace is not None and metaspace.prepend_scheme != "never")
    if prepend is None and metaspace is None:
        add_dummy_prefix = True
    normalizer_values: dict[str, Any] = {"name": "identity", "add_dummy_prefix": add_dummy_prefix}
    if _find(tokenizer.normalizer, normalizers.Replace) is not None or prepend is not None:
        # (a normalizer from normalizer_from_spec: whitespace removal only when its two Replace steps are there)
        patterns = [str(getattr(step, "pattern", "")) for step in getattr(tokenizer.normalizer, "normalizers", ()) or ()]
        if prepend is not None and not any("^ +" in p for p in patterns):
            normalizer_values["remove_extra_whitespaces"] = False
    if precompiled is not None:
        normalizer_values = {"name": "user_defined", "precompiled_charsmap": precompiled.precompiled_charsmap,
                             "add_dummy_prefix": add_dummy_prefix}
        for rule in ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"):
            if charsmap_for_rule(rule) == precompiled.precompiled_charsmap:
                normalizer_values["name"] = rule
    spec_values: dict[str, Any] = {"model_type": int(model_type), "vocab_size": len(pieces), "unk_id": unk_id,
                                   "byte_fallback": byte_fallback, "unk_piece": pairs[unk_id][0]}
    controls = {p.piece: i for i, p in enumerate(pieces) if p.type == PieceType.CONTROL}
    for name, default_piece, id_field, piece_field in (("bos", "<s>", "bos_id", "bos_piece"), ("eos", "</s>", "eos_id", "eos_piece"),
                                                       ("pad", "<pad>", "pad_id", "pad_piece")):
        spec_values[id_field] = controls.get(default_piece, -1)
    return ModelProto(pieces=tuple(pieces), trainer_spec=TrainerSpec(**spec_values), normalizer_spec=NormalizerSpec(**normalizer_values))


def from_model_bytes(data: bytes) -> Any:
    """``.model`` bytes -> tokviz ``Tokenizer`` that encodes as sentencepiece's ``encode`` (what the app's
    views show); its ``transformers_post_processor`` is the BOS template transformers' ``LlamaTokenizerFast``
    puts on the same file, which :func:`tokviz.export.transformers_files` writes into the folder."""
    proto = ModelProto.from_bytes(data)
    tokenizer = tokenizer_from_proto(proto)
    tokenizer.transformers_post_processor = tokenizer_from_proto(proto, add_bos=True).post_processor
    return tokenizer


def to_model_bytes(tokenizer: Any) -> bytes:
    """tokviz ``Tokenizer`` -> ``.model`` bytes."""
    return proto_from_tokenizer(tokenizer).to_bytes()
