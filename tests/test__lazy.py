"""tokviz._lazy: names exported lazily import their module on first use, as HF's root does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tokviz._lazy import lazy_exports


def test_a_lazy_name_resolves_and_an_unknown_one_raises() -> None:
    getattr_, dir_ = lazy_exports("fake_package", {"dumps": "json"})
    import json

    assert getattr_("dumps") is json.dumps and "dumps" in dir_()
    with pytest.raises(AttributeError):
        getattr_("nothing")


def test_importing_tokviz_imports_no_trainer() -> None:
    code = "import sys, tokviz\nprint('tokviz.models.bpe.trainer' in sys.modules, 'tokviz.trainers' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    assert result.stdout.split() == ["False", "False"]
