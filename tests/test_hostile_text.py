"""Hostile text (issue 7): user strings are shown as text, never as markup.

Corpus lines, test text, special tokens and tokenizer.json vocabulary entries carry HTML,
script tags, attribute-breaking quotes, bidi controls and zero-width characters. Every HTML
string tokviz builds (found by inspection: ``tokviz.viz.spans.render_token_spans`` and its
``_label_html`` / ``_gap_html``, ``tokviz.viz.pipeline.normalization_html``, and the hover
texts of every ``tokviz.viz.charts`` figure, which Plotly renders as a subset of HTML) is
scanned: the only tags in it are the builder's own, and the hostile strings come out as text.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz import Tokenizer
from tokviz.metrics import unknown_token_id
from tokviz.pipeline_config import PipelineConfig, build_tokenizer, build_trainer, component, configured_model, tokenizer_with_model
from tokviz.presets import PRESETS
from tokviz.viz import charts, pipeline, spans

HOSTILE = [
    "<script>alert('x')</script>",
    '<img src=x onerror="alert(1)">',
    '" onmouseover="alert(2)" x="',
    "' onclick='alert(3)' '",
    "</span></div><b>bold</b>",
    "</style><style>body{display:none}</style>",
    "&lt;escaped&gt; &amp; <!-- comment -->",
    "\u202egnp.exe\u202c and \u2066isolate\u2069 \u200fRTL\u200e",
    "zero\u200bwidth\u200djoiner\ufeffbom",
]
CORPUS = [f"{line} words around {index}" for index, line in enumerate(HOSTILE)] * 4
TEST_TEXT = " ".join(HOSTILE)
HOSTILE_SPECIALS = ("<script>", '"><b>', "[UNK]")

#: The tags each builder writes itself; anything else in its output came from input.
SPAN_TAGS = {"style", "div", "span", "wbr", "br"}
PLOTLY_TAG = re.compile(r"<(?!/?(?:br|b|i|extra)>)")  # the pseudo-HTML tags tokviz's hover templates use


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def assert_only_own_markup(fragment: str, allowed_tags: set[str] = SPAN_TAGS, *, pinned: bool = False) -> str:
    """Parse ``fragment``: only the builder's tags and attributes, no comment; returns its text (titles included).

    ``pinned``: the click-to-pin markup is allowed too (``<details name="tvz-…">``, ``<summary>``, a second style block).
    """
    if pinned:
        allowed_tags = allowed_tags | {"details", "summary"}
    parser = _Collector()
    parser.feed(fragment)
    parser.close()
    assert not parser.comments, parser.comments
    shown = list(parser.text)
    for tag, attributes in parser.tags:
        assert tag in allowed_tags, (tag, fragment[:300])
        for name, value in attributes:
            assert name in ({"class", "style", "title", "name"} if pinned else {"class", "style", "title"}), (tag, name, value)
            if name == "title":
                shown.append(value or "")
            if name == "style":
                assert re.fullmatch(r"[a-z\-]+: ?#?[\w.()%, ]+;?", value or ""), value  # colors only, never user text
            if name == "name":
                assert tag == "details" and re.fullmatch(r"tvz-[0-9a-f]{12}", value or ""), value
    # Builder styles are constants; outside them, every '<' left is an escaped one.
    body = re.sub(r"<style>.*?</style>", "", fragment, count=2 if pinned else 1, flags=re.S)
    own = r"</?(?:div|span|wbr|br|details|summary)\b" if pinned else r"</?(?:div|span|wbr|br)\b"
    for position in [match.start() for match in re.finditer("<", body)]:
        assert re.match(own, body[position:]), body[position : position + 60]
    return "".join(shown)


def trained_tokenizer(name: str, config: PipelineConfig | None = None, vocab_size: int = 400):
    config = config or PRESETS[name].build()
    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(CORPUS, build_trainer(config, vocab_size))
    history = trained_tokenizer.training_history
    return tokenizer_with_model(config, configured_model(config, history.model)), history, config


CONFIGS = {name: preset.build() for name, preset in PRESETS.items()}
CONFIGS["hostile_specials"] = PipelineConfig(
    pre_tokenizers=(component("WhitespaceSplit"),), model="BPE", special_tokens=HOSTILE_SPECIALS, unk_token="[UNK]",
)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("show_ids", [False, True])
def test_token_spans_show_hostile_text_as_text(name: str, show_ids: bool) -> None:
    tokenizer, _, config = trained_tokenizer(name, CONFIGS[name])
    text = TEST_TEXT + " <script> " + '"><b>'  # the hostile special tokens, matched as added tokens
    encoding = tokenizer.encode(text)
    byte_level = any(spec.type == "ByteLevel" for spec in config.pre_tokenizers)
    rendered = spans.render_token_spans(text, spans.spans_from_encoding(encoding, unknown_token_id(tokenizer)), show_ids=show_ids, byte_level=byte_level)
    shown = assert_only_own_markup(rendered.html)
    if not show_ids and name in ("gpt2", "char_bpe", "hostile_specials"):  # no normalizer: the input itself is on show
        assert "<script>" in shown and "onerror" in shown and "</style>" in shown


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pinned_token_cards_show_hostile_text_as_text(name: str) -> None:
    tokenizer, history, config = trained_tokenizer(name, CONFIGS[name])
    text = TEST_TEXT + " <script> " + '"><b>'
    encoding = tokenizer.encode(text)
    byte_level = any(spec.type == "ByteLevel" for spec in config.pre_tokenizers)
    rendered = spans.render_token_spans(
        text, spans.spans_from_encoding(encoding, unknown_token_id(tokenizer)), byte_level=byte_level, pinned=True,
        origins=spans.token_origins(history), presentation=True,
    )
    shown = assert_only_own_markup(rendered.html, pinned=True)
    assert rendered.html.count("<details ") == len(encoding.tokens) and "title=" not in rendered.html
    labels = "".join(html.unescape(re.sub(r"<[^>]+>", "", label)) for label in re.findall(r"<summary[^>]*>(.*?)</summary>", rendered.html))
    if name in ("gpt2", "char_bpe", "hostile_specials"):  # no normalizer: the input itself is on show, as text
        assert "<script>" in labels and "onerror" in labels and "</style>" in labels
    if name != "t5":
        assert "merge #" in shown  # the cards say which merge made a token, its parts escaped like the rest


@pytest.mark.parametrize(
    "unsafe",
    ['<div class="tokviz-spans"><script>x</script></div>', '<span title="a" onclick="x">t</span>',
     '<span class="tok">a <b>bold</b></span>', "<div><!-- x --></div>", '<span style="x" >&lt;</span>'],
)
def test_the_scanner_catches_markup_from_input(unsafe: str) -> None:
    with pytest.raises(AssertionError):
        assert_only_own_markup(unsafe)
    with pytest.raises(AssertionError):
        assert_only_own_markup(unsafe, pinned=True)


def test_span_helpers_escape_labels_and_gaps() -> None:
    for value in HOSTILE:
        assert_only_own_markup(spans._label_html(value))
        assert_only_own_markup(spans._gap_html(value))
    assert "<script>" not in spans._label_html("##<script>")


def test_gaps_between_tokens_are_escaped() -> None:
    """Text no token covers (removed by the pre-tokenizer) is drawn as a gap: escaped too."""
    text = "a <b>x</b> c"
    rendered = spans.render_token_spans(text, [spans.TokenSpan("a", 0, 0, 1), spans.TokenSpan("c", 1, 11, 12)])
    assert "&lt;b&gt;x&lt;/b&gt;" in rendered.html
    assert_only_own_markup(rendered.html)


def test_normalization_view_shows_hostile_text_as_text() -> None:
    tokenizer, _, _ = trained_tokenizer("t5")
    for text in [TEST_TEXT, *HOSTILE]:
        fragment = pipeline.normalization_html(tokenizer.trace(text).sequences[0])
        shown = assert_only_own_markup(fragment)
        assert "<" not in text or "<" in shown  # the angle brackets are on show, as text


def test_tokenizer_json_with_hostile_vocab_entries() -> None:
    """An uploaded tokenizer.json whose vocab holds markup: loaded, encoded and drawn as text."""
    tokenizer, _, config = trained_tokenizer("char_bpe")
    data = tokenizer.to_str()
    hostile_vocab = {token: 10_000 + index for index, token in enumerate(HOSTILE)}
    import json

    document = json.loads(data)
    document["model"]["vocab"].update(hostile_vocab)
    document["added_tokens"].append({"id": 20_000, "content": "<img src=x onerror=alert(9)>", "single_word": False,
                                     "lstrip": False, "rstrip": False, "normalized": False, "special": True})
    loaded = Tokenizer.from_str(json.dumps(document))
    text = TEST_TEXT + " <img src=x onerror=alert(9)>"
    encoding = loaded.encode(text)
    assert "<img src=x onerror=alert(9)>" in encoding.tokens
    shown = assert_only_own_markup(spans.render_token_spans(text, spans.spans_from_encoding(encoding, unknown_token_id(loaded))).html)
    assert "<img src=x onerror=alert(9)>" in shown


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "tolist"):
        yield from _strings(value.tolist())


def assert_plotly_safe(figure) -> None:
    for text in _strings(figure.to_plotly_json()):
        match = PLOTLY_TAG.search(text)
        assert match is None, text[max(match.start() - 40, 0) : match.start() + 40]


@pytest.mark.parametrize("name", ["gpt2", "bert", "char_bpe", "hostile_specials"])
def test_merge_charts_escape_hostile_tokens(name: str) -> None:
    tokenizer, history, _ = trained_tokenizer(name, CONFIGS[name])
    if name != "bert":  # BERT splits punctuation off, so no merge holds '<'
        assert any("<" in step.token for step in history.merges)  # the hostile text reached the merges
    assert_plotly_safe(charts.merge_scores_figure(history.merges))
    assert_plotly_safe(charts.vocab_growth_figure(history.merges, history.min_vocab_size))
    assert_plotly_safe(charts.token_length_figure(tokenizer.get_vocab(), history.special_tokens))


def test_unigram_charts_escape_hostile_pieces() -> None:
    tokenizer, history, _ = trained_tokenizer("t5")
    assert any("<" in piece for piece, _ in history.final_pieces)
    assert_plotly_safe(charts.em_objective_figure(history.em_steps))
    assert_plotly_safe(charts.unigram_vocab_figure(history.prune_rounds, history.max_vocab_size))
    assert_plotly_safe(charts.log_prob_figure(history.final_pieces, history.special_tokens))
    for word in ["▁<script>alert('x')</script>", '▁"><b>', "▁\u202egnp"]:
        assert_plotly_safe(charts.lattice_figure(tokenizer.model.lattice(word)))


# ---------------------------------------------------------------------------------------
# The Train page: every st.html block parsed, captions and notices escaped


def _page_html_blocks(app: AppTest) -> list[str]:
    return [block.proto.body for block in app.html]


@pytest.mark.parametrize("preset", ["gpt2", "custom"])
def test_train_page_shows_hostile_corpus_test_text_and_special_tokens_as_text(preset: str) -> None:
    app = open_page("pages/train.py")
    app.text_area(key="corpus_text").set_value("\n".join(CORPUS)).run()
    if preset == "custom":
        app.selectbox(key="preset").set_value("custom").run()
        app.selectbox(key="cfg_model").set_value("BPE").run()
        app.text_input(key="cfg_special_tokens").set_value(" ".join(HOSTILE_SPECIALS))
        app.text_input(key="cfg_unk_token").set_value("[UNK]").run()
    app.text_area(key="test_text").set_value(TEST_TEXT + " <script> \"><b>").run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert not app.error, [error.value for error in app.error]
    blocks = _page_html_blocks(app)
    assert len(blocks) >= 2  # the pipeline preview and the test text's spans
    # The test text's spans pin a card on click (<details>/<summary>); the preview draws plain spans.
    shown = "".join(assert_only_own_markup(block, pinned="<details" in block) for block in blocks)
    assert "<script>" in shown
    # Markdown elements (captions, notices) carry user text only escaped.
    for element in [*app.caption, *app.markdown, *app.warning, *app.info]:
        assert "<script" not in element.value and "<img" not in element.value, element.value


# ---------------------------------------------------------------------------------------
# No unsafe deserialization; uploads stay in memory (grep over the sources)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "tokviz").rglob("*.py")])
UI_SOURCES = [ROOT / "app.py", *sorted((ROOT / "tokviz" / "ui").glob("*.py")), *sorted((ROOT / "pages").glob("*.py"))]
UNSAFE_LOADS = re.compile(
    r"\bimport (?:pickle|marshal|shelve|dill|cloudpickle)\b|\bfrom (?:pickle|marshal|shelve|dill|cloudpickle) import"
    r"|\bpickle\.loads?\(|read_pickle\(|allow_pickle\s*=\s*True|torch\.load\(|joblib\.load\(|yaml\.load\(|\beval\(|\bexec\("
)
#: Calls that touch the disk: the core offers them (HF's save / from_file API), the UI must not call them.
DISK_IO = re.compile(
    r"\bopen\(|\.write_(?:bytes|text)\(|\.read_(?:bytes|text)\(|\btempfile\b|\bshutil\b|os\.(?:makedirs|mkdir|rename|replace)\("
    r"|\.save\(|from_file\(|read_file\(|\.to_(?:csv|json|parquet)\(\s*['\"]"
)


def _code_lines(path: Path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0]
        if code.strip():
            yield number, code


def test_nothing_unpickles_or_evaluates_user_input() -> None:
    assert len(SOURCES) > 30
    found = [f"{path.relative_to(ROOT)}:{number}: {code.strip()}" for path in SOURCES for number, code in _code_lines(path)
             if UNSAFE_LOADS.search(code) and path.relative_to(ROOT).as_posix() not in TRUSTED_PICKLE]
    assert found == []


#: Modules allowed to unpickle, and why: never bytes a user sent, only what tokviz's own process wrote.
TRUSTED_PICKLE = {
    # An upload is read in a child process this module starts; the result comes back pickled on the pipe it opened
    # (multiprocessing pickles on that pipe anyway). The user's bytes are parsed in the child, never unpickled.
    "tokviz/bounded.py",
}


def test_uploads_are_read_in_memory_and_never_written_to_disk() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}: {code.strip()}" for path in UI_SOURCES for number, code in _code_lines(path) if DISK_IO.search(code)]
    assert found == []
    # Streamlit hands uploads over as in-memory buffers; the app reads them with getvalue() only.
    ui_source = "".join(path.read_text(encoding="utf-8") for path in UI_SOURCES)
    assert ui_source.count("uploaded.getvalue()") >= 2  # the corpus upload and the tokenizer files


@pytest.mark.parametrize("line", ["import pickle", "data = pickle.loads(blob)", "frame = pd.read_pickle(upload)", "eval(text)"])
def test_the_unsafe_load_scan_catches(line: str) -> None:
    assert UNSAFE_LOADS.search(line)


@pytest.mark.parametrize("line", ["open('x.txt', 'wb')", "Path(p).write_bytes(data)", "tokenizer.save('t.json')", "tempfile.mkstemp()"])
def test_the_disk_scan_catches(line: str) -> None:
    assert DISK_IO.search(line)
