"""The core's layout, read from its source: the encoding core never imports viz or ui, its only
import circle is tokenizer <-> serialization (HF's API implies it), and tokenizer.py stays small."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tokviz"
#: The encoding and training core (the layers under tokenizer and serialization, and those two).
CORE = (
    "normalized", "patterns", "normalizers", "pre_tokenizers", "decoders", "processors", "added_vocabulary", "encoding",
    "history", "word_counts", "trace", "processes", "forking", "tokenizer", "serialization", "byte_level", "_views",
    "engine", "models",
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("tokviz", *path.relative_to(PACKAGE).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The tokviz modules ``path`` imports, anywhere in it (functions included, TYPE_CHECKING blocks not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If) and getattr(block.test, "id", None) == "TYPE_CHECKING"
               for node in ast.walk(block)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            names = [name for name in names if name in modules] or [node.module]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("tokviz"):
                found.add(name)
    return found


def _in_core(name: str) -> bool:
    return any(name == f"tokviz.{part}" or name.startswith(f"tokviz.{part}.") for part in CORE)


def test_the_core_never_imports_viz_ui_or_streamlit() -> None:
    modules = _modules()
    for name, path in modules.items():
        if _in_core(name):
            upward = {target for target in _imports(path, modules) if target.startswith(("tokviz.viz", "tokviz.ui"))}
            assert not upward, f"{name} imports {sorted(upward)}"
            assert "import streamlit" not in path.read_text(encoding="utf-8"), name


def test_the_only_import_circle_in_the_core_is_tokenizer_and_serialization() -> None:
    modules = _modules()
    graph = {name: {t for t in _imports(path, modules) if _in_core(t) and t != name} for name, path in modules.items() if _in_core(name)}

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
        return False

    circles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a)})
    assert circles == [("tokviz.serialization", "tokviz.tokenizer")], circles


def test_tokenizer_py_stays_under_a_thousand_lines() -> None:
    assert len((PACKAGE / "tokenizer.py").read_text(encoding="utf-8").splitlines()) < 1000
