"""The layers stay layered (L5): every module under src/kenning, parsed with ``ast``, imports only from its own layer
or a lower one (``kenning/layers.py``), lazy imports inside functions included. A failure names the file, the line,
the import and both layers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kenning.layers import EXCEPTIONS, LAYERS, layer_of

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, at any depth (functions, classes, try blocks).
    ``from a import b`` counts as importing ``a.b`` when ``a.b`` is a module, else ``a``."""
    mod = module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((node.lineno, sub if _is_module(sub) else target))
    return out


def _is_module(dotted: str) -> bool:
    p = SRC.joinpath(*dotted.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def violations(files: list[Path]) -> list[str]:
    found = []
    for path in files:
        mod = module_name(path)
        here = layer_of(mod)
        assert here is not None, f"{path}: {mod} is in no layer of kenning/layers.py — add its package there"
        for line, target in imports_of(path):
            there = layer_of(target)
            if there is None or there[0] <= here[0] or (mod, target) in EXCEPTIONS:
                continue
            found.append(f"src/{path.relative_to(SRC)}:{line}: {mod} ({here[1]}) imports {target} ({there[1]})")
    return found


def test_no_module_imports_a_higher_layer():
    files = sorted((SRC / "kenning").rglob("*.py"))
    assert len(files) > 100
    bad = violations(files)
    assert not bad, "imports of a higher layer (move the code down, or inject it):\n" + "\n".join(bad)


def test_every_exception_is_still_needed():
    """A named exception that no import uses any more is stale: drop it with its decision."""
    used = set()
    for path in (SRC / "kenning").rglob("*.py"):
        for _line, target in imports_of(path):
            used.add((module_name(path), target))
    assert set(EXCEPTIONS) <= used, set(EXCEPTIONS) - used


def test_the_checker_finds_a_lazy_upward_import(tmp_path, monkeypatch):
    """The check itself: a knowledge module that imports retrieve inside a function is reported with file and line."""
    pkg = tmp_path / "kenning" / "knowledge"
    pkg.mkdir(parents=True)
    (tmp_path / "kenning" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("from kenning.store import knowledge\n\n\ndef f():\n"
                                "    from kenning.retrieve.brief import knowledge_brief\n    return knowledge_brief\n")
    monkeypatch.setattr(__import__(__name__), "SRC", tmp_path)
    bad = violations([pkg / "bad.py"])
    assert bad == ["src/kenning/knowledge/bad.py:5: kenning.knowledge.bad (knowledge) imports kenning.retrieve.brief "
                   "(retrieve)"]


@pytest.mark.parametrize("module,layer", [
    ("kenning.sources.jcs", "floor"), ("kenning.sources.chatgpt", "raw"), ("kenning.pipeline.runner", "knowledge"),
    ("kenning.pipeline.stage_index", "pipeline"), ("kenning.knowledge.edge_gate", "knowledge"),
    ("kenning.upkeep.edge_gate", "upkeep"), ("kenning", "floor"), ("kenning.cli.main", "roof"),
])
def test_layer_table(module, layer):
    assert layer_of(module)[1] == layer
    assert [name for name, _ in LAYERS].count(layer) == 1
