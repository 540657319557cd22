"""The session workspace across pages (issue 17), through AppTest: what the user chose survives page
switches and reloads, one corpus serves Train and Compare, and every page shows the session's tokenizer.

Streamlit's caches live as long as the process, so each test trains on a corpus of its own (a
unique line in it), and the call counts below see only that test's trainings.
"""

from __future__ import annotations

import uuid

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz.links import to_link
from tokviz.samples import load_sample
from tokviz.ui.workspace import WORKSPACE_KEY


def fresh_app(query: dict[str, str] | None = None, page: str = "pages/train.py") -> AppTest:
    app = open_page(page, query=query or {})
    assert not app.exception, [str(error.value) for error in app.exception]
    return app


def go(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, [str(error.value) for error in app.exception]
    return app


def metric(app: AppTest, label: str) -> str:
    return next(item.value for item in app.metric if item.label == label)


def spans(app: AppTest) -> str:
    return next(block.proto.body for block in reversed(app.html) if "tokviz-spans" in block.proto.body)


def own_corpus() -> str:
    """The sample plus a line no other test has: its own corpus hash, so its own trainings."""
    return load_sample() + f"\nA line only this test has: {uuid.uuid4().hex}."


@pytest.fixture()
def counted(monkeypatch):
    """Count trainer runs (train_from_word_counts of any trainer) and word countings."""
    import tokviz.word_counts
    from tokviz import trainers

    calls = {"train": 0, "count": 0}
    for name in ("BpeTrainer", "WordPieceTrainer", "UnigramTrainer", "WordLevelTrainer"):
        cls = getattr(trainers, name)
        original = cls.train_from_word_counts

        def wrapped(self, *args, _original=original, **kwargs):
            calls["train"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "train_from_word_counts", wrapped)
    count_words = tokviz.word_counts.count_words

    def counting(*args, **kwargs):
        calls["count"] += 1
        return count_words(*args, **kwargs)

    monkeypatch.setattr(tokviz.word_counts, "count_words", counting)
    return calls


def test_train_home_train_keeps_corpus_pipeline_vocab_slider_text_and_spans_without_retraining(counted) -> None:
    corpus = own_corpus()
    app = fresh_app()
    app.text_area(key="corpus_text").set_value(corpus).run()
    app.selectbox(key="preset").set_value("custom").run()
    app.multiselect(key="cfg_normalizers").set_value(["NFKC", "Lowercase"]).run()
    app.selectbox(key="cfg_model").set_value("WordPiece").run()
    app.text_input(key="cfg_special_tokens").set_value("[UNK]").run()
    app.text_input(key="cfg_unk_token").set_value("[UNK]").run()
    app.number_input(key="target_vocab").set_value(900).run()
    slider = app.slider(key="vocab_slider")
    assert slider.max == 900
    app.slider(key="vocab_slider").set_value(700).run()
    app.text_area(key="test_text").set_value("Tokenizers keep what you chose.").run()
    assert not app.error, [error.value for error in app.error]
    before = (metric(app, "tokens"), spans(app))
    trainings = counted["train"]

    go(app, "app.py")
    go(app, "pages/train.py")
    assert app.text_area(key="corpus_text").value == corpus
    assert app.selectbox(key="preset").value == "custom"
    assert app.multiselect(key="cfg_normalizers").value == ["NFKC", "Lowercase"]
    assert app.selectbox(key="cfg_model").value == "WordPiece"
    assert app.number_input(key="target_vocab").value == 900
    assert app.slider(key="vocab_slider").value == 700
    assert app.text_area(key="test_text").value == "Tokenizers keep what you chose."
    assert (metric(app, "tokens"), spans(app)) == before
    assert counted["train"] == trainings  # nothing retrained


def test_one_trainer_call_and_one_word_count_per_training(counted) -> None:
    app = fresh_app()
    app.text_area(key="corpus_text").set_value(own_corpus()).run()
    assert counted == {"train": 1, "count": 1}
    app.selectbox(key="preset").set_value("bert").run()  # another text side: words counted again, once
    assert counted == {"train": 2, "count": 2}
    app.slider(key="vocab_slider").set_value(500).run()  # a slider move trains nothing and counts nothing
    assert counted == {"train": 2, "count": 2}


def test_the_train_corpus_is_the_compare_corpus_and_four_configurations_survive(counted) -> None:
    corpus = own_corpus()
    app = fresh_app()
    app.text_area(key="corpus_text").set_value(corpus).run()
    go(app, "pages/compare.py")
    assert any("your pasted text" in caption.value for caption in app.caption)
    assert app.text_area(key="compare_corpus_text").value == corpus
    app.radio(key="compare_count").set_value(4).run()
    app.selectbox(key="compare_preset_3").set_value("custom").run()
    app.selectbox(key="compare_model_3").set_value("WordPiece").run()
    app.radio(key="compare_scoring_3").set_value("likelihood").run()
    app.number_input(key="compare_vocab_3").set_value(600).run()
    assert not app.error, [error.value for error in app.error]
    go(app, "pages/learn.py")
    go(app, "pages/compare.py")
    assert app.radio(key="compare_count").value == 4
    assert [app.selectbox(key=f"compare_preset_{i}").value for i in range(4)] == ["gpt2", "bert", "t5", "custom"]
    assert app.selectbox(key="compare_model_3").value == "WordPiece"
    assert app.radio(key="compare_scoring_3").value == "likelihood"
    assert app.number_input(key="compare_vocab_3").value == 600
    # What Compare is given, Train trains on: paste on Compare, see it on Train.
    other = own_corpus()
    app.text_area(key="compare_corpus_text").set_value(other).run()
    go(app, "pages/train.py")
    assert app.text_area(key="corpus_text").value == other


def test_learn_returns_to_the_same_lesson_step_and_mode() -> None:
    app = fresh_app(page="pages/learn.py")
    app.selectbox(key="learn_lesson").set_value("unigram").run()
    app.button(key="learn_next").click().run()
    app.button(key="learn_next").click().run()
    assert app.slider(key="learn_step").value == 3
    go(app, "app.py")
    go(app, "pages/learn.py")
    assert app.selectbox(key="learn_lesson").value == "unigram"
    assert app.slider(key="learn_step").value == 3
    app.selectbox(key="learn_lesson").set_value("bpe").run()
    app.toggle(key="learn_predict").set_value(True).run()
    go(app, "pages/train.py")
    go(app, "pages/learn.py")
    assert app.selectbox(key="learn_lesson").value == "bpe" and app.toggle(key="learn_predict").value is True


def test_a_reload_restores_everything_but_a_pasted_corpus_and_says_so() -> None:
    app = fresh_app()
    app.selectbox(key="preset").set_value("t5").run()
    app.number_input(key="target_vocab").set_value(600).run()
    app.slider(key="vocab_slider").set_value(500).run()
    app.text_area(key="test_text").set_value("A reload keeps this text.").run()
    go(app, "pages/learn.py")
    app.selectbox(key="learn_lesson").set_value("wordpiece").run()
    link = to_link(app.session_state[WORKSPACE_KEY])
    assert dict(app.query_params) == link or {key: value[-1] if isinstance(value, list) else value for key, value in app.query_params.items()} == link

    reloaded = fresh_app(link)  # a new session opening the same URL
    assert reloaded.selectbox(key="preset").value == "t5"
    assert reloaded.number_input(key="target_vocab").value == 600
    assert reloaded.slider(key="vocab_slider").value == 500
    assert reloaded.text_area(key="test_text").value == "A reload keeps this text."
    go(reloaded, "pages/learn.py")
    assert reloaded.selectbox(key="learn_lesson").value == "wordpiece"

    pasted = fresh_app()
    pasted.text_area(key="corpus_text").set_value(own_corpus()).run()
    again = fresh_app(to_link(pasted.session_state[WORKSPACE_KEY]))
    assert again.text_area(key="corpus_text").value == load_sample()
    assert any("pasted corpus, which links do not carry" in info.value for info in again.info)


def test_pipeline_and_inspect_show_the_session_tokenizer_at_the_slider_size() -> None:
    from tokviz.corpus import held_out_split
    from tokviz.pipeline_config import build_trainer, tokenizer_with_model
    from tokviz.presets import PRESETS
    from tokviz.pipeline_config import build_model, build_normalizer, build_pre_tokenizer
    from tokviz.word_counts import count_words

    app = fresh_app()
    app.selectbox(key="preset").set_value("t5").run()
    app.number_input(key="target_vocab").set_value(400).run()
    train_tokens = metric(app, "tokens")
    size = app.slider(key="vocab_slider").value

    config = PRESETS["t5"].build()
    lines = held_out_split(load_sample()).train_lines
    words = count_words(lines, build_normalizer(config), build_pre_tokenizer(config))
    history = build_trainer(config, 400).train_from_word_counts(words)
    history = history.for_model(build_model(config)) if hasattr(history, "for_model") else history
    expected = tokenizer_with_model(config, history.model)
    assert expected.get_vocab_size() <= 400 and size == history.model.get_vocab_size()

    go(app, "pages/pipeline.py")
    choice = app.selectbox(key="pipeline_tokenizer")
    assert choice.value == "session"
    assert choice.format_func("session") == f"Trained on the Train page (Unigram, {expected.get_vocab_size():,} tokens)"
    text = app.text_area(key="pipeline_text").value
    table = next(frame.value for frame in app.dataframe if "attention mask" in frame.value.columns)
    assert [int(value) for value in table["id"]] == expected.encode(text).ids

    go(app, "pages/inspect.py")
    assert app.selectbox(key="inspect_tokenizer").value == "session"
    assert metric(app, "vocab size") == f"{expected.get_vocab_size():,}"
    go(app, "pages/train.py")
    assert metric(app, "tokens") == train_tokens
