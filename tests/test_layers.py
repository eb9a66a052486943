"""Layering: ``guirl/data`` is only the schema, I/O and adapters (docs/architecture.md).

Every file under guirl/data is parsed with ``ast``; any import of a layer
above it (models, judges, evaluation, rollout, trainers, data construction),
at module level or lazily inside a function, fails the test with file:line.
"""

from __future__ import annotations

import ast
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "guirl" / "data"
FORBIDDEN = ("guirl.eval", "guirl.judges", "guirl.models", "guirl.rollout", "guirl.trainers", "guirl.datagen")


def _imported_modules(node: ast.AST, package: str) -> list[str]:
    """Absolute names an import statement brings in (relative imports resolved against ``package``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1])
            module = f"{base}.{node.module}" if node.module else base
        else:
            module = node.module or ""
        return [module] + [f"{module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            return [str(node.args[0].value)]
    return []


def upward_imports(path: Path, repo: Path = DATA.parents[1]) -> list[str]:
    """``file:line imports module`` for every forbidden import in ``path`` (a file under ``repo``), by line."""
    relative = path.relative_to(repo)
    package = ".".join(relative.with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        for module in _imported_modules(node, package):
            if any(module == layer or module.startswith(layer + ".") for layer in FORBIDDEN):
                found.append((node.lineno, f"{relative.as_posix()}:{node.lineno} imports {module}"))
                break
    return [line for _, line in sorted(found)]


def test_data_imports_no_layer_above_it():
    files = sorted(DATA.rglob("*.py"))
    assert files, f"no Python files under {DATA}"
    found = [line for path in files for line in upward_imports(path)]
    assert not found, ("guirl/data must hold only schema, I/O and adapters; move code that needs these layers to "
                       "guirl/datagen:\n" + "\n".join(found))


def test_checker_catches_lazy_and_relative_imports(tmp_path):
    # a fake guirl/data/ holding the three ways code can reach upward; each must be named with its line
    fake = tmp_path / "guirl" / "data"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text(
        "import json\n"
        "from guirl.eval.offline import match_action\n"
        "def f():\n"
        "    from ..models import generate\n"
        "    return importlib.import_module('guirl.judges.http')\n"
    )
    assert upward_imports(fake / "bad.py", repo=tmp_path) == [
        "guirl/data/bad.py:2 imports guirl.eval.offline",
        "guirl/data/bad.py:4 imports guirl.models",
        "guirl/data/bad.py:5 imports guirl.judges.http",
    ]
