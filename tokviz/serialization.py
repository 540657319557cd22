"""tokenizer.json in Hugging Face's format, both ways.

A tokenizer.json is one object with these keys, in this order (HF writes them so)::

    {"version": "1.0",
     "truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0} | null,
     "padding": {"strategy": "BatchLongest" | {"Fixed": 128}, "direction": "Right",
                 "pad_to_multiple_of": null, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"} | null,
     "added_tokens": [{"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false,
                       "rstrip": false, "normalized": false, "special": true}, ...],
     "normalizer": {...} | null, "pre_tokenizer": {...} | null, "model": {...},
     "post_processor": {...} | null, "decoder": {...} | null}

Each component serializes itself (``to_dict``) and is rebuilt by its module's ``from_dict``;
this module only assembles the file. Anything tokviz cannot represent raises
:class:`~tokviz.errors.SerializationError` naming the section and the component; nothing is
silently dropped. Added-token ids are re-derived when loading (a token already in the
model keeps the model's id), exactly as HF does.

>>> from tokviz import Tokenizer
>>> from tokviz.models import WordLevel
>>> tok = Tokenizer.from_str(Tokenizer(WordLevel({"a": 0}, unk_token="a")).to_str())
>>> tok.get_vocab()
{'a': 0}

What this version leaves out: nothing of the format for the components tokviz has; the
SentencePiece ``Precompiled`` normalizer and the CTC decoder are reported as unsupported.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

from tokviz.added_vocabulary import AddedToken
from tokviz.errors import SerializationError, TokvizError, named
from tokviz.limits import check_tokenizer_json_size

FORMAT_VERSION = "1.0"

_STRATEGY_TO_JSON = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
_STRATEGY_FROM_JSON = {value: key for key, value in _STRATEGY_TO_JSON.items()}


# ---------------------------------------------------------------------- writing
def tokenizer_to_dict(tokenizer: Any) -> dict[str, Any]:
    """The tokenizer.json object of ``tokenizer`` (a plain dict, ready for ``json.dumps``)."""
    truncation = tokenizer._truncation
    padding = tokenizer._padding
    added = tokenizer._added.get_added_tokens_decoder()
    return {
        "version": FORMAT_VERSION,
        "truncation": None
        if truncation is None
        else {
            "direction": truncation.direction.capitalize(),
            "max_length": truncation.max_length,
            "strategy": _STRATEGY_TO_JSON[truncation.strategy],
            "stride": truncation.stride,
        },
        "padding": None
        if padding is None
        else {
            "strategy": "BatchLongest" if padding.length is None else {"Fixed": padding.length},
            "direction": padding.direction.capitalize(),
            "pad_to_multiple_of": padding.pad_to_multiple_of,
            "pad_id": padding.pad_id,
            "pad_type_id": padding.pad_type_id,
            "pad_token": padding.pad_token,
        },
        "added_tokens": [token.to_dict(token_id) for token_id, token in added.items()],
        "normalizer": _component_dict(tokenizer.normalizer, "normalizer"),
        "pre_tokenizer": _component_dict(tokenizer.pre_tokenizer, "pre_tokenizer"),
        "model": _component_dict(tokenizer.model, "model"),
        "post_processor": _component_dict(tokenizer.post_processor, "post_processor"),
        "decoder": _component_dict(tokenizer.decoder, "decoder"),
    }


def _component_dict(component: Any, section: str) -> dict[str, Any] | None:
    if component is None:
        return None
    to_dict = getattr(component, "to_dict", None)
    if to_dict is None:
        raise SerializationError(
            f"tokviz cannot save the {section} {type(component).__name__}: it has no tokenizer.json form."
        )
    return to_dict()


def tokenizer_to_str(tokenizer: Any, pretty: bool = False) -> str:
    data = tokenizer_to_dict(tokenizer)
    if pretty:
        return json.dumps(data, ensure_ascii=False, indent=2)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------- reading
def tokenizer_from_str(text: str | bytes, name: str = "This tokenizer.json", *, own: bool = False) -> Any:
    """Build a Tokenizer from tokenizer.json text (or its UTF-8 bytes) through the one guarded
    reader (:func:`tokviz.tokenizer_json.read_tokenizer_json`, every limit checked before anything is
    built); a malformed or hostile file raises a :class:`~tokviz.errors.TokvizError` naming ``name``.

    ``own=True`` is for a tokenizer's own state coming back (a pickle, a copy): this process made
    it, within the training limits, so the upload limits (a token of 1,024 characters, ...) do not apply.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise SerializationError(f"A tokenizer.json must be text, not {type(text).__name__}.")
    from tokviz.json_floats import loads_tokenizer_json
    from tokviz.tokenizer_json import read_tokenizer_json

    # Loading makes a few hundred thousand containers (the vocab, merges and their tables), none
    # of them garbage: the cycle collector would walk them over and over (15-20% of the time
    # of a 25k byte-level BPE), so it waits until the tokenizer is built.
    collecting = gc.isenabled()
    # (The process's objects are set aside meanwhile, for the collection at the end: not when
    # the caller freezes objects of its own, which unfreezing would release.)
    freezing = collecting and not gc.get_freeze_count()
    gc.disable()
    if freezing:
        gc.freeze()
    try:
        data = loads_tokenizer_json(text if isinstance(text, str) else bytes(text).decode("utf-8")) if own else read_tokenizer_json(text, name)
        tokenizer = tokenizer_from_dict(data)
        del data  # (the JSON's lists and dicts: freed before the collection below)
        from tokviz.normalizers import check_growth_on_sample

        if not own:
            check_growth_on_sample(tokenizer.normalizer, name)  # a Replace bomb refused now, not at the first encode
        # Ready to encode, as HF's loaded tokenizers are: the encoding plan (the model's word
        # encoder and its tables) is built now, not by the first encode. A Unigram model's
        # tables take passes over its pieces: 45 ms of XLM-R's 250k, a fifth of a cold pass
        # over 2,075 lines and a tenth of its load; a converted Llama's plan 3 ms.
        tokenizer._prepare_engine()
        return tokenizer
    finally:
        if collecting:
            gc.enable()
            # The load's objects, looked at once now -- the collector then stops tracking most of
            # them (the merge table's pairs) -- and not by the next allocation after it, in the
            # caller's first encode: 42-65 ms there for Llama 3's 280k merges, 91 ms for Gemma's.
            # A full collection, of the load's objects only (the rest are frozen): only a full
            # one stops tracking a dict (the merge table, once its pairs are not tracked), and
            # the process's first full collection otherwise walked Llama 3's 280k pairs in the
            # first encode (20-38 ms). Without freezing, the youngest two generations: a full
            # collection's cost grows with everything the process holds (the bench's one-process
            # run, its heap ~1.6 GB: Llama 2's load 1.2x -> 1.9x HF).
            if freezing:
                try:
                    gc.collect()
                finally:
                    gc.unfreeze()
            else:
                gc.collect(1)


def tokenizer_from_file(path: str | Path) -> Any:
    """``Tokenizer.from_file``: the file's bytes through :func:`tokenizer_from_str`, errors named by the file."""
    path = Path(path)
    try:
        check_tokenizer_json_size(path.stat().st_size, path.name)
        return tokenizer_from_str(path.read_bytes(), name=path.name)
    except TokvizError as error:
        raise named(error, path.name)


def tokenizer_from_dict(data: Any) -> Any:
    from tokviz import decoders, normalizers, pre_tokenizers, processors
    from tokviz.tokenizer import Tokenizer

    if not isinstance(data, dict):
        raise SerializationError("This is not a tokenizer.json: the top level must be a JSON object.")
    if "model" not in data or data["model"] is None:
        raise SerializationError("This tokenizer.json has no 'model' section, so there is nothing to load.")
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise SerializationError(f"tokviz reads tokenizer.json version {FORMAT_VERSION}, not {version!r}.")

    tokenizer = Tokenizer(_section(model_from_dict, data["model"], "model"))
    tokenizer.normalizer = _section(normalizers.from_dict, data.get("normalizer"), "normalizer")
    tokenizer.pre_tokenizer = _section(pre_tokenizers.from_dict, data.get("pre_tokenizer"), "pre_tokenizer")
    tokenizer.post_processor = _section(processors.from_dict, data.get("post_processor"), "post_processor")
    tokenizer.decoder = _section(decoders.from_dict, data.get("decoder"), "decoder")

    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise SerializationError("The 'added_tokens' section of this tokenizer.json must be a list.")
    try:
        tokens = [AddedToken.from_dict(item) for item in added]
    except (KeyError, TypeError, AttributeError) as error:
        raise SerializationError(f"An entry of 'added_tokens' in this tokenizer.json is malformed ({error}).") from error
    # HF adds them all at once; add_tokens sorts out which are special.
    tokenizer._added.add_tokens(tokens, tokenizer.model, tokenizer.normalizer, owned=True)

    for key, apply in (("truncation", _apply_truncation), ("padding", _apply_padding)):
        if data.get(key) is not None:
            try:
                apply(tokenizer, data[key])
            except TokvizError:
                raise
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                raise SerializationError(f"The {key!r} section of this tokenizer.json is malformed ({error}).") from error
    return tokenizer


def _apply_truncation(tokenizer: Any, truncation: Any) -> None:
    tokenizer.enable_truncation(
        int(truncation["max_length"]),
        int(truncation.get("stride", 0)),
        _STRATEGY_FROM_JSON[truncation.get("strategy", "LongestFirst")],
        str(truncation.get("direction", "Right")).lower(),
    )


def _apply_padding(tokenizer: Any, padding: Any) -> None:
    strategy = padding.get("strategy", "BatchLongest")
    tokenizer.enable_padding(
        direction=str(padding.get("direction", "Right")).lower(),
        pad_id=int(padding.get("pad_id", 0)),
        pad_type_id=int(padding.get("pad_type_id", 0)),
        pad_token=str(padding.get("pad_token", "[PAD]")),
        length=None if strategy == "BatchLongest" else int(strategy["Fixed"]),
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
    )


def _section(build: Any, data: Any, section: str) -> Any:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise SerializationError(f"The {section!r} section of this tokenizer.json must be an object or null.")
    try:
        return build(data)
    except SerializationError:
        raise
    except TokvizError as error:
        raise SerializationError(f"The {section} in this tokenizer.json cannot be built: {error}") from error
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        kind = data.get("type", "?")
        raise SerializationError(f"The {section} {kind!r} in this tokenizer.json is malformed ({error!r}).") from error


_MODELS = ("BPE", "WordPiece", "WordLevel", "Unigram")


def model_from_dict(data: dict[str, Any]) -> Any:
    """Build the model section; files without a ``type`` are recognised by their fields, as in HF."""
    from tokviz import models

    kind = data.get("type")
    if kind is None:
        if "merges" in data:
            kind = "BPE"
        elif isinstance(data.get("vocab"), list):
            kind = "Unigram"
        elif "max_input_chars_per_word" in data or "continuing_subword_prefix" in data:
            kind = "WordPiece"
        else:
            kind = "WordLevel"
    if kind not in _MODELS:
        raise SerializationError(f"tokviz cannot represent the model {kind!r} (it knows {', '.join(_MODELS)}).")
    return getattr(models, kind).from_dict(data)
