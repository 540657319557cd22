"""SentencePiece in the app (issue 15 item 5): its pipeline config, links and checks, training through
``tokviz.training.run_training`` at parity with the ``sentencepiece`` package, and the Train page with it."""

from __future__ import annotations

import pickle
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tokviz.corpus import held_out_split
from tokviz.errors import PipelineConfigError, SpecialTokenError
from tokviz.links import from_link, from_query_params, to_link, to_query_params
from tokviz.pipeline_config import (
    PipelineConfig,
    applicable,
    build_tokenizer,
    from_form_state,
    sentencepiece_config,
    sentencepiece_options,
    to_form_state,
    tokenizer_with_model,
)
from tokviz.presets import SENTENCEPIECE_PRESETS, TRAIN_PRESETS, preset_key, sentencepiece_bpe, sentencepiece_unigram, vocab_target_hint
from tokviz.samples import load_sample
from tokviz.training import run_training
from tokviz.workspace import Workspace

spm = pytest.importorskip("sentencepiece")

SPLIT = held_out_split(load_sample())


def reference_model(config: PipelineConfig, vocab_size: int, lines: tuple[str, ...]) -> "spm.SentencePieceProcessor":
    """The ``sentencepiece`` package trained with the options the app trains with, on the same lines."""
    import io

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, minloglevel=2, **sentencepiece_options(config, vocab_size))
    return spm.SentencePieceProcessor(model_proto=out.getvalue())


@pytest.fixture(scope="module")
def trained() -> dict[str, tuple[PipelineConfig, object]]:
    """One training per model type on the sample's training lines, at 500 (char: its alphabet)."""
    out = {}
    for model_type in ("bpe", "unigram", "char", "word"):
        config = sentencepiece_config(sp_model_type=model_type)
        out[model_type] = (config, run_training(config, 500, SPLIT.train_lines))
    return out


# --------------------------------------------------------------------------- the config


def test_config_fills_its_text_side_and_special_pieces() -> None:
    config = sentencepiece_config(sp_model_type="bpe", pad_id=3, user_defined_symbols=("<mask>",))
    assert config.model == "SentencePiece"
    assert [spec.type for spec in config.normalizers] == ["Nmt", "NFKC", "Strip", "Replace"]
    assert [spec.type for spec in config.pre_tokenizers] == ["Metaspace"]
    assert config.special_tokens == ("<unk>", "<s>", "</s>", "<pad>", "<mask>") and config.unk_token == "<unk>"
    assert [spec.type for spec in sentencepiece_config(normalization_rule="identity").normalizers] == ["Strip", "Replace"]
    assert [spec.type for spec in sentencepiece_config(normalization_rule="nfkc_cf").normalizers] == ["NFKC", "Lowercase", "Strip", "Replace"]
    # T5's ids: the special pieces by id.
    assert sentencepiece_unigram().special_tokens == ("<pad>", "</s>", "<unk>")


def test_config_is_hashable_and_options_of_other_models_never_retrain() -> None:
    config = sentencepiece_config(sp_model_type="bpe")
    assert hash(config) == hash(sentencepiece_config(sp_model_type="bpe"))
    assert applicable(replace(config, end_of_word_suffix="</w>", min_frequency=3, post_processor="t5")) == config
    # ...and a BPE pipeline forgets the SentencePiece options.
    assert applicable(PipelineConfig(model="BPE", byte_fallback=True, sp_model_type="char")) == PipelineConfig(model="BPE")


def test_trainer_options_are_sentencepieces() -> None:
    assert sentencepiece_options(sentencepiece_bpe(), 5000) == {
        "vocab_size": 5000, "model_type": "bpe", "character_coverage": 0.99995, "byte_fallback": True,
        "normalization_rule_name": "identity", "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1,
        "max_sentence_length": 4192, "hard_vocab_limit": False,
    }
    assert sentencepiece_options(sentencepiece_config(user_defined_symbols=("<m>",)), 100)["user_defined_symbols"] == ["<m>"]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"unk_id": -1}, PipelineConfigError, "unk_id cannot be -1: SentencePiece always needs the unknown piece <unk>."),
        ({"bos_id": 0}, PipelineConfigError, "Two special pieces have the id 0: unk_id, bos_id, eos_id and pad_id must differ."),
        ({"pad_id": 9}, PipelineConfigError, "pad_id=9 is too large: the 4 special, user-defined and byte pieces take ids 0 to 3"),
        ({"eos_id": -2}, PipelineConfigError, "eos_id must be a whole number, or -1 for none, not -2."),
        ({"character_coverage": 0.5}, PipelineConfigError, "character_coverage must lie between 0.98 and 1.0 (sentencepiece's range), not 0.5."),
        ({"character_coverage": 1.01}, PipelineConfigError, "character_coverage must lie between 0.98 and 1.0"),
        ({"sp_model_type": "wordpiece"}, PipelineConfigError, "Unknown SentencePiece model type 'wordpiece'; choose one of unigram, bpe, char, word."),
        ({"normalization_rule": "nfd"}, PipelineConfigError, "Unknown normalization rule 'nfd'; choose one of nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf, identity."),
        ({"max_sentence_length": 5}, PipelineConfigError, "max_sentence_length must be a whole number of bytes between 10 and 1073741824, not 5."),
        ({"user_defined_symbols": ("<s>",)}, SpecialTokenError, "<s> is already a special piece"),
        ({"user_defined_symbols": ("a b",)}, SpecialTokenError, "A user-defined symbol cannot be empty or hold whitespace, as 'a b' does."),
        ({"user_defined_symbols": ("<m>", "<m>")}, SpecialTokenError, "The user-defined symbol '<m>' is listed twice."),
    ],
)
def test_bad_options_say_what_is_wrong(options: dict, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        sentencepiece_config(**options)
    assert str(raised.value).startswith(message)


def test_more_ids_with_byte_fallback_and_user_symbols() -> None:
    # 3 special pieces + 1 user symbol + 256 bytes take ids 0..259.
    assert sentencepiece_config(byte_fallback=True, user_defined_symbols=("<m>",), pad_id=259).pad_id == 259


def test_the_custom_form_round_trips() -> None:
    config = sentencepiece_config(sp_model_type="word", character_coverage=0.99, byte_fallback=True, normalization_rule="nfkc",
                                  unk_id=3, bos_id=2, eos_id=1, pad_id=0, user_defined_symbols=("<mask>", "😀"), max_sentence_length=9999)
    state = to_form_state(config)
    assert state["cfg_user_defined_symbols"] == "<mask> 😀" and state["cfg_sp_model_type"] == "word"
    assert from_form_state(state) == config


def test_links_carry_only_sentencepieces_options() -> None:
    config = sentencepiece_config(sp_model_type="bpe", pad_id=3, user_defined_symbols=("<m>",), max_sentence_length=9999)
    params = to_query_params(config, 5000)
    assert params == {"vocab": "5000", "model": "SentencePiece", "sp_model_type": "bpe", "pad_id": "3",
                      "user_defined_symbols": '["<m>"]', "max_sentence_length": "9999"}
    assert from_query_params(params) == (config, 5000)
    workspace = Workspace()
    workspace.train.preset, workspace.train.config = "custom", config
    restored, notes = from_link(to_link(workspace))
    assert restored.train.config == config and restored.train.preset == "custom" and notes == []


def test_presets_are_named_in_links() -> None:
    for key, preset in SENTENCEPIECE_PRESETS.items():
        workspace = Workspace()
        workspace.train.preset, workspace.train.config = key, preset.build()
        assert to_link(workspace) == {"preset": key, "vocab": "1000"}
        assert from_link({"preset": key})[0].train.config == preset.build()
        assert preset_key(preset.build()) == key and key in TRAIN_PRESETS


def test_a_bad_link_opens_the_defaults_with_a_note() -> None:
    workspace, notes = from_link({"model": "SentencePiece", "unk_id": "-1"})
    assert notes == ["This link was not used in full. Train settings: unk_id cannot be -1: SentencePiece always needs the unknown piece <unk>."]
    assert workspace.train.preset == "gpt2"


def test_untrained_tokenizer_shows_the_sentencepiece_text_side() -> None:
    tokenizer = build_tokenizer(sentencepiece_config(normalization_rule="nmt_nfkc_cf"))
    normalized = tokenizer.normalizer.normalize_str("Ｈello  World ")
    assert normalized == "▁hello▁world"  # sentencepiece's Normalize: the rule, spaces collapsed and escaped, the dummy prefix
    assert tokenizer.pre_tokenizer.pre_tokenize_str(normalized) == [("▁hello", (0, 6)), ("▁world", (6, 12))]


# --------------------------------------------------------------------------- training, at parity with sentencepiece


def test_bpe_trains_the_model_sentencepiece_trains(trained) -> None:
    config, history = trained["bpe"]
    assert history.algorithm == "sentencepiece-bpe"
    reference = reference_model(config, 500, SPLIT.train_lines)
    assert history.to_model_bytes() == reference.serialized_model_proto()


@pytest.mark.parametrize("model_type", ["char", "word"])
def test_char_and_word_pieces_are_sentencepieces(trained, model_type: str) -> None:
    config, history = trained[model_type]
    reference = reference_model(config, 500, SPLIT.train_lines)
    assert [piece.piece for piece in history.proto.pieces] == [reference.id_to_piece(i) for i in range(reference.get_piece_size())]


@pytest.mark.parametrize("model_type", ["bpe", "unigram", "char", "word"])
def test_the_sessions_tokenizer_encodes_as_sentencepiece_does_with_the_model(trained, model_type: str) -> None:
    """The converted tokenizer (Pipeline, Inspect, Compare, the spans) and sentencepiece loading the .model agree."""
    config, history = trained[model_type]
    sentencepiece = spm.SentencePieceProcessor(model_proto=history.to_model_bytes())
    tokenizer = tokenizer_with_model(config, history.model)
    lines = SPLIT.test_lines if model_type != "word" else ("the cat and the dog", "of the")  # word: see WholePieceHistory
    for line in lines:
        assert tokenizer.encode(line).ids == sentencepiece.encode(line), line


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_slider_sizes_encode_as_their_model_files(trained, model_type: str) -> None:
    config, history = trained[model_type]
    for size in (history.min_vocab_size + 20, (history.min_vocab_size + history.max_vocab_size) // 2):
        sentencepiece = spm.SentencePieceProcessor(model_proto=history.proto_at(size).to_bytes())
        tokenizer = tokenizer_with_model(config, history.model_at(size))
        assert tokenizer.get_vocab_size() == sentencepiece.get_piece_size() == size
        for line in SPLIT.test_lines:
            assert tokenizer.encode(line).ids == sentencepiece.encode(line)


def test_histories_pickle_for_worker_processes(trained) -> None:
    for config, history in trained.values():
        again = pickle.loads(pickle.dumps(history))
        assert again.to_model_bytes() == history.to_model_bytes()
        assert tokenizer_with_model(config, again.model).encode("the end").ids == tokenizer_with_model(config, history.model).encode("the end").ids


def test_byte_fallback_spells_unknown_characters_as_bytes() -> None:
    config = sentencepiece_bpe()
    history = run_training(config, 700, SPLIT.train_lines)
    tokenizer = tokenizer_with_model(config, history.model)
    encoding = tokenizer.encode("☃ snow")
    assert encoding.tokens[:4] == ["▁", "<0xE2>", "<0x98>", "<0x83>"]
    assert tokenizer.decode(encoding.ids) == "☃ snow"
    assert encoding.ids == spm.SentencePieceProcessor(model_proto=history.to_model_bytes()).encode("☃ snow")


def test_a_target_the_corpus_cannot_reach_stops_below_it_with_a_hint() -> None:
    history = run_training(sentencepiece_config(sp_model_type="unigram"), 5000, SPLIT.train_lines)
    assert history.model.get_vocab_size() < 5000
    hint = vocab_target_hint(history, 5000)
    assert hint.startswith(f"SentencePiece Unigram stopped at {history.model.get_vocab_size():,} pieces, below the target of 5,000")


def test_too_small_a_vocab_says_so() -> None:
    with pytest.raises(ValueError, match="Vocabulary size is smaller than required_chars"):
        run_training(sentencepiece_bpe(), 300, SPLIT.train_lines)


# --------------------------------------------------------------------------- the Train page (AppTest)

from tests.test_page_train import assert_clean, metric, open_train, span_html  # noqa: E402


def page_ids(app) -> list[int]:
    """The token ids of the test text's spans (every line, each token labelled by its id)."""
    if not app.toggle(key="show_ids").value or not app.toggle(key="show_all_lines").value:
        app.toggle(key="show_ids").set_value(True)
        app.toggle(key="show_all_lines").set_value(True).run()
        assert_clean(app)
    return [int(found) for found in re.findall(r"<summary[^>]*>(\d+)</summary>", span_html(app))]


def test_train_page_sentencepiece_bpe_from_the_custom_form() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("custom").run()
    app.selectbox(key="cfg_model").set_value("SentencePiece").run()
    app.selectbox(key="cfg_sp_model_type").set_value("bpe").run()
    app.number_input(key="target_vocab").set_value(500).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert [tab.label for tab in app.tabs] == ["Merge history", "Vocabulary", "Charts", "Export"]
    assert app.query_params["model"] == "SentencePiece" and app.query_params["sp_model_type"] == "bpe"
    assert [item.label for item in app.metric][2] == "words (between spaces)"  # it has no pre-tokenizer
    captions = [caption.value for caption in app.caption]
    assert any(caption.startswith("Trained SentencePiece BPE in") for caption in captions)
    assert any(caption.startswith(f"SentencePiece trained on {len(SPLIT.train_lines)} raw lines") for caption in captions)
    config = sentencepiece_config(sp_model_type="bpe")
    history = run_training(config, 500, SPLIT.train_lines)
    first = history.merge_steps[0]
    assert any(text.value.startswith(f"Merge #1: {first.left!r} + {first.right!r} → {first.token!r}   count {first.count:,}") for text in app.text)
    text = app.text_area(key="test_text").value
    assert page_ids(app) == spm.SentencePieceProcessor(model_proto=history.to_model_bytes()).encode(text)
    # Only the open result tab may be built (the page's ``result_tab``): open Export, then Vocabulary.
    app.session_state["_tokviz_workspace"].train.tab = "Export"  # the workspace holds the open tab
    app.run()
    labels = [button.proto.label for button in app.get("download_button")]
    assert labels == ["tokenizer.json", "vocab.txt", "merges.txt", "Download for transformers", "history.csv", "history.json", "sentencepiece .model"]
    # The slider: the tokenizer at a smaller size is the .model at that size.
    size = history.min_vocab_size + 40
    app.session_state["_tokviz_workspace"].train.tab = "Vocabulary"
    app.slider(key="vocab_slider").set_value(size).run()
    assert_clean(app)
    assert f"{size} tokens at this vocab size, by id." in [caption.value for caption in app.caption]
    from tokviz.ui.train_views import sentencepiece_model_bytes

    assert page_ids(app) == spm.SentencePieceProcessor(model_proto=sentencepiece_model_bytes(history, size)).encode(text)


def test_train_page_sentencepiece_unigram_preset() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("sp_unigram").run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert [tab.label for tab in app.tabs] == ["EM and pruning", "Lattice and sampling", "Vocabulary", "Charts", "Export"]
    assert app.query_params["preset"] == "sp_unigram"
    history = run_training(sentencepiece_unigram(), 500, SPLIT.train_lines)  # the preset starts at 500: EM and pruning show
    text = app.text_area(key="test_text").value
    assert page_ids(app) == spm.SentencePieceProcessor(model_proto=history.to_model_bytes()).encode(text)
    assert int(metric(app, "tokens")) == len(page_ids(app))
    size = (history.min_vocab_size + history.max_vocab_size) // 2
    app.slider(key="vocab_slider").set_value(size).run()
    assert_clean(app)
    assert page_ids(app) == spm.SentencePieceProcessor(model_proto=history.proto_at(size).to_bytes()).encode(text)
