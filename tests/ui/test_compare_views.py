"""tokviz.ui.compare_views: the Compare page's parts -- how many configurations (bound to the workspace),
uploaded tokenizers measured without truncation or padding, and the caption saying so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamlit.testing.v1 import AppTest

from tokviz import Tokenizer, pre_tokenizers
from tokviz.models import WordLevel
from tokviz.ui.compare_views import _measuring_note, compared, measuring_caption


@dataclass
class _Upload:
    name: str
    tokenizer: Any
    byte_level: bool = False
    key: str = "file:1"


def _uploaded() -> Tokenizer:
    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1, "hello": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens(["<s>"])
    tokenizer.enable_truncation(max_length=32)
    tokenizer.enable_padding(pad_id=1, pad_token="[PAD]")
    return tokenizer


def test_an_upload_is_measured_without_truncation_or_padding_and_the_caption_says_so() -> None:
    original = _uploaded()
    assert _measuring_note(original) == "truncation to 32 tokens and padding"
    (entry,) = compared([], [_Upload("mine.json", original)])
    assert entry.original is original and entry.tokenizer.truncation is None and entry.tokenizer.padding is None
    assert (entry.unk_id, entry.special_tokens, entry.measuring_note) == (0, ("<s>",), "truncation to 32 tokens and padding")
    assert original.truncation is not None  # the download keeps them
    assert measuring_caption([entry]).endswith(" Turned off for measuring: mine.json (truncation to 32 tokens and padding) (the download keeps them).")
    assert measuring_caption([]) == ("Every tokenizer is measured as a tokenizer, without truncation or padding, and without the special "
                                     "tokens a post-processor adds.")


def _count() -> None:
    import streamlit as st

    from tokviz.ui.compare_views import configuration_count
    from tokviz.ui.workspace import current

    compare = current().compare
    configuration_count(compare)
    st.session_state["entries"] = [(entry.choice, entry.vocab) for entry in compare.entries]


def test_how_many_configurations_adds_and_drops_entries() -> None:
    app = AppTest.from_function(_count, default_timeout=60).run()
    assert app.radio(key="compare_count").value == 3
    app.radio(key="compare_count").set_value(4).run()
    assert app.session_state["entries"] == [("gpt2", 1000), ("bert", 1000), ("t5", 500), ("char_bpe", 1000)]
    app.radio(key="compare_count").set_value(2).run()
    assert app.session_state["entries"] == [("gpt2", 1000), ("bert", 1000)]


def test_a_configuration_whose_pattern_times_out_on_the_evaluation_text_is_left_out_of_the_curves() -> None:
    """Section 5: the others' curves drawn, the one that times out left out (section 4 names it with the sentence)."""
    from tokviz.pipeline_config import PipelineConfig, component
    from tokviz.training import run_training
    from tokviz.ui.compare_views import compression_curves
    from tokviz.ui.training import request_for

    lines = ["a b c", "b c a", "c a b", "ab bc ca"] * 5
    trained = []
    for name, pattern in (("plain", r"\w+"), ("backtracking", r"(a|aa)+$")):
        config = PipelineConfig(model="BPE", pre_tokenizers=(component("Split", pattern=pattern, regex=True, behavior="isolated"),))
        history = run_training(config, 10, lines)
        trained.append((_Named(name), None, request_for(f"curves-{name}", config, 10), history))
    curves = compression_curves(trained, "hostile-text", ("a" * 60 + "!",))
    assert list(curves) == ["plain"] and curves["plain"][-1].vocab_size == trained[0][3].max_vocab_size


@dataclass
class _Named:
    name: str
