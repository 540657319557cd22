"""The hostile-file corpus (``tests/hostile_files.py``) through the library and through the app.

Every case goes through ``tokviz.load`` (a script's way in; ``tokviz.inspect.open_training`` for a
history.json) and through the uploaders of Inspect and Compare (AppTest). A refused file gives one
sentence, naming the file and holding the case's expected words, and the page shows that very
sentence with ``st.error`` -- never an exception box; a file that loads encodes its text in the library
and draws Inspect without an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page

import tokviz
import tokviz.inspect
from tokviz.errors import TokvizError
from tokviz.ui.shell import md_escape
from tokviz.ui.tokenizer_files import SUFFIXES
from tests import hostile_files

CASES = hostile_files.cases()
#: The uploaders take these endings (tokviz.ui.tokenizer_files.SUFFIXES); the browser refuses others first.
UPLOADABLE = tuple(f".{suffix}" for suffix in SUFFIXES)
TOKENIZER_CASES = [case for case in CASES if case.kind == "tokenizer" and case.name.endswith(UPLOADABLE)]
TRAINING_CASES = [case for case in CASES if case.kind == "training"]


def library_outcome(case, folder: Path) -> str | None:
    """The sentence the library gives for ``case`` (None when it loads and encodes its text)."""
    for name, data in case.files:
        (folder / name).write_bytes(data)
    try:
        if case.kind == "training":
            tokenizer = tokviz.inspect.open_training(case.files[0][1], case.name).tokenizer_at(None)
        else:
            tokenizer = tokviz.load(folder / case.name)
        tokenizer.encode(case.text or "Hello world!")
    except TokvizError as error:
        return str(error)
    return None


@pytest.fixture(scope="module")
def sentences(tmp_path_factory) -> dict[str, str | None]:
    folder = tmp_path_factory.mktemp("hostile")
    outcomes = {}
    for case in CASES:
        where = folder / case.case
        where.mkdir()
        outcomes[case.case] = library_outcome(case, where)
    return outcomes


@pytest.mark.parametrize("case", CASES, ids=[case.case for case in CASES])
def test_the_library_gives_a_sentence_naming_the_file_or_loads(case, sentences) -> None:
    sentence = sentences[case.case]
    if case.expect is None:
        assert sentence is None, sentence
    else:
        assert sentence is not None, f"{case.case} loaded"
        assert case.expect in sentence, sentence
        if case.text is None:  # (a refusal at the encode is about the text: a pattern's timeout names the pattern)
            assert sentence.startswith(case.name), sentence


def test_the_corpus_covers_the_issue_and_keeps_what_worked() -> None:
    names = {case.case for case in CASES}
    for needed in ("int-5000-digits-in-vocab", "lone-surrogate-in-unigram-piece", "id-10e30-in-vocab", "added-4999-overlapping",
                   "normalizer-sequence-450-deep", "regex-times-out", "replace-bomb-3x1000", "history-replace-bomb",
                   "padding-fixed-1e9", "prepend-20-million", "history-merges-repeated-150", "merges-600001"):
        assert needed in names
    assert sum(case.expect is None for case in CASES) >= 10 and sum(case.expect is not None for case in CASES) >= 50


# ---------------------------------------------------------------------- the pages
def upload(app: AppTest, key: str, files) -> AppTest:
    app.file_uploader(key=key).set_value([(name, data, "application/octet-stream") for name, data in files]).run()
    return app


def assert_no_exception(app: AppTest) -> None:
    assert not app.exception, [str(error.value)[:300] for error in app.exception]


def test_inspect_shows_each_refusal_as_the_librarys_sentence(sentences) -> None:
    # All refused tokenizer files in one upload: each is named with its own sentence, nothing raises.
    refused = [case for case in TOKENIZER_CASES if case.expect is not None and case.text is None]
    app = open_page("pages/inspect.py")
    app.selectbox(key="inspect_tokenizer").set_value("upload").run()
    upload(app, "inspect_tokenizer_file", [file for case in refused for file in case.files])
    assert_no_exception(app)
    shown = [error.value for error in app.error]
    for case in refused:
        assert md_escape(sentences[case.case]) in shown, (case.case, sentences[case.case], shown[:3])


def test_compare_shows_each_refusal_as_the_librarys_sentence(sentences) -> None:
    refused = [case for case in TOKENIZER_CASES if case.expect is not None and case.text is None]
    app = open_page("pages/compare.py")
    upload(app, "compare_files", [file for case in refused for file in case.files])
    assert_no_exception(app)
    shown = [error.value for error in app.error]
    for case in refused:
        assert md_escape(sentences[case.case]) in shown, (case.case, sentences[case.case], shown[:3])


@pytest.mark.parametrize("case", [case for case in TOKENIZER_CASES if case.expect is None or case.text is not None],
                         ids=lambda case: case.case)
def test_inspect_draws_each_file_that_loads(case, sentences) -> None:
    app = open_page("pages/inspect.py")
    app.selectbox(key="inspect_tokenizer").set_value("upload").run()
    upload(app, "inspect_tokenizer_file", case.files)
    if case.text is not None:
        app.text_area(key="inspect_text").set_value(case.text).run()
    assert_no_exception(app)
    shown = [error.value for error in app.error]
    if case.expect is None:
        assert not shown, shown
        assert any(header.value == "Vocabulary" for header in app.header)
    else:  # loads, and its text is refused at the encode: the sentence, the rest of the page still drawn
        assert shown == [md_escape(sentences[case.case])], shown
        assert any(header.value == "Vocabulary" for header in app.header)


def test_compare_takes_the_files_that_load() -> None:
    loading = [case for case in TOKENIZER_CASES if case.expect is None][:5]
    app = open_page("pages/compare.py")
    upload(app, "compare_files", [file for case in loading for file in case.files])
    assert_no_exception(app)
    assert not app.error, [error.value for error in app.error]
    page = " ".join(markdown.value for markdown in app.markdown)
    for case in loading:
        label = case.name if len(case.files) == 1 else f"{case.files[0][0]} + {case.files[1][0]}"
        assert md_escape(label) in page, label


@pytest.mark.parametrize("case", TRAINING_CASES, ids=lambda case: case.case)
def test_inspect_opens_a_training_or_says_why(case, sentences) -> None:
    app = open_page("pages/inspect.py")
    app.radio(key="inspect_source").set_value("a training").run()
    upload_one = app.file_uploader(key="inspect_training_file")
    upload_one.set_value((case.name, case.files[0][1], "application/json")).run()
    assert_no_exception(app)
    shown = [error.value for error in app.error]
    if case.expect is None:
        assert not shown, shown
    else:
        assert shown == [md_escape(sentences[case.case])], shown


def test_compare_names_a_pattern_that_times_out_and_draws_the_others(sentences) -> None:
    case = next(case for case in CASES if case.case == "regex-times-out")
    app = open_page("pages/compare.py")
    upload(app, "compare_files", case.files)
    app.text_area(key="compare_text").set_value(case.text).run()
    assert_no_exception(app)
    assert [error.value for error in app.error] == [f"{md_escape(case.name)}: {md_escape(sentences[case.case])}"]
    assert len([block for block in app.html if "tokviz-spans" in block.proto.body]) >= 2  # the trained configurations still drawn


def test_compare_measures_the_others_when_a_pattern_times_out_on_the_evaluation_text(sentences) -> None:
    case = next(case for case in CASES if case.case == "regex-times-out")
    app = open_page("pages/compare.py")
    upload(app, "compare_files", case.files)
    app.radio(key="compare_eval_source").set_value("paste").run()
    app.text_area(key="compare_eval_text").set_value(case.text).run()
    assert_no_exception(app)
    assert f"{md_escape(case.name)}: {md_escape(sentences[case.case])}" in [error.value for error in app.error]
    measured = list(app.table[0].value["configuration"])  # the metrics table: the three trained configurations, not the file
    assert len(measured) == 3 and not any(case.name in row for row in measured), measured
