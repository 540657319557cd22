"""Notebook views: _repr_html_ of Encoding, TrainingHistory and the comparison, and EncodingVisualizer.

Every view is parsed with html.parser: the only tags are the view's own, and every user string
(text, tokens, special tokens, labels, tokenizer names) comes back as text, never as a tag or attribute.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import types
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tokviz import Encoding, Tokenizer, models, pre_tokenizers, processors
from tokviz.compare import evaluate
from tokviz.trainers import BpeTrainer
from tokviz.viz import EncodingVisualizer
from tokviz.viz.notebook import Annotation

HOSTILE = "<img/src=x/onerror=alert(1)>"  # no space: one word for WhitespaceSplit
SCRIPT = "<script>alert('x')</script>"
ALLOWED_TAGS = {
    "style", "div", "span", "p", "strong", "em", "table", "thead", "tbody", "tr", "th", "td",
    "br", "wbr", "ul", "li", "details", "summary",
}


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(fragment: str) -> _Collector:
    collector = _Collector()
    collector.feed(fragment)
    collector.close()
    assert set(collector.tags) <= ALLOWED_TAGS, set(collector.tags) - ALLOWED_TAGS
    assert not any(name.startswith("on") for name, _ in collector.attributes)
    return collector


def hostile_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, HOSTILE: 1, "hi": 2, SCRIPT: 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["<b>cls</b>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<b>cls</b> $A", pair="<b>cls</b> $A $B:1", special_tokens=[("<b>cls</b>", 4)]
    )
    return tok


def test_encoding_repr_html_escapes_tokens():
    encoding = hostile_tokenizer().encode(f"hi {HOSTILE} {SCRIPT} ???")
    parsed = parse(encoding._repr_html_())
    text = "".join(parsed.text)
    assert HOSTILE in text and SCRIPT in text and "<b>cls</b>" in text
    assert "script" not in parsed.tags and "img" not in parsed.tags and "b" not in parsed.tags
    assert parsed.tags.count("tr") == len(encoding) + 1  # one row per token under the header


def test_history_repr_html_escapes_special_tokens():
    history = BpeTrainer(vocab_size=30, special_tokens=[HOSTILE], show_progress=False).train_from_word_counts(
        {"hug": 10, "pug": 5, "<pun>": 12}
    )
    parsed = parse(history._repr_html_())
    text = "".join(parsed.text)
    assert HOSTILE in text and "<pun>" not in parsed.tags
    assert "BPE" in text or "bpe" in text.lower()


def test_comparison_repr_html_marks_best_and_escapes_names():
    tok = hostile_tokenizer()
    frame = evaluate({SCRIPT: tok, "plain": tok}, ["hi there"], parallel=False)
    out = frame._repr_html_()
    parsed = parse(out)
    text = "".join(parsed.text)
    assert SCRIPT in text
    assert "Rényi efficiency (α = 2.5)" in text and "Zouhar et al., 2023" in text
    assert "★" in text


def test_visualizer_escapes_every_label():
    tok = hostile_tokenizer()
    vis = EncodingVisualizer(tok, default_to_notebook=False)
    text = f"hi {SCRIPT} and more"
    out = vis(text, annotations=[Annotation(0, 2, HOSTILE), Annotation(3, 3 + len(SCRIPT), "<i>label</i>")])
    parsed = parse(out)
    joined = "".join(parsed.text)
    assert HOSTILE in joined and "<i>label</i>" in joined and "<b>cls</b>" in joined and SCRIPT in joined
    # The visible text (tokens, gaps, labels and special tokens aside) reads as the input.
    assert "hi" in joined and "and" in joined and "more" in joined


def test_visualizer_annotation_converter_and_signature():
    tok = hostile_tokenizer()
    vis = EncodingVisualizer(tok, default_to_notebook=False, annotation_converter=lambda d: Annotation(**d))
    out = vis("hi hi", annotations=[{"start": 3, "end": 5, "label": "second"}])
    assert out.count('class="annotation"') == 1 and ">second</span>" in out
    hf_tools = pytest.importorskip("tokenizers.tools")
    ours = inspect.signature(EncodingVisualizer.__init__).parameters
    theirs = inspect.signature(hf_tools.EncodingVisualizer.__init__).parameters
    assert list(ours) == list(theirs)
    assert list(inspect.signature(EncodingVisualizer.__call__).parameters) == list(
        inspect.signature(hf_tools.EncodingVisualizer.__call__).parameters
    )


def test_visualizer_displays_in_a_notebook(monkeypatch):
    shown = []
    fake_display = types.ModuleType("IPython.display")
    fake_display.HTML = lambda data: ("HTML", data)
    fake_display.display = shown.append
    fake = types.ModuleType("IPython")
    fake.display = fake_display
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setitem(sys.modules, "IPython.display", fake_display)
    vis = EncodingVisualizer(hostile_tokenizer())
    assert vis("hi") is None
    assert shown and shown[0][0] == "HTML" and "tokviz-vis" in shown[0][1]
    assert isinstance(vis("hi", default_to_notebook=False), str)


def test_visualizer_without_ipython_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    vis = EncodingVisualizer(hostile_tokenizer())  # constructing needs no IPython
    with pytest.raises(ImportError, match="default_to_notebook=False"):
        vis("hi")


def test_no_ipython_import_when_returning_html():
    code = (
        "import sys, tokviz\n"
        "from tokviz import Tokenizer, models\n"
        "from tokviz.viz import EncodingVisualizer\n"
        "tok = Tokenizer(models.WordLevel({'a': 0}, unk_token='a'))\n"
        "EncodingVisualizer(tok, default_to_notebook=False)('a')\n"
        "tok.encode('a')._repr_html_()\n"
        "print('IPython' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root, env=env)
    assert result.stdout.strip() == "False"


def test_encoding_words_warns_as_hf():
    encoding = Encoding.from_tokens([(1, "a", (0, 1))], word_ids=[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert encoding.words == [0]
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        "Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead."
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert encoding.word_ids == [0]
