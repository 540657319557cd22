"""tokviz.links: pipeline configs and the whole session workspace as URL parameters, and back."""

from __future__ import annotations

import json
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.errors import PipelineConfigError, VocabSizeError
from tokviz.limits import MAX_VOCAB_SIZE
from tokviz.links import MAX_LINK_TEXT, NOT_CARRIED, from_link, from_query_params, to_link, to_query_params
from tokviz.pipeline_config import NORMALIZERS, PRE_TOKENIZERS, PipelineConfig, applicable, component, config_key
from tokviz.presets import PRESETS
from tokviz.workspace import CompareEntry, Workspace


# --- links (st.query_params) --------------------------------------------------------------


@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_links_are_short_and_round_trip(key: str) -> None:
    config = PRESETS[key].build()
    params = to_query_params(config, 750, preset=key)
    assert params == {"preset": key, "vocab": "750"}
    assert from_query_params(params) == (config, 750)
    # The long form reads back to the same config too.
    assert from_query_params(to_query_params(config, 750)) == (config, 750)


def test_custom_link_lists_only_what_differs_from_defaults() -> None:
    config = PipelineConfig(
        normalizers=(component("NFKC"), component("Replace", pattern=" {2,}", content=" ", regex=True)),
        pre_tokenizers=(component("Metaspace", prepend_scheme="first"),),
        model="Unigram",
        special_tokens=("<unk>", "<pad>"),
        unk_token="<unk>",
        unigram_method="course",
    )
    params = to_query_params(config, 1000)
    assert params == {
        "vocab": "1000",
        "n0": "NFKC",
        "n1": "Replace",
        "n1.pattern": " {2,}",
        "n1.regex": "true",
        "p0": "Metaspace",
        "p0.prepend_scheme": "first",
        "model": "Unigram",
        "special_tokens": '["<unk>", "<pad>"]',
        "unk_token": "<unk>",
        "unigram_method": "course",
    }
    assert from_query_params(params) == (config, 1000)


def test_link_without_pre_tokenizer_stays_without() -> None:
    config = PipelineConfig(pre_tokenizers=())
    assert from_query_params(to_query_params(config, 10))[0].pre_tokenizers == ()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"preset": "llama"}, "preset 'llama'"),
        ({"vocab": "lots"}, "'lots' for vocab"),
        ({"vocab": "0"}, "1 or more"),
        ({"n0": "Lowercas"}, "'Lowercas'"),
        ({"p0": "Metaspace", "p0.split": "maybe"}, "Metaspace.split"),
        ({"model": "BPE", "special_tokens": "[UNK]"}, "special_tokens"),
        ({"model": "Transformer"}, "Unknown model"),
    ],
)
def test_bad_links_raise_errors_naming_the_part(params: dict, message: str) -> None:
    with pytest.raises((PipelineConfigError, VocabSizeError), match=message):
        from_query_params(params)


def test_empty_link_gives_the_default_config_and_list_values_take_the_last() -> None:
    assert from_query_params({}) == (PipelineConfig(), 500)
    assert from_query_params({"vocab": ["300", "400"]})[1] == 400


_specs = st.sampled_from(
    [component(name) for name in NORMALIZERS]
    + [component("Strip", right=False), component("Replace", pattern="a&b=c?", content="%", regex=False)]
)
_pre = st.sampled_from([component(name) for name in PRE_TOKENIZERS] + [component("ByteLevel", use_regex=False)])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    normalizers=st.lists(_specs, max_size=3),
    pre_tokenizers=st.lists(_pre, max_size=2),
    model=st.sampled_from(["BPE", "WordPiece", "Unigram", "WordLevel"]),
    special=st.lists(st.text(min_size=1, max_size=5), max_size=3, unique=True),
    vocab=st.integers(1, 100_000),
    min_frequency=st.integers(0, 5),
    suffix=st.sampled_from([None, "</w>", ""]),
)
def test_any_config_round_trips_through_a_link(normalizers, pre_tokenizers, model, special, vocab, min_frequency, suffix) -> None:
    special = ["[UNK]", *[token for token in special if token != "[UNK]"]]
    config = PipelineConfig(
        normalizers=tuple(normalizers), pre_tokenizers=tuple(pre_tokenizers), model=model, special_tokens=tuple(special),
        unk_token="[UNK]", min_frequency=min_frequency, end_of_word_suffix=suffix,
    )
    params = to_query_params(config, vocab)
    assert all(isinstance(key, str) and isinstance(value, str) for key, value in params.items())
    assert from_query_params(params) == (applicable(config), vocab)
    assert config_key(applicable(config)) == config_key(from_query_params(params)[0])




# --- the whole workspace -------------------------------------------------------------------


def _busy_workspace() -> Workspace:
    workspace = Workspace()
    workspace.corpus.source = "pasted"
    workspace.corpus.pasted = "my own corpus"
    workspace.train.preset = "custom"
    workspace.train.config = PipelineConfig(normalizers=(component("NFKC"),), model="WordPiece", special_tokens=("[UNK]",), unk_token="[UNK]",
                                            continuing_subword_prefix="##", scoring="likelihood")
    workspace.train.target_vocab, workspace.train.slider, workspace.train.test_text = 2000, 1500, "a test text"
    workspace.compare.entries = [CompareEntry("bert"), CompareEntry("custom", "WordPiece", "ByteLevel", "NFKC", 800, "likelihood", 2),
                                 CompareEntry("t5"), CompareEntry("char_bpe", vocab=600)]
    workspace.compare.text, workspace.compare.eval_source, workspace.compare.eval_text = "cut me", "paste", "measure me"
    workspace.pipeline.tokenizer, workspace.pipeline.text, workspace.pipeline.pair = "bert", "pipeline text", "second"
    workspace.inspect.tokenizer, workspace.inspect.text = "t5", "inspect text"
    workspace.learn.lesson, workspace.learn.step, workspace.learn.predict = "unigram", 3, True
    workspace.learn.merges["wordpiece"], workspace.learn.unigram_vocab = 7, 9
    workspace.learn.word_counts, workspace.learn.sentence = {"low": 5, "lower": 2}, "A sentence"
    workspace.presentation = True
    return workspace


def test_a_whole_workspace_round_trips_except_the_pasted_corpus() -> None:
    workspace = _busy_workspace()
    restored, notes = from_link(to_link(workspace))
    assert restored.train == workspace.train
    assert restored.compare == workspace.compare
    assert restored.pipeline == workspace.pipeline and restored.inspect == workspace.inspect
    assert restored.learn == workspace.learn and restored.presentation
    # The pasted corpus is not in the link: the sample opens, and the page is told why.
    assert restored.corpus.source == "sample" and restored.corpus.pasted is None
    assert notes == ["Corpus: this link was made with a pasted corpus, which links do not carry; "
                     "the built-in sample is shown until you paste or upload it again."]
    assert "my own corpus" not in str(to_link(workspace))


def test_default_workspace_link_is_short() -> None:
    assert to_link(Workspace()) == {"preset": "gpt2", "vocab": "1000"}


def test_options_that_do_not_apply_to_the_model_are_not_written() -> None:
    workspace = Workspace()
    workspace.train.preset = "custom"
    workspace.train.config = PipelineConfig(model="Unigram", end_of_word_suffix="</w>", continuing_subword_prefix="##", min_frequency=3)
    params = to_link(workspace)
    assert "end_of_word_suffix" not in params and "continuing_subword_prefix" not in params and "min_frequency" not in params
    assert params["model"] == "Unigram"


def test_texts_too_long_for_a_link_stay_out() -> None:
    workspace = Workspace()
    workspace.train.test_text = "x" * (MAX_LINK_TEXT + 1)
    workspace.pipeline.text = "short"
    params = to_link(workspace)
    assert "text" not in params and params["ptext"] == "short"
    assert "texts over 2,000 characters" in NOT_CARRIED


@pytest.mark.parametrize(
    ("params", "part"),
    [
        ({"preset": "<script>"}, "Train settings"),
        ({"cmp": "9"}, "Compare settings"),
        ({"cmp": "2", "c0": "custom", "c0.model": "GPT"}, "Compare settings"),
        ({"ptok": "../../etc/passwd"}, "Pipeline settings"),
        ({"lesson": "chemistry"}, "Learn settings"),
        ({"lwords": "hug:lots"}, "Learn settings"),
        ({"corpus": "http://evil.example/corpus.txt"}, "Corpus"),
    ],
)
def test_a_broken_or_hostile_link_opens_the_default_of_that_part_with_a_note(params: dict, part: str) -> None:
    workspace, notes = from_link(params)
    default = Workspace()
    assert len(notes) == 1 and notes[0].startswith(f"This link was not used in full. {part}:")
    assert workspace.train.preset == default.train.preset or part != "Train settings"
    assert workspace.compare.entries == default.compare.entries or part != "Compare settings"
    assert workspace.learn.lesson == default.learn.lesson or part != "Learn settings"


def test_a_link_above_the_vocab_limit_opens_at_the_limit_with_a_note() -> None:
    workspace, notes = from_link({"preset": "bert", "vocab": str(MAX_VOCAB_SIZE + 5)})
    assert workspace.train.target_vocab == MAX_VOCAB_SIZE and workspace.train.preset == "bert"
    assert "above this server's limit" in notes[0]


def test_a_link_without_train_settings_keeps_the_default_preset() -> None:
    workspace, notes = from_link({"lesson": "wordpiece"})
    assert workspace.train.preset == "gpt2" and workspace.train.config == PRESETS["gpt2"].build() and notes == []


def test_a_link_cannot_carry_a_huge_list_of_special_tokens_or_endless_components() -> None:
    """A hostile link is bounded before it becomes thousands of added tokens or components."""
    from tokviz.errors import PipelineConfigError
    from tokviz.links import MAX_LINK_COMPONENTS, MAX_LINK_TEXT, from_query_params

    tokens = json.dumps([f"<t{index}>" for index in range(50_000)])
    with pytest.raises(PipelineConfigError, match=f"special_tokens is {len(tokens):,} characters long; links carry at most {MAX_LINK_TEXT:,}"):
        from_query_params({"preset": "custom", "model": "BPE", "special_tokens": tokens})
    fits = json.dumps([f"<t{index}>" for index in range(100)])
    assert len(from_query_params({"preset": "custom", "model": "BPE", "special_tokens": fits})[0].special_tokens) == 100
    many = {"preset": "custom", "model": "BPE", **{f"n{index}": "Lowercase" for index in range(MAX_LINK_COMPONENTS + 1)}}
    with pytest.raises(PipelineConfigError, match=f"more than {MAX_LINK_COMPONENTS} components"):
        from_query_params(many)
    del many[f"n{MAX_LINK_COMPONENTS}"]
    assert len(from_query_params(many)[0].normalizers) == MAX_LINK_COMPONENTS


def test_every_dropped_part_and_parameter_is_named_in_one_note() -> None:
    """A bad Train value, a bad Learn value and two parameters no link writes: one note names all four."""
    workspace, notes = from_link({"preset": "bert", "vocab": "800", "lesson": "chemistry", "size": "300", "utm_source": "mail", "n0.fake": "1"})
    assert (workspace.train.preset, workspace.train.target_vocab, workspace.train.slider) == ("bert", 800, 300)
    assert len(notes) == 1
    assert notes[0].startswith("This link was not used in full. Learn settings: The link names the lesson 'chemistry'")
    assert notes[0].endswith("Parameters left out (not part of a tokviz link, or of a part above): 'utm_source', 'n0.fake'.")
    # A preset link's extra pipeline fields are not used either, and the note says so.
    _, notes = from_link({"preset": "gpt2", "vocab": "500", "model": "Unigram"})
    assert notes == ["This link was not used in full. Parameters left out (not part of a tokviz link, or of a part above): 'model'."]
    # What the codec writes is read whole: no note.
    workspace = Workspace()
    workspace.train.slider, workspace.train.test_text, workspace.train.tab, workspace.presentation = 300, "hi there", "Charts", True
    assert from_link(to_link(workspace))[1] == []


def test_a_link_with_thousands_of_parameters_is_refused_with_a_note_not_ignored() -> None:
    from tokviz.links import MAX_LINK_PARAMS

    params = {"preset": "bert", **{f"n{index}": "Strip" for index in range(3000)}}
    workspace, notes = from_link(params)
    assert workspace.train.preset == "gpt2"
    assert notes == [f"This link has 3,001 parameters; a tokviz link holds at most {MAX_LINK_PARAMS}, so none of it was used: the defaults are shown."]
    # 40 components in one sequence (above the 32 a pipeline may hold) is named, not silently cut.
    _, notes = from_link({"preset": "custom", "model": "BPE", **{f"n{index}": "Strip" for index in range(40)}})
    assert len(notes) == 1 and "more than 32 components" in notes[0]


def test_links_round_trip_the_result_tab_the_slider_and_sentencepiece_compare_slots() -> None:
    workspace = Workspace()
    workspace.train.slider, workspace.train.test_text, workspace.train.tab = 778, "naïve café 東京", "Charts"
    workspace.compare.entries = [CompareEntry("gpt2"), CompareEntry("bert"), CompareEntry("t5"), CompareEntry("sp_bpe")]
    params = to_link(workspace)
    assert (params["size"], params["text"], params["tab"], params["c3"]) == ("778", "naïve café 東京", "Charts", "sp_bpe")
    restored, notes = from_link(params)
    assert notes == [] and to_link(restored) == params
    assert (restored.train.slider, restored.train.tab, restored.compare.entries[3].choice) == (778, "Charts", "sp_bpe")


def test_a_custom_unigram_link_without_an_unknown_token_gets_the_forms_one_and_encodes_unseen_characters() -> None:
    from tokviz.pipeline_config import build_tokenizer
    from tokviz.training import run_training

    workspace, notes = from_link({"model": "Unigram", "vocab": "60"})
    config = workspace.train.config
    assert (config.unk_token, config.special_tokens) == ("<unk>", ("<unk>",))
    assert notes == ["Filled in as HF's examples do for Unigram: unknown token <unk>, special tokens <unk> "
                     "(the link named none; change them in Custom)."]
    history = run_training(config, 60, ["hug pug pun bun hugs"] * 5)
    tokenizer = build_tokenizer(config)
    tokenizer.model = history.model
    encoding = tokenizer.encode("hug zz")  # HF: "Encountered an unknown token but `unk_id` is missing" without one
    assert encoding.tokens == ["hug", "zz"] and encoding.ids[1] == tokenizer.token_to_id("<unk>")  # HF's Unigram shows the text
    assert from_link({"model": "Unigram", "unk_token": "[U]", "special_tokens": '["[U]"]'})[1] == []  # one named: kept
