"""tokviz.engine.plans: one tokenizer's plans in one cache, dropped in one place."""

from __future__ import annotations

import copy

from tokviz import Tokenizer
from tokviz.engine.plans import EnginePlans
from tokviz.models import BPE
from tokviz.pre_tokenizers import ByteLevel, Whitespace

VOCAB = {"a": 0, "b": 1, "ab": 2, "Ġ": 3}
MERGES = [("a", "b")]


def test_every_plan_shares_the_model_word_encoder_and_is_made_once() -> None:
    model, splitter = BPE(VOCAB, MERGES), Whitespace()
    plans = EnginePlans().current(None, splitter, model)
    chunk = plans.cut()
    assert chunk.bpe is plans.encoder() is not None
    assert plans.current(None, splitter, model).cut() is chunk
    assert set(plans.made) == {"encoder", "cut"}  # (one plan: byte-level pipelines too)


def test_a_replaced_or_edited_component_drops_every_plan() -> None:
    model, splitter = BPE(VOCAB, MERGES), Whitespace()
    plans = EnginePlans()
    chunk = plans.current(None, splitter, model).cut()
    assert plans.current(None, Whitespace(), model).cut() is not chunk  # replaced
    chunk = plans.cut()
    model.unk_token = "a"  # edited (an edit generation)
    assert plans.current(None, plans.pre_tokenizer, model).cut() is not chunk
    model.dropout = 0.5  # sampling: no plan keeps words
    assert plans.current(None, plans.pre_tokenizer, model).cut() is None


def test_the_model_cache_clear_empties_the_word_caches_and_keeps_the_plans() -> None:
    tok = Tokenizer(BPE(VOCAB, MERGES))
    tok.pre_tokenizer = ByteLevel(add_prefix_space=False)
    assert tok.encode("ab ab").ids == [2, 3, 2]
    plan = tok._engine().cut()
    assert set(plan.words) == {"ab", " ab"}  # (keys are the text's words, before the byte mapping)
    tok.model.clear_cache()
    assert tok._engine().cut() is plan and not plan.words


def test_a_copy_shares_the_plans_until_its_components_change() -> None:
    model, splitter = BPE(VOCAB, MERGES), Whitespace()
    plans = EnginePlans()
    chunk = plans.current(None, splitter, model).cut()
    twin = copy.copy(plans)
    assert twin.current(None, splitter, model).cut() is chunk
    twin.current(None, Whitespace(), model)
    assert plans.current(None, splitter, model).cut() is chunk  # the original keeps its plans
