"""tokviz._views: notebook HTML by registration (the core never imports viz)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tokviz._views import html_view, register_html_view


def test_a_registered_view_draws_instances_and_subclasses() -> None:
    class Record:
        pass

    class Special(Record):
        pass

    assert html_view(Record()) is None
    register_html_view(Record, lambda record: f"<i>{type(record).__name__}</i>")
    assert (html_view(Record()), html_view(Special())) == ("<i>Record</i>", "<i>Special</i>")


def test_the_core_encodes_without_importing_viz_and_viz_registers_its_views() -> None:
    code = (
        "import sys\n"
        "from tokviz import Tokenizer, models\n"
        "tok = Tokenizer(models.WordLevel({'a': 0}, unk_token='a'))\n"
        "encoding = tok.encode('a')\n"
        "print(any(name.startswith('tokviz.viz') for name in sys.modules), encoding._repr_html_() is None)\n"
        "import tokviz.viz.notebook\n"
        "print('&' in encoding._repr_html_() or '<' in encoding._repr_html_())\n"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert result.stdout.split() == ["False", "True", "True"]
