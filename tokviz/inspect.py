"""Open up any tokenizer: its pipeline in one summary, its vocabulary as a table, its merges as trees.

A loaded ``tokenizer.json`` (HF's or ours) becomes a :class:`TokenizerSummary` (model type,
vocab size, each pipeline component in one line, the added tokens), a vocabulary DataFrame
(id, token, length, Unigram score, kind) that :func:`filter_vocab` searches, filters and
sorts, and, for BPE, the merges by rank and the tree of merges that builds any token:

>>> from tokviz.models import BPE
>>> model = BPE({"h": 0, "u": 1, "g": 2, "hu": 3, "hug": 4}, [("h", "u"), ("hu", "g")])
>>> print(render_merge_tree(merge_tree(model, "hug")))
hug  ← merge #2: 'hu' + 'g'
├── hu  ← merge #1: 'h' + 'u'
│   ├── h
│   └── u
└── g

What this leaves out: editing a tokenizer (Inspect only reads), and SentencePiece ``.model``
files (a protobuf format; HF's ``tokenizer.json`` of a SentencePiece model loads fine).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.errors import LimitExceededError, SerializationError
from tokviz.viz.spans import make_visible, readable_byte_level

# ---------------------------------------------------------------------- loading


def load_tokenizer_json(data: bytes, name: str = "tokenizer.json", max_bytes: int | None = None) -> Any:
    """Read an uploaded tokenizer.json into a :class:`tokviz.Tokenizer`.

    A file over ``max_bytes`` (default :data:`tokviz.limits.MAX_UPLOAD_BYTES`) raises :class:`LimitExceededError`; a file that is not UTF-8, not JSON,
    or names a component tokviz does not know raises :class:`SerializationError` with a
    sentence naming what is wrong.

    >>> load_tokenizer_json(b'{"model": ', "broken.json")
    Traceback (most recent call last):
    ...
    tokviz.errors.TokenizerFileError: broken.json: This is not a valid tokenizer.json: the JSON is malformed at line 1, column 11 (Expecting value); the file is not valid JSON.
    """
    from tokviz import limits
    from tokviz.serialization import tokenizer_from_str

    limit = limits.MAX_UPLOAD_BYTES if max_bytes is None else max_bytes  # read now: operators and tests may change it
    if len(data) > limit:
        raise LimitExceededError(f"{name} has {len(data):,} bytes; this server reads tokenizer files up to {limit:,} bytes.")
    from tokviz.errors import TokvizError, named

    try:
        return tokenizer_from_str(data, name=name)  # the one tokenizer.json reader, its limits and sentences
    except TokvizError as error:
        raise named(error, name)


# ---------------------------------------------------------------------- summary


@dataclass(frozen=True, slots=True)
class AddedTokenRow:
    id: int
    content: str
    special: bool


@dataclass(frozen=True, slots=True)
class TokenizerSummary:
    """The pipeline in a few lines; components are described as ``Type(option=value, ...)``."""

    model_type: str
    vocab_size: int  # with added tokens, as ``get_vocab_size()``
    model_vocab_size: int
    normalizer: str
    pre_tokenizer: str
    post_processor: str
    decoder: str
    added_tokens: tuple[AddedTokenRow, ...]

    def rows(self) -> list[tuple[str, str]]:
        """``(stage, description)`` pairs, in pipeline order."""
        return [
            ("model", f"{self.model_type} ({self.model_vocab_size:,} tokens; {self.vocab_size:,} with added tokens)"),
            ("normalizer", self.normalizer),
            ("pre-tokenizer", self.pre_tokenizer),
            ("post-processor", self.post_processor),
            ("decoder", self.decoder),
            ("added tokens", ", ".join(repr(row.content) for row in self.added_tokens) or "none"),
        ]


#: Keys whose values are lists of sub-components (Sequence normalizers, pre-tokenizers, ...).
_NESTED_KEYS = ("normalizers", "pretokenizers", "processors", "decoders")
_LONG_VALUE = 40


def describe_component(data: Mapping[str, Any] | None) -> str:
    """One line for a tokenizer.json component (``None`` -> ``'none'``); long values are elided.

    >>> describe_component({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]})
    'Sequence(NFD → Lowercase)'
    >>> describe_component({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True})
    'ByteLevel(add_prefix_space=False, trim_offsets=True)'
    >>> describe_component({"type": "Precompiled", "precompiled_charsmap": "AAECAwQFBgc="})
    'Precompiled(charsmap of 8 bytes)'

    Iterative (a stack of the Sequences being described), so a Sequence nested past Python's recursion
    limit is described too.
    """
    if data is None:
        return "none"
    # Each frame: the Sequence's type, its items, how many are described, their descriptions.
    stack: list[tuple[str, list[Any], list[str]]] = []
    current: Any = data
    while True:
        items = _nested_items(current)
        if items is None:
            described = _describe_leaf(current)
        else:
            stack.append((str(current.get("type", "?")), items, []))
            described = None
        while described is not None or (stack and len(stack[-1][2]) == len(stack[-1][1])):
            if described is None:  # a Sequence whose items are all described
                kind, _, parts = stack.pop()
                described = f"{kind}({' → '.join(parts)})"
            if not stack:
                return described
            stack[-1][2].append(described)
            described = None
        kind, items, parts = stack[-1]
        current = items[len(parts)]


def _nested_items(data: Any) -> list[Any] | None:
    """The sub-components of a Sequence-like component, or None for any other value."""
    if isinstance(data, Mapping) and str(data.get("type", "?")) != "TemplateProcessing":
        for key in _NESTED_KEYS:
            if isinstance(data.get(key), list):
                return data[key]
    return None


def _describe_leaf(data: Any) -> str:
    """:func:`describe_component` of a component with no sub-components."""
    if data is None:
        return "none"
    if not isinstance(data, Mapping):
        shown = repr(data)
        return shown if len(shown) <= _LONG_VALUE else shown[: _LONG_VALUE - 1] + "…"
    kind = str(data.get("type", "?"))
    if kind == "TemplateProcessing":
        return f"TemplateProcessing(single={_template(data.get('single'))!r}, pair={_template(data.get('pair'))!r})"
    options = []
    for key, value in data.items():
        if key == "type":
            continue
        if key == "precompiled_charsmap" and isinstance(value, str):  # base64 of a binary table: its size says more
            options.append(f"charsmap of {len(value) * 3 // 4 - value[-2:].count('='):,} bytes")
            continue
        shown = repr(value)
        if len(shown) > _LONG_VALUE:
            shown = shown[: _LONG_VALUE - 1] + "…"
        options.append(f"{key}={shown}")
    return f"{kind}({', '.join(options)})" if options else kind


def _template(pieces: Any) -> str:
    """A tokenizer.json template back in HF's string syntax.

    >>> _template([{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}])
    '[CLS] $B:1'
    """
    words = []
    for piece in pieces if isinstance(pieces, list) else []:
        if not isinstance(piece, dict) or len(piece) != 1:
            return repr(pieces)[:_LONG_VALUE]  # not a template we recognise: show its start
        (kind, body), = piece.items()
        word = f"${body.get('id')}" if kind == "Sequence" else str(body.get("id"))
        words.append(word + (f":{body.get('type_id')}" if body.get("type_id") else ""))
    return " ".join(words)


def _component_dict(component: Any) -> dict[str, Any] | None:
    return None if component is None else component.to_dict()


def summarize(tokenizer: Any) -> TokenizerSummary:
    """The summary of a loaded tokenizer (see :class:`TokenizerSummary`)."""
    decoder = tokenizer.get_added_tokens_decoder()
    return TokenizerSummary(
        model_type=type(tokenizer.model).__name__,
        vocab_size=tokenizer.get_vocab_size(with_added_tokens=True),
        model_vocab_size=tokenizer.model.get_vocab_size(),
        normalizer=describe_component(_component_dict(tokenizer.normalizer)),
        pre_tokenizer=describe_component(_component_dict(tokenizer.pre_tokenizer)),
        post_processor=describe_component(_component_dict(tokenizer.post_processor)),
        decoder=describe_component(_component_dict(tokenizer.decoder)),
        added_tokens=tuple(AddedTokenRow(token_id, token.content, token.special) for token_id, token in sorted(decoder.items())),
    )


def is_byte_level(tokenizer: Any) -> bool:
    """Whether tokens are GPT-2 byte symbols (a ByteLevel pre-tokenizer or decoder anywhere)."""

    def has_byte_level(data: Any) -> bool:
        pending = [data]  # iterative: a Sequence may nest deeper than Python's recursion limit
        while pending:
            value = pending.pop()
            if isinstance(value, dict):
                if value.get("type") == "ByteLevel":
                    return True
                pending.extend(value.values())
            elif isinstance(value, list):
                pending.extend(value)
        return False

    return has_byte_level(_component_dict(tokenizer.pre_tokenizer)) or has_byte_level(_component_dict(tokenizer.decoder))


# ---------------------------------------------------------------------- vocabulary

#: The kind filters of the vocab browser, in the order the page shows them.
KINDS = ("special", "byte <0xNN>", "## continuation", "Ġ word start", "▁ word start", "plain")
_BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
VOCAB_COLUMNS = ["id", "token", "shown as", "length", "score", "kind"]


def token_kind(token: str, special: bool = False) -> str:
    """Which filter a token falls under.

    >>> [token_kind(t) for t in ["##ing", "Ġthe", "▁the", "<0x0A>", "the", "▁"]]
    ['## continuation', 'Ġ word start', '▁ word start', 'byte <0xNN>', 'plain', 'plain']
    """
    if special:
        return "special"
    if _BYTE_TOKEN.fullmatch(token):
        return "byte <0xNN>"
    if token.startswith("##") and len(token) > 2:
        return "## continuation"
    # A marker alone is the space itself (a byte or a piece), not the start of a word.
    if token.startswith("Ġ") and len(token) > 1:
        return "Ġ word start"
    if token.startswith("▁") and len(token) > 1:
        return "▁ word start"
    return "plain"


def vocab_frame(tokenizer: Any) -> pd.DataFrame:
    """Every token with its id, length in characters, Unigram score (else empty) and kind.

    ``shown as`` is the token with whitespace made visible, and byte-level symbols decoded
    (``'ê°Ģ'`` as ``'가'``) for byte-level tokenizers.
    """
    model = tokenizer.model
    scores: dict[str, float] = dict(getattr(model, "vocab", ())) if type(model).__name__ == "Unigram" else {}
    special = {token.content for token in tokenizer.get_added_tokens_decoder().values() if token.special}
    byte_level = is_byte_level(tokenizer)
    rows = []
    for token, token_id in sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda item: item[1]):
        is_special = token in special
        decodable = byte_level and not is_special and all(char in UNICODE_TO_BYTES for char in token)
        rows.append(
            {
                "id": token_id,
                "token": token,
                "shown as": readable_byte_level(token) if decodable else make_visible(token),
                "length": len(token),
                "score": scores.get(token),
                "kind": token_kind(token, is_special),
            }
        )
    frame = pd.DataFrame(rows, columns=VOCAB_COLUMNS)
    return frame.astype({"score": "Float64"})


def filter_vocab(
    frame: pd.DataFrame,
    search: str = "",
    kinds: Iterable[str] | None = None,
    sort_by: str = "id",
    descending: bool = False,
) -> pd.DataFrame:
    """Rows of :func:`vocab_frame` whose token (or its shown form) contains ``search`` (plain text,
    case-insensitive), of the given ``kinds`` (all when ``None``), sorted by a column, ties by id.
    """
    if sort_by not in frame.columns:
        raise ValueError(f"cannot sort the vocabulary by {sort_by!r}")  # a page bug, not the user's
    rows = frame
    if kinds is not None:
        rows = rows[rows["kind"].isin(list(kinds))]
    if search:
        needle = search.casefold()
        hit = rows["token"].str.casefold().str.contains(needle, regex=False) | rows["shown as"].str.casefold().str.contains(needle, regex=False)
        rows = rows[hit]
    order = [sort_by, "id"] if sort_by != "id" else ["id"]
    return rows.sort_values(order, ascending=[not descending, True][: len(order)], na_position="last", kind="stable").reset_index(drop=True)


def example_word_token(frame: pd.DataFrame) -> str:
    """The longest non-special token that spells an ASCII word (markers aside), for a first look.

    >>> example_word_token(pd.DataFrame({"token": ["a", "Ġthe", "Ġ!!!!"], "shown as": ["a", "Ġthe", "Ġ!!!!"], "kind": ["plain"] * 3}))
    'Ġthe'
    """
    best = ""
    for token, shown, kind in zip(frame["token"], frame["shown as"], frame["kind"]):
        core = shown.removeprefix("##").removeprefix("Ġ").removeprefix("▁").removesuffix("</w>")
        if kind != "special" and core.isascii() and core.isalpha() and len(token) > len(best):
            best = token
    return best


# ---------------------------------------------------------------------- BPE merges


def merges_frame(model: Any, byte_level: bool = False) -> pd.DataFrame:
    """A BPE model's merges in the order they apply (``merge #`` 1 first): ``left + right → merged`` and its id."""
    from tokviz.history import merge_number

    rows = []
    for rank, (left, right) in enumerate(model.merges):
        merged = _merged(model, left, right)
        show = readable_byte_level if byte_level else make_visible
        rows.append({"merge #": merge_number(rank), "left": show(left), "right": show(right), "merged": show(merged), "merged id": model.token_to_id(merged)})
    return pd.DataFrame(rows, columns=["merge #", "left", "right", "merged", "merged id"]).astype({"merged id": "Int64"})


def _merged(model: Any, left: str, right: str) -> str:
    """The token a merge makes: HF drops the continuing-subword prefix from the right part."""
    prefix = getattr(model, "continuing_subword_prefix", None)
    if prefix and right.startswith(prefix):
        return left + right[len(prefix) :]
    return left + right


@dataclass(frozen=True, slots=True)
class MergeNode:
    """A token and, unless it is a base symbol, the merge (rank, left, right) that made it."""

    token: str
    rank: int | None = None
    left: MergeNode | None = None
    right: MergeNode | None = None

    def as_dict(self) -> dict[str, Any]:
        """The tree as nested dicts: ``{'token': 'hu', 'rank': 0, 'left': {...}, 'right': {...}}``.

        Built without recursion: a 1,024-byte tiktoken token can be a chain of 1,023 merges."""
        made: dict[int, dict[str, Any]] = {}
        for node in _post_order(self):
            if node.left is None or node.right is None:
                made[id(node)] = {"token": node.token}
            else:
                made[id(node)] = {"token": node.token, "rank": node.rank, "left": made[id(node.left)], "right": made[id(node.right)]}
        return made[id(self)]

    def leaves(self) -> list[str]:
        """The base symbols the token is built from, left to right."""
        return [node.token for node in _post_order(self) if node.left is None or node.right is None]


def _post_order(root: MergeNode) -> list[MergeNode]:
    """Every node of a tree, children (left, then right) before their parent; iterative, so any depth works."""
    out: list[MergeNode] = []
    stack: list[tuple[MergeNode, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done or node.left is None or node.right is None:
            out.append(node)
            continue
        stack.append((node, True))
        stack.append((node.right, False))
        stack.append((node.left, False))
    return out


def merge_recipes(model: Any) -> dict[str, tuple[int, str, str]]:
    """``{merged token: (rank, left, right)}`` for a BPE model, each token by its lowest-rank merge.

    >>> from tokviz.models import BPE
    >>> merge_recipes(BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    {'ab': (0, 'a', 'b')}
    """
    made_by: dict[str, tuple[int, str, str]] = {}
    for rank, (left, right) in enumerate(model.merges):
        made_by.setdefault(_merged(model, left, right), (rank, left, right))
    return made_by


def merge_tree(model: Any, token: str, recipes: Mapping[str, tuple[int, str, str]] | None = None) -> MergeNode | None:
    """The tree of merges that builds ``token`` in a BPE ``model`` (``None`` if not in the vocab).

    A token several merges could make is explained by its lowest-rank one, the merge that
    put it in the vocabulary. Pass ``recipes`` (:func:`merge_recipes`) to explain many tokens.
    """
    if model.token_to_id(token) is None:
        return None
    made_by = merge_recipes(model) if recipes is None else recipes

    # Iterative (an explicit stack), since a tiktoken vocabulary's 1,024-byte token can be a chain of
    # 1,023 merges, deeper than Python's recursion limit. ``on_path`` stops a hand-written cycle.
    built: list[MergeNode] = []
    on_path: set[str] = set()
    stack: list[tuple[str, bool]] = [(token, False)]
    while stack:
        current, children_done = stack.pop()
        if children_done:
            right_node, left_node = built.pop(), built.pop()
            built.append(MergeNode(current, made_by[current][0], left_node, right_node))
            on_path.discard(current)
            continue
        recipe = made_by.get(current)
        if recipe is None or current in on_path:  # a base symbol (or a hand-written cycle: stop there)
            built.append(MergeNode(current))
            continue
        _rank, left, right = recipe
        on_path.add(current)
        stack.extend(((current, True), (right, False), (left, False)))
    return built[0]


def render_merge_tree(node: MergeNode, byte_level: bool = False) -> str:
    """The tree as indented text (for ``st.code``, which shows it as text, never markup)."""
    show = readable_byte_level if byte_level else make_visible

    def label(current: MergeNode) -> str:
        if current.left is None or current.right is None:
            return show(current.token)
        from tokviz.history import merge_number

        return f"{show(current.token)}  ← merge #{merge_number(current.rank)}: {show(current.left.token)!r} + {show(current.right.token)!r}"

    lines: list[str] = []
    stack: list[tuple[MergeNode, str, str]] = [(node, "", "")]  # (node, its line's prefix, its children's indent)
    while stack:  # iterative: any depth
        current, prefix, indent = stack.pop()
        lines.append(prefix + label(current))
        children = [child for child in (current.left, current.right) if child is not None]
        for position in range(len(children) - 1, -1, -1):  # pushed right first, so the left one is drawn first
            last = position == len(children) - 1
            stack.append((children[position], indent + ("└── " if last else "├── "), indent + ("    " if last else "│   ")))
    return "\n".join(lines)


# ---------------------------------------------------------------------- open a training


def open_training(data: bytes, name: str = "history.json", max_bytes: int | None = None) -> Any:
    """Read an uploaded ``history.json`` (``python -m tokviz train`` writes one) into an
    :class:`~tokviz.history_io.OpenedTraining`: the history, its pipeline, ``tokenizer_at(k)``.

    This is what "Open a training" calls on Inspect and on Train. A file over ``max_bytes``
    (default: the upload limit, :data:`tokviz.limits.MAX_UPLOAD_BYTES`) raises
    :class:`LimitExceededError` before it is parsed; a file that is not a training history
    raises :class:`~tokviz.history_io.HistoryFormatError` naming the file and what is wrong.

    >>> open_training(b'{"format": "tokviz-tokenizer"}', "mine.json")
    Traceback (most recent call last):
    ...
    tokviz.history_io.HistoryFormatError: mine.json: This file is not a tokviz training history (a history.json as `python -m tokviz train` writes it): its "format" is not "tokviz-training-history".
    """
    from tokviz import history_io, limits

    limit = limits.MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise LimitExceededError(f"{name} has {len(data):,} bytes; this server opens training histories up to {limit:,} bytes.")
    from tokviz.errors import TokvizError, named
    from tokviz.normalizers import check_growth_on_sample

    try:
        opened = history_io.loads_training(data, max_bytes=limit)
        if opened.config is not None:  # its pipeline's normalizer tried now: a Replace bomb refused with the file's name
            from tokviz.pipeline_config import build_normalizer

            check_growth_on_sample(build_normalizer(opened.config), name)
    except TokvizError as error:
        raise named(error, name)
    return opened


@dataclass(frozen=True)
class TrainOpening:
    """An uploaded training, ready for the Train page: what a ``TrainingRequest`` and the slider need.

    - ``history``: the validated training history (``model_at(k)`` at any size);
    - ``config``: the :class:`~tokviz.pipeline_config.PipelineConfig` it was trained with, so
      ``tokenizer_with_model(config, history.model_at(k))`` is the whole tokenizer;
    - ``vocab_size``: the size its training reached (where the slider starts);
    - ``corpus_key``: ``"history:<sha256 of the file>"``, a corpus key no pasted corpus has (the
      corpus itself is not in the file), so ``request_for(corpus_key, config, vocab_size)`` keys it;
    - ``name``: the file's name, for labels.
    """

    name: str
    history: Any
    config: Any
    vocab_size: int
    corpus_key: str


def open_training_for_train(data: bytes, name: str = "history.json", max_bytes: int | None = None) -> TrainOpening:
    """Read an uploaded ``history.json`` for the Train page (see :class:`TrainOpening`).

    Everything :func:`open_training` checks (size before parsing, format, every record), and
    then what Train needs: the file names its pipeline (``python -m tokviz train`` writes it;
    a SentencePiece training's pipeline is read from its ``.model``), the pipeline trains the
    history's algorithm, and the tokenizer at the trained size builds. Each failure raises
    :class:`~tokviz.history_io.HistoryFormatError` (or :class:`LimitExceededError` for size)
    with the file's name and what is wrong.

    >>> from tokviz import history_io
    >>> from tokviz.presets import PRESETS
    >>> from tokviz.training import run_training
    >>> config = PRESETS["bert"].build()
    >>> data = history_io.dumps(run_training(config, 60, ["Hugging Face tokenizers", "hugging faces"]), config).encode()
    >>> opened = open_training_for_train(data, "bert.json")
    >>> opened.config == config, opened.history.algorithm, opened.corpus_key.startswith("history:")
    (True, 'WordPiece', True)
    """
    import hashlib

    from tokviz import history_io

    training = open_training(data, name, max_bytes)
    history = training.history
    config = training.config
    if config is None and hasattr(history, "proto"):
        config = _sentencepiece_config_of(history, name)
    if config is None:
        raise history_io.HistoryFormatError(
            f"{name}: this training history does not name its pipeline (normalizers, pre-tokenizer, special tokens), "
            "so Train cannot rebuild its tokenizer. Open it on Inspect, or train again with `python -m tokviz train`, "
            "which writes the pipeline into history.json.")
    # One naming of algorithms (presets.algorithm_label): the Unigram trainer records "unigram", the pipeline "Unigram".
    from tokviz.presets import algorithm_label

    try:
        wanted = "SentencePiece" if hasattr(history, "proto") else algorithm_label(str(history.algorithm))
    except ValueError:
        wanted = str(history.algorithm)
    if config.model != wanted:
        raise history_io.HistoryFormatError(
            f"{name}: the pipeline in this file trains {config.model}, but its history is a {wanted} training; "
            "the file was edited or damaged.")
    _low, _high, trained = training_size_range(history)
    try:
        from tokviz.pipeline_config import tokenizer_with_model

        tokenizer_with_model(config, history.model_at(trained))
    except Exception as error:  # noqa: BLE001 - any failure here is a file Train cannot use, said in a sentence
        raise history_io.HistoryFormatError(
            f"{name}: this training's tokenizer cannot be built from its pipeline and model: {error}") from error
    digest = hashlib.sha256(data).hexdigest()
    return TrainOpening(name=name, history=history, config=config, vocab_size=trained, corpus_key=f"history:{digest}")


def _sentencepiece_config_of(history: Any, name: str) -> Any:
    """The SentencePiece pipeline a history's ``.model`` was trained with (its trainer and normalizer specs)."""
    from tokviz import history_io
    from tokviz import pipeline_config

    make = getattr(pipeline_config, "sentencepiece_config", None)
    if make is None or history.proto is None:
        raise history_io.HistoryFormatError(f"{name}: this tokviz's Train page cannot open SentencePiece trainings; open it on Inspect.")
    spec, normalizer = history.proto.trainer_spec, history.proto.normalizer_spec
    try:
        return make(
            sp_model_type=str(history.algorithm).removeprefix("sentencepiece-"),
            character_coverage=round(float(spec.character_coverage), 6),  # stored as float32 in the .model
            byte_fallback=bool(spec.byte_fallback), normalization_rule=normalizer.name or "nmt_nfkc",
            unk_id=int(spec.unk_id), bos_id=int(spec.bos_id), eos_id=int(spec.eos_id), pad_id=int(spec.pad_id),
            user_defined_symbols=tuple(spec.user_defined_symbols), max_sentence_length=int(spec.max_sentence_length),
        )
    except Exception as error:  # noqa: BLE001 - PipelineConfig's checks, in its own words
        raise history_io.HistoryFormatError(f"{name}: this SentencePiece training's options cannot be used on Train: {error}") from error


def training_size_range(history: Any) -> tuple[int, int, int]:
    """``(smallest, largest, trained)`` vocab sizes a training can show; ``trained`` is its model's size.

    Unigram's largest is its seed vocabulary; the trained size is where the slider starts. The one
    place every page reads a training's range from. A record's sizes are bounded here: none is
    below 1, and none above :data:`tokviz.limits.MAX_TOKENIZER_VOCAB` (no uploaded tokenizer may hold
    more; an edited file's ``max_vocab_size`` of 10**30 is also past what a browser slider holds).
    ``smallest == largest`` is a fixed size, which the pages show without a slider.

    >>> from types import SimpleNamespace
    >>> training_size_range(SimpleNamespace(min_vocab_size=257, max_vocab_size=257, model=None))
    (257, 257, 257)
    >>> training_size_range(SimpleNamespace(min_vocab_size=257, max_vocab_size=10**30, model=None))
    (257, 300000, 300000)
    """
    from tokviz.limits import MAX_TOKENIZER_VOCAB

    high = min(max(int(history.max_vocab_size), 1), MAX_TOKENIZER_VOCAB)
    low = min(max(int(history.min_vocab_size), 1), high)
    model = getattr(history, "model", None)
    trained = model.get_vocab_size() if model is not None else high
    return low, high, min(max(trained, low), high)


@dataclass(frozen=True)
class TrainingView:
    """One view of a training for a page to draw: a ``table`` (DataFrame) or a plotly ``figure``."""

    title: str
    caption: str
    table: pd.DataFrame | None = None
    figure: Any = None


def training_summary(history: Any) -> dict[str, Any]:
    """What was trained, in a few numbers: ``{"algorithm": "BPE", "trained size": 8000, ...}``."""
    summary = history.word_counts
    _low, _high, trained = training_size_range(history)
    return {
        "algorithm": str(history.algorithm),
        "trained size": trained,
        "words (occurrences)": int(summary.total_words),
        "distinct words": int(summary.unique_words),
        "training seconds": f"{float(history.seconds):.1f}",
    }


def training_views(history: Any, vocab_size: int, byte_level: bool = False) -> list[TrainingView]:
    """The record of a training as tables and charts, the vocab size ``vocab_size`` marked.

    BPE / WordPiece: every merge with the pair it beat, each merge's score, the vocab growth;
    Unigram: the EM steps, the pruning rounds and every removed piece; WordLevel: the kept
    words; SentencePiece: its trainer's record (merges, or EM steps) as a table.
    """
    from tokviz.viz import charts, tables

    views: list[TrainingView] = []
    merges = getattr(history, "merges", None)
    if merges:
        kept = charts.merges_at_size(merges, vocab_size)
        score = "score" if getattr(history, "scoring", "frequency") == "likelihood" else "count"
        views.append(TrainingView("Merges", f"{len(merges):,} merges in order; the model at {vocab_size:,} tokens keeps the first "
                                  f"{kept:,}. The runner-up is the best pair the merge beat.",
                                  table=tables.merge_table(merges, byte_level)))
        views.append(TrainingView("Merge scores", "", figure=charts.merge_scores_figure(merges, score, marker_size=vocab_size)))
        views.append(TrainingView("Vocab growth", "", figure=charts.vocab_growth_figure(merges, history.min_vocab_size,
                                                                                         marker_size=vocab_size)))
    if getattr(history, "em_steps", None):
        views.append(TrainingView("EM steps", "What SentencePiece logs per EM sub-iteration.", table=tables.em_steps_table(history.em_steps)))
        views.append(TrainingView("EM objective", "", figure=charts.em_objective_figure(history.em_steps)))
    if getattr(history, "prune_rounds", None):
        if history.model is not None and hasattr(history, "em_steps"):
            views.append(TrainingView("Pruning rounds", "", figure=charts.pruning_rounds_figure(history, marker_size=vocab_size)))
        views.append(TrainingView("Removed pieces", "Every piece a pruning round removed, with the loss increase that condemned it.",
                                  table=tables.removed_pieces_table(history.prune_rounds)))
    if hasattr(history, "kept"):
        views.append(TrainingView("Kept words", f"The words kept, by frequency; the model at {vocab_size:,} tokens keeps the first ones.",
                                  table=history.to_frame()))
    if hasattr(history, "proto"):
        what = "merges" if history.merge_steps else ("EM steps" if history.unigram is not None else "pieces")
        views.append(TrainingView(f"SentencePiece {what}", f"{history.sentences:,} sentences trained on.", table=history.to_frame()))
    return views
