"""The bad-input matrix (issue 7): each row is one test, first on the core, then on the Train page.

Every row must end in a clear :class:`tokviz.errors.TokvizError` (or a documented result),
never a traceback or a hang; on the page the message is shown with ``st.error`` and the
next normal action on the same session works.
"""

from __future__ import annotations

import contextvars
import re
import threading
from pathlib import Path

import pytest
import tokenizers as hf
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz import Regex, Tokenizer, normalizers, pre_tokenizers
from tokviz.corpus import column_text, decode_upload, read_table, read_upload
from tokviz.errors import (
    CorpusReadError,
    EmptyCorpusError,
    LimitExceededError,
    PatternError,
    PatternTimeoutError,
    PipelineConfigError,
    SerializationError,
    SpecialTokenError,
    UnknownIdError,
    VocabSizeError,
)
from tokviz.pipeline_config import PipelineConfig, build_normalizer, build_pre_tokenizer, build_tokenizer, build_trainer, component
from tokviz.presets import PRESETS
from tokviz.word_counts import count_words

CATASTROPHIC = "(a|aa)+$"  # the `regex` module does not defuse this one
PRESET_NAMES = list(PRESETS)


def train(preset: str, lines: list[str], vocab_size: int = 300):
    config = PRESETS[preset].build()
    tokenizer = build_tokenizer(config)
    tokenizer.train_from_iterator(lines, build_trainer(config, vocab_size))
    history = tokenizer.training_history
    return tokenizer, history


def finishes(function, seconds: float = 60.0):
    """Run ``function`` in a thread; a hang fails the test instead of blocking the suite."""
    outcome: dict[str, object] = {}
    context = contextvars.copy_context()  # the caller's pattern time budget goes along

    def target() -> None:
        try:
            outcome["value"] = context.run(function)
        except BaseException as error:  # handed back to the test below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a hang"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


# ---------------------------------------------------------------------------------------
# Core


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_core_empty_corpus(preset: str) -> None:
    with pytest.raises(EmptyCorpusError, match="The corpus is empty"):
        train(preset, [])
    with pytest.raises(EmptyCorpusError):
        train(preset, ["", ""])


@pytest.mark.parametrize(("preset", "vocab"), [("gpt2", 262), ("bert", None), ("t5", 6), ("char_bpe", None)])
def test_core_whitespace_only_corpus(preset: str, vocab: int | None) -> None:
    """Byte-level and Metaspace pipelines keep spaces as symbols and train; the others have no words."""
    if vocab is None:
        with pytest.raises(EmptyCorpusError):
            train(preset, ["   ", "\t \n  "])
    else:
        _, history = train(preset, ["   ", "\t \n  "])
        assert history.max_vocab_size == vocab


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_core_one_character_repeated_a_million_times_is_refused_before_training(preset: str) -> None:
    from tokviz.limits import check_training_request

    text = "a" * 1_000_000
    config = PRESETS[preset].build()
    words = count_words([text], build_normalizer(config), build_pre_tokenizer(config))
    with pytest.raises(LimitExceededError, match="word .* of 1,000,00[01] characters"):
        check_training_request(len(text), words)


def test_core_one_character_repeated_a_million_times_encodes_like_hf() -> None:
    """WordPiece gives one [UNK] for a word over 100 characters, as HF does."""
    tokenizer, _ = train("bert", ["hello world"] * 5, 60)
    text = "a" * 1_000_000
    encoding = finishes(lambda: tokenizer.encode(text))
    peer = hf.Tokenizer.from_str(tokenizer.to_str())
    assert encoding.tokens == peer.encode(text).tokens == ["[UNK]"]
    assert encoding.offsets == [(0, 1_000_000)]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_core_a_5_mb_line_without_spaces_is_refused_before_training(preset: str) -> None:
    from tokviz.limits import check_training_request

    line = "abcdefghij" * 500_000
    config = PRESETS[preset].build()
    words = count_words([line], build_normalizer(config), build_pre_tokenizer(config))
    with pytest.raises(LimitExceededError, match="characters per word"):
        check_training_request(len(line), words)


def test_core_a_long_word_without_spaces_encodes_with_bpe_exactly_like_hf() -> None:
    """Long words merge through a heap (once quadratic: a 5 MB word never finished)."""
    tokenizer, _ = train("gpt2", ["abcabc abcd abcabcabc dabc"] * 20, 270)
    word = "abcabcd" * 30_000  # 210,000 characters, one pre-token
    encoding = finishes(lambda: tokenizer.encode(word))
    peer = hf.Tokenizer.from_str(tokenizer.to_str()).encode(word)
    assert encoding.ids == peer.ids
    assert encoding.offsets == peer.offsets


def test_core_the_training_character_limit(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TRAINING_CHARS", 100)
    with pytest.raises(LimitExceededError, match="101 characters, above this server's training limit of 100"):
        tokviz.limits.check_training_request(101)
    tokviz.limits.check_training_request(100, {"word": 3})


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("blob.txt", bytes(range(256)) * 8, "binary file"),
        ("archive.txt", b"PK\x03\x04" + bytes(300), "ZIP archive"),
        ("image.csv", b"\x89PNG\r\n\x1a\n" + bytes(300), "PNG image"),
        ("control.txt", bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 100, "binary file"),
    ],
)
def test_core_binary_uploads(name: str, data: bytes, message: str) -> None:
    with pytest.raises(CorpusReadError, match=message):
        read_upload(data, name)


def test_core_non_utf8_upload_decodes_with_a_notice() -> None:
    decoded = decode_upload("Crème brûlée, déjà vu\n".encode("cp1252"), "menu.txt")
    assert decoded.text == "Crème brûlée, déjà vu\n"
    assert decoded.notice


def test_core_csv_without_the_chosen_column() -> None:
    frame = read_table("review,stars\ngreat,5\nbad,1\n", "reviews.csv")
    assert column_text(frame, "review") == "great\nbad"
    with pytest.raises(CorpusReadError, match="has no column 'text'; its columns are: review, stars"):
        column_text(frame, "text", "reviews.csv")
    with pytest.raises(CorpusReadError, match="no column 'text'"):
        read_upload(b"review,stars\ngreat,5\n", "reviews.csv", column="text")


@pytest.mark.parametrize("kind", ["Replace", "Split"])
def test_core_invalid_regex(kind: str) -> None:
    with pytest.raises(PatternError, match=r"The regular expression '\(unclosed' is invalid"):
        normalizers.Replace(Regex("(unclosed"), "x") if kind == "Replace" else pre_tokenizers.Split(Regex("(unclosed"), "removed")
    spec = "normalizers" if kind == "Replace" else "pre_tokenizers"
    config = PipelineConfig(**{spec: (component(kind, pattern="[a-", regex=True),)})
    with pytest.raises(PatternError):
        build_tokenizer(config)


@pytest.mark.parametrize("kind", ["Replace", "Split"])
def test_core_catastrophic_regex_stops_with_an_error_not_a_hang(kind: str) -> None:
    text = "a" * 40 + "b"
    if kind == "Replace":
        run = lambda: normalizers.Replace(Regex(CATASTROPHIC), "x").normalize_str(text)  # noqa: E731
    else:
        run = lambda: pre_tokenizers.Split(Regex(CATASTROPHIC), "isolated").pre_tokenize_str(text)  # noqa: E731
    with pytest.raises(PatternTimeoutError, match="catastrophic backtracking"):
        finishes(run)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_core_vocab_size_zero(preset: str) -> None:
    with pytest.raises(VocabSizeError, match="whole number of 1 or more, not 0"):
        train(preset, ["hello world"], 0)


# BERT-like trains as HF's WordPieceTrainer: its alphabet holds each character alone and with '##' (HF: 36 too).
@pytest.mark.parametrize(("preset", "alphabet"), [("gpt2", 257), ("bert", 36), ("char_bpe", 25)])
def test_core_vocab_size_one_and_below_the_alphabet_give_the_alphabet(preset: str, alphabet: int) -> None:
    """BPE and WordPiece (as in HF) keep the whole alphabet and learn no merge."""
    for size in (1, 5):
        _, history = train(preset, ["hello world, the quick brown fox"], size)
        assert history.max_vocab_size == alphabet
        assert history.merges == ()


def test_core_unigram_vocab_below_the_alphabet_says_how_many_are_needed() -> None:
    for size in (1, 5):
        with pytest.raises(VocabSizeError, match="the corpus has 19 distinct characters and there are 3 special tokens, so at least 22"):
            train("t5", ["hello world, the quick brown fox"], size)


@pytest.mark.parametrize(("preset", "reached"), [("gpt2", 281), ("bert", 56), ("t5", 23), ("char_bpe", 46)])  # HF's WordPieceTrainer: 56
def test_core_vocab_size_above_what_the_corpus_allows_stops_early(preset: str, reached: int) -> None:
    _, history = train(preset, ["hello world, the quick brown fox"], 100_000)
    assert history.max_vocab_size == reached
    assert history.stop_reason


def test_core_empty_special_token() -> None:
    with pytest.raises(SpecialTokenError, match="cannot be empty"):
        PipelineConfig(special_tokens=("<s>", ""))
    from tokviz.trainers import BpeTrainer, UnigramTrainer, WordLevelTrainer, WordPieceTrainer

    for trainer in (BpeTrainer, WordPieceTrainer, UnigramTrainer, WordLevelTrainer):
        with pytest.raises(SpecialTokenError):
            trainer(vocab_size=50, special_tokens=[""])


def test_core_duplicated_special_tokens() -> None:
    """The page's config refuses them; the trainers keep one copy, as HF's BpeTrainer does."""
    with pytest.raises(SpecialTokenError, match="'<s>' is listed twice"):
        PipelineConfig(special_tokens=("<s>", "<s>"))
    from tokviz.models import BPE
    from tokviz.trainers import BpeTrainer

    ours = Tokenizer(BPE())
    ours.train_from_iterator(["hello hello world"], BpeTrainer(vocab_size=30, special_tokens=["<s>", "<s>"]))
    peer = hf.Tokenizer(hf.models.BPE())
    peer.train_from_iterator(["hello hello world"], hf.trainers.BpeTrainer(vocab_size=30, special_tokens=["<s>", "<s>"]))
    assert ours.get_vocab() == peer.get_vocab()


def test_core_overlapping_special_tokens_match_hf() -> None:
    from tokviz.models import BPE
    from tokviz.trainers import BpeTrainer

    specials = ["<s>", "<s>x", "s>"]
    ours = Tokenizer(BPE(unk_token="<s>"))
    ours.train_from_iterator(["a s x <s> <s>x"] * 3, BpeTrainer(vocab_size=40, special_tokens=specials))
    peer = hf.Tokenizer.from_str(ours.to_str())
    for text in ["<s>x", "a<s>xs>", "s><s>", "<s<s>x>"]:
        assert ours.encode(text).tokens == peer.encode(text).tokens, text
        assert ours.encode(text).offsets == peer.encode(text).offsets, text


@pytest.fixture(scope="module")
def trained_json() -> str:
    tokenizer, _ = train("gpt2", ["hello world, the quick brown fox"], 280)
    return tokenizer.to_str()


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda text: text[: len(text) // 2], "JSON is malformed"),
        (lambda text: "", "JSON is malformed"),
        (lambda text: "[1, 2]", "top level must be a JSON object"),
        (lambda text: '{"version": "1.0"}', "no 'model' section"),
        (lambda text: text.replace('"type":"BPE"', '"type":"Mystery"', 1), "cannot represent the model 'Mystery'"),
        (lambda text: text.replace('"vocab":{', '"vocab":{"zz":"x",', 1), "ids must be non-negative integers"),
        (lambda text: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
    ids=["truncated", "empty", "array", "no-model", "unknown-model", "bad-id", "deep"],
)
def test_core_malformed_or_truncated_tokenizer_json(trained_json: str, mangle, message: str) -> None:
    with pytest.raises(SerializationError, match=message):
        Tokenizer.from_str(mangle(trained_json))


def test_core_oversized_tokenizer_json(trained_json: str, monkeypatch, tmp_path: Path) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TOKENIZER_JSON_BYTES", 1_000)
    with pytest.raises(LimitExceededError, match="above this server's limit"):
        Tokenizer.from_str(trained_json)
    path = tmp_path / "tokenizer.json"
    path.write_text(trained_json, encoding="utf-8")
    with pytest.raises(LimitExceededError):
        Tokenizer.from_file(str(path))


@pytest.mark.parametrize("bad_id", [-1, 281, 10**9])
def test_core_ids_out_of_range_in_decode(trained_json: str, bad_id: int) -> None:
    tokenizer = Tokenizer.from_str(trained_json)
    with pytest.raises(UnknownIdError, match=f"Cannot decode the id {bad_id}: it is not in the vocabulary"):
        tokenizer.decode([0, bad_id])
    if bad_id >= 0:
        assert tokenizer.id_to_token(bad_id) is None  # HF returns None here too
    else:
        with pytest.raises(OverflowError):  # as HF (an unsigned id)
            tokenizer.id_to_token(bad_id)
    assert tokenizer.decode(tokenizer.encode("hello").ids) == "hello"


# ---------------------------------------------------------------------------------------
# The Train page through AppTest: the message, then a normal action that works


RECOVERY_TEXT = "the quick brown fox jumps over the lazy dog\n" * 30


def open_train() -> AppTest:
    return open_page("pages/train.py")


def errors(app: AppTest) -> list[str]:
    """The page's error messages as a user reads them (ui.show_error escapes Markdown with backslashes)."""
    assert not app.exception, [str(error.value) for error in app.exception]
    return [re.sub(r"\\(.)", r"\1", error.value) for error in app.error]


def recovers(app: AppTest) -> None:
    """A normal action after the error: clear any upload, paste a corpus, and it trains."""
    if app.get("file_uploader") and app.file_uploader(key="corpus_file").value is not None:
        app.file_uploader(key="corpus_file").set_value(None).run()
    if "corpus_use_sample" in {button.key for button in app.button}:  # a large paste is held outside the text box
        app.button(key="corpus_use_sample").click().run()
    app.text_area(key="corpus_text").set_value(RECOVERY_TEXT).run()
    assert errors(app) == []
    assert int(next(item.value for item in app.metric if item.label == "tokens")) > 0


@pytest.fixture()
def app() -> AppTest:
    return open_train()


def test_page_empty_corpus(app: AppTest) -> None:
    app.text_area(key="corpus_text").set_value("").run()
    assert any("The corpus is empty" in error for error in errors(app))
    recovers(app)


def test_page_whitespace_only_corpus_with_a_word_pipeline(app: AppTest) -> None:
    app.selectbox(key="preset").set_value("bert").run()
    app.text_area(key="corpus_text").set_value("   \n\t\n     \n").run()
    assert any("The corpus is empty" in error for error in errors(app))
    recovers(app)


def test_page_one_character_repeated_a_million_times(app: AppTest) -> None:
    app.text_area(key="corpus_text").set_value("a" * 1_000_000).run()  # too big to train live
    app.button(key="train").click().run()
    assert any("a word (a run of text without a break) of 1,000,000 characters" in error for error in errors(app))
    recovers(app)


def test_page_a_5_mb_upload_without_spaces(app: AppTest) -> None:
    app.file_uploader(key="corpus_file").set_value(("minified.txt", b"abcdefghij" * 500_000, "text/plain")).run()
    app.button(key="train").click().run()
    assert any("characters per word" in error for error in errors(app))
    recovers(app)


def test_page_corpus_above_the_training_limit(app: AppTest, monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TRAINING_CHARS", 500)
    app.text_area(key="corpus_text").set_value("hello world\n" * 100).run()
    assert any("1,200 characters, above this server's training limit of 500" in error for error in errors(app))
    recovers_small = "hello world\n" * 30
    app.text_area(key="corpus_text").set_value(recovers_small).run()
    assert errors(app) == []


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("blob.txt", bytes(range(256)) * 8, "binary file"),
        ("image.csv", b"\x89PNG\r\n\x1a\n" + bytes(300), "PNG image"),
    ],
)
def test_page_binary_upload(app: AppTest, name: str, data: bytes, message: str) -> None:
    app.file_uploader(key="corpus_file").set_value((name, data, "application/octet-stream")).run()
    assert any(message in error for error in errors(app))
    recovers(app)


def test_page_non_utf8_upload_trains_with_a_notice(app: AppTest) -> None:
    app.file_uploader(key="corpus_file").set_value(("menu.txt", ("Crème brûlée déjà vu\n" * 40).encode("cp1252"), "text/plain")).run()
    assert errors(app) == []
    assert app.warning  # the guessed encoding is named
    recovers(app)


def test_page_csv_without_a_column_to_train_on(app: AppTest) -> None:
    app.file_uploader(key="corpus_file").set_value(("empty.csv", b"review,stars\n", "text/csv")).run()
    assert any("has no rows or no columns" in error for error in errors(app))
    recovers(app)


def custom(app: AppTest, **state) -> None:
    app.selectbox(key="preset").set_value("custom").run()
    for key, value in state.items():
        widget = app.multiselect(key=key) if key.endswith(("normalizers", "pre_tokenizers")) else None
        if widget is not None:
            widget.set_value(value).run()
        elif isinstance(value, bool):
            app.checkbox(key=key).set_value(value)
        else:
            app.text_input(key=key).set_value(value)
    app.run()


def test_page_invalid_regex_in_replace(app: AppTest) -> None:
    custom(app, cfg_normalizers=["Replace"], cfg_n_Replace_regex=True, cfg_n_Replace_pattern="(unclosed")
    assert any("The regular expression '(unclosed' is invalid" in error for error in errors(app))
    app.text_input(key="cfg_n_Replace_pattern").set_value(r"\d+").run()
    assert errors(app) == []
    recovers(app)


def test_page_catastrophic_regex_in_split(app: AppTest) -> None:
    app.text_area(key="corpus_text").set_value(("a" * 40 + "b\n") * 3).run()
    custom(app, cfg_pre_tokenizers=["Split"], cfg_p_Split_regex=True, cfg_p_Split_pattern=CATASTROPHIC)
    assert any("catastrophic backtracking" in error for error in errors(app))
    app.text_input(key="cfg_p_Split_pattern").set_value(r"\s+").run()
    recovers(app)


def test_page_vocab_size_one_and_below_the_alphabet(app: AppTest) -> None:
    app.number_input(key="target_vocab").set_value(1).run()
    assert errors(app) == []  # byte-level BPE keeps its 256 bytes + the special token
    assert any("The vocabulary has 257 tokens and nothing to slide" in info.value for info in app.info)
    app.selectbox(key="preset").set_value("t5").run()
    assert any("is too small" in error for error in errors(app))
    app.number_input(key="target_vocab").set_value(600).run()
    assert errors(app) == []


def test_page_vocab_size_above_what_the_corpus_allows(app: AppTest) -> None:
    app.text_area(key="corpus_text").set_value("hello world\n" * 20).run()
    app.number_input(key="target_vocab").set_value(50_000).run()
    assert errors(app) == []
    assert any("Stopped because" in caption.value for caption in app.caption)


@pytest.mark.parametrize(
    ("specials", "message"),
    [("[UNK] [UNK]", "listed twice"), ("<s> <s>x [UNK]", None)],
    ids=["duplicated", "overlapping"],
)
def test_page_duplicated_and_overlapping_special_tokens(app: AppTest, specials: str, message: str | None) -> None:
    custom(app, cfg_special_tokens=specials, cfg_unk_token="[UNK]")
    found = errors(app)
    if message is None:
        assert found == []
    else:
        assert any(message in error for error in found)
    app.text_input(key="cfg_special_tokens").set_value("[UNK] <s>").run()
    assert errors(app) == []
    recovers(app)


def test_page_catastrophic_regex_in_replace(app: AppTest) -> None:
    app.text_area(key="corpus_text").set_value(("a" * 40 + "b\n") * 3).run()
    custom(app, cfg_normalizers=["Replace"], cfg_n_Replace_regex=True, cfg_n_Replace_pattern=CATASTROPHIC)
    assert any("catastrophic backtracking" in error for error in errors(app))
    app.text_input(key="cfg_n_Replace_pattern").set_value("b+").run()
    recovers(app)


def test_every_streamlit_cache_is_bounded() -> None:
    """Each st.cache_resource / st.cache_data sets max_entries, so cached memory stays bounded."""
    root = Path(__file__).resolve().parent.parent
    sources = [root / "app.py", *sorted((root / "tokviz" / "ui").glob("*.py")), *sorted((root / "pages").glob("*.py"))]
    decorators = [
        (path.name, line.strip())
        for path in sources
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"^@st\.cache_(?:resource|data)\b|\bst\.cache_(?:resource|data)\s*\(", line.split("#", 1)[0].strip())
    ]
    assert len(decorators) >= 5
    assert [entry for entry in decorators if "max_entries=" not in entry[1]] == []


SLOW_LINE = "a" * 22 + "b"  # (a|aa)+$ takes a few ms here: under the per-search limit, slow in bulk


def test_core_a_pattern_slow_on_every_line_stops_at_the_request_budget() -> None:
    from tokviz.patterns import time_budget

    tokenizer = Tokenizer.from_str(build_tokenizer(PipelineConfig(
        pre_tokenizers=(component("Split", pattern=CATASTROPHIC, behavior="isolated", regex=True),), model="WordLevel",
        special_tokens=("[UNK]",), unk_token="[UNK]",
    )).to_str())
    splitter = tokenizer.pre_tokenizer
    assert splitter.pre_tokenize_str(SLOW_LINE)  # one line is fine
    with pytest.raises(PatternTimeoutError, match="used up this request's time budget of 0.2 s"):
        with time_budget(0.2):
            finishes(lambda: [splitter.pre_tokenize_str(SLOW_LINE + str(index)) for index in range(100_000)])
    assert splitter.pre_tokenize_str(SLOW_LINE)  # outside the block, no budget


def test_core_each_thread_has_its_own_pattern_budget() -> None:
    """Streamlit runs each session in its own thread: one session's budget never stops another."""
    from tokviz.patterns import time_budget

    replace = normalizers.Replace(Regex("a+"), "x")
    seen: list[str] = []
    with time_budget(0.0):
        with pytest.raises(PatternTimeoutError):
            replace.normalize_str("aaa")
        thread = threading.Thread(target=lambda: seen.append(replace.normalize_str("baab")))
        thread.start()
        thread.join(10)
    assert seen == ["bxb"]


def test_page_a_pattern_slow_on_every_line_stops_at_the_request_budget(app: AppTest, monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "PATTERN_REQUEST_BUDGET_SECONDS", 0.2)
    app.text_area(key="corpus_text").set_value("\n".join(f"{SLOW_LINE} {index}" for index in range(2_000))).run()
    custom(app, cfg_pre_tokenizers=["Split"], cfg_p_Split_regex=True, cfg_p_Split_pattern=CATASTROPHIC)
    assert any("used up this request's time budget of 0.2 s" in error for error in errors(app))
    app.text_input(key="cfg_p_Split_pattern").set_value(r"\s+").run()
    recovers(app)


@pytest.mark.parametrize(("vocab", "message", "opened_at"), [
    ("999999999", "A vocab size of 999,999,999 is above this server's limit of 50,000", 50_000),
    ("0", "whole number of 1 or more, not 0", 1000),
    ("abc", "cannot be read as int", 1000),
])
def test_page_a_link_with_a_bad_vocab_size(vocab: str, message: str, opened_at: int) -> None:
    app = open_page("pages/train.py", query={"preset": "bert", "vocab": vocab})  # a link: its URL is the first run's
    assert any(message in error for error in errors(app))
    assert app.number_input(key="target_vocab").value == opened_at
    app.number_input(key="target_vocab").set_value(300).run()
    assert errors(app) == []


def test_page_a_test_text_above_the_limit_is_cut_with_a_message(app: AppTest, monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TEST_TEXT_CHARS", 50)
    app.text_area(key="test_text").set_value("hello world " * 20).run()
    assert any("The test text has 240 characters, above this server's limit of 50" in error for error in errors(app))
    assert app.text_area(key="test_text").value == ("hello world " * 20)[:50]
    assert int(next(item.value for item in app.metric if item.label == "tokens")) <= 50  # the full text gives ~120
    app.text_area(key="test_text").set_value("hello again").run()
    assert errors(app) == []
