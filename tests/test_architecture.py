"""The package's layout, read from its source: the encoding core never imports viz or ui; the
whole package's only import circle is tokenizer <-> serialization (HF's API implies it); the
layers README's architecture section draws point down, but for at most four imports; and
tokenizer.py stays small."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tokviz"
#: The encoding and training core (the layers under tokenizer and serialization, and those two).
CORE = (
    "normalized", "patterns", "normalizers", "pre_tokenizers", "decoders", "processors", "added_vocabulary", "encoding",
    "history", "word_counts", "trace", "processes", "forking", "tokenizer", "serialization", "byte_level", "_views",
    "engine", "models",
)


#: The layers, bottom up, as README's architecture section draws them: a module imports from its own
#: layer and the ones below. A name is a module or a package (its modules, unless named apart).
LAYERS = (
    "errors limits _mutation _component _lazy _views byte_level json_floats precompiled_charsmap models.base",
    "normalized patterns",
    "normalizers pre_tokenizers decoders added_vocabulary",
    "history word_counts",
    "models",
    "encoding processors",
    "engine",
    "trace processes forking",
    "tokenizer serialization tokenizer_json",
    "loaders bounded tekken tiktoken_format implementations trainers sentencepiece",
    "pipeline_config presets training metrics literature_metrics compare corpus corpus_stream samples lessons audit catalog hub",
    "viz",
    "inspect export workspace links cache_store jobs history_io markdown cli __main__",
    "ui",
)
#: The package itself (``from tokviz import Tokenizer``) re-exports every layer: it sits above them all.
PACKAGE_LAYER = len(LAYERS)


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
            # ``from tokviz import models, Tokenizer`` imports the module tokviz.models and,
            # for Tokenizer, the package tokviz itself
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                     for alias in node.names]
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


def _layer(name: str) -> int | None:
    """The layer of module ``name`` (the longest entry of LAYERS naming it or its package)."""
    relative = name.removeprefix("tokviz").lstrip(".")
    if not relative:
        return PACKAGE_LAYER
    best: tuple[int, int] | None = None
    for index, row in enumerate(LAYERS):
        for part in row.split():
            if (relative == part or relative.startswith(part + ".")) and (best is None or len(part) > best[1]):
                best = (index, len(part))
    return None if best is None else best[0]


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Module -> the tokviz modules it imports (read once per test run; not to be changed)."""
    modules = _modules()
    return {name: {target for target in _imports(path, modules) if target != name} for name, path in modules.items()}


def test_every_module_has_a_layer() -> None:
    assert [name for name in _modules() if _layer(name) is None] == []


#: The imports allowed to run back up a layer (the issue allows at most four; README names each one). None today.
UPWARD_IMPORTS: set[tuple[str, str]] = set()


def test_at_most_four_imports_run_back_up_a_layer() -> None:
    upward = sorted((name, target) for name, targets in _graph().items() for target in targets if _layer(target) > _layer(name))
    assert len(UPWARD_IMPORTS) <= 4
    assert set(upward) <= UPWARD_IMPORTS, f"imports running back up a layer (fix them, or name them in README and here): {upward}"


def _circles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every pair of modules (a, b) where a imports b and b leads back to a."""

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

    return sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a)})


def test_the_only_import_circle_in_the_core_is_tokenizer_and_serialization() -> None:
    graph = {name: {target for target in targets if _in_core(target)} for name, targets in _graph().items() if _in_core(name)}
    assert _circles(graph) == [("tokviz.serialization", "tokviz.tokenizer")]


def test_the_only_import_circle_in_the_package_is_tokenizer_and_serialization() -> None:
    assert _circles(_graph()) == [("tokviz.serialization", "tokviz.tokenizer")]


def _readme_architecture() -> str:
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Architecture")
    return readme[start : readme.index("\n## ", start + 1)]


def test_readme_names_every_module_and_draws_these_layers() -> None:
    import re

    section = _readme_architecture()
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", section))
    assert [name for name in _modules() if name.rpartition(".")[2] not in words and name != "tokviz"] == []
    drawing = section[section.index("Layers, bottom up") :].split("```")[1]
    drawing = re.sub(r"\([^)]*\)", "", drawing.replace("<->", ","))  # (comments) out; tokenizer <-> serialization is one layer
    drawn = [{word.rstrip("/").replace("/", ".") for word in re.findall(r"[A-Za-z_][A-Za-z0-9_/.]*", row)} for row in drawing.split("<-")]
    # every layer of LAYERS is one row of the drawing, in the same order, bottom up (pages and app.py above all)
    assert [set(layer.split()) for layer in LAYERS] == [row for row in drawn if row not in ({"pages", "app.py"},)]


def test_tokenizer_py_stays_under_a_thousand_lines() -> None:
    assert len((PACKAGE / "tokenizer.py").read_text(encoding="utf-8").splitlines()) < 1000
