"""Layering: every package of guirl imports only the layers below it (docs/architecture.md).

Every file under guirl/ is parsed with ``ast``; any import of a package on its own floor or above
(module level, lazy inside a function, under ``TYPE_CHECKING``, or through ``import_module``) fails the
test with file:line, unless :data:`ALLOWED` lists it with the reason it must exist. A package missing
from :data:`LAYERS` fails too, so a new package has to be placed. And no two modules import each other,
directly or round a longer circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

GUIRL = Path(__file__).resolve().parents[1] / "guirl"

#: floors, bottom to top: a package may import the packages on the floors below its own
LAYERS: list[tuple[str, ...]] = [
    ("extras",),                  # the MissingExtra error every layer may raise
    ("config", "registry"),       # typed configs; the one Registry class
    ("actions", "algorithms"),    # the Action type, frames, formats; losses and advantages (tensors only)
    ("data",),                    # schema, I/O, adapters
    ("matching",),                # the step matcher: match_action, point rules, text comparisons
    ("envs",),                    # environments, pools
    ("models",),                  # model building, loading, prompts, scoring
    ("rollout",),                 # engines, history and step prompts, runner, online episodes
    ("judges",),                  # judge protocol, ground-truth / model / HTTP judges, the GUI analyzer
    ("rewards",),                 # reward functions of the five methods
    ("datagen",),                 # data construction with models, judges and worlds
    ("eval",),                    # metrics, evaluators, report
    ("trainers",),                # the training loop and the trainers
    ("commands",),                # one module per CLI verb
    ("cli",),                     # `guirl <verb>`
    ("__main__",),                # `python -m guirl`
]

#: (file, imported module) -> why this upward import must exist. At most three.
ALLOWED: dict[tuple[str, str], str] = {
    ("guirl/envs/miniwob/scripted.py", "guirl.rollout.policy"):
        # The scripted MiniWoB++ experts are policies in the rollout sense (PolicyInput -> Action): the runner
        # drives them like any model, and the MiniWoB++ env calls the same functions for its oracle (A*_t).
        # PolicyInput is the runner's type; a second copy of it in envs/ would be a second name for one thing.
        "scripted experts take the runner's PolicyInput; the env's oracle reuses them",
    ("guirl/models/guidance.py", "guirl.rewards.litegui"):
        # LiteGUI's Most-Matched guidance (eq. 8) is defined as the argmax of the phi_gui reward over A*_t; the
        # guidance must rank references by the reward's own score, so it calls it (lazily, only in that mode).
        "Most-Matched guidance is argmax of LiteGUI's phi_gui reward by definition",
}
MAX_ALLOWED = 3


def _floor() -> dict[str, int]:
    return {package: i for i, floor in enumerate(LAYERS) for package in floor}


def _package_of(module: str) -> str | None:
    """``guirl.X.y`` -> ``X``; None for modules outside guirl and for ``guirl`` itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "guirl" and len(parts) > 1 else None


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


def _module_name(path: Path, repo: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports resolve against) of a file under ``repo``."""
    parts = path.relative_to(repo).with_suffix("").parts
    package = ".".join(parts[:-1])
    return (package if parts[-1] == "__init__" else ".".join(parts)), package


def imports_of(path: Path, repo: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every guirl module the file at ``path`` imports (one per statement and module)."""
    _, package = _module_name(path, repo)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        for module in dict.fromkeys(_imported_modules(node, package)):
            if module == "guirl" or module.startswith("guirl."):
                found.append((node.lineno, module))
    return found


def upward_imports(path: Path, repo: Path = GUIRL.parent, allowed: dict | None = None) -> list[str]:
    """``file:line imports module`` for every import in ``path`` of a package not below the file's own."""
    allowed = ALLOWED if allowed is None else allowed
    floor = _floor()
    relative = path.relative_to(repo).as_posix()
    own = _package_of(_module_name(path, repo)[0])
    found = []
    for line, module in imports_of(path, repo):
        target = _package_of(module)
        if own is None or target is None or target == own or any(
                file == relative and (module == name or module.startswith(name + ".")) for file, name in allowed):
            continue
        if target not in floor or floor[target] >= floor[own]:
            found.append((line, f"{relative}:{line} imports {module}"))
    seen = list(dict.fromkeys(text for _, text in sorted(found)))
    # `from guirl.a import b` names both guirl.a and guirl.a.b: report the statement once, by its module
    by_line: dict[str, str] = {}
    for text in seen:
        by_line.setdefault(text.split(" imports ")[0], text)
    return list(by_line.values())


def _sources(root: Path = GUIRL) -> list[Path]:
    files = sorted(root.rglob("*.py"))
    assert files, f"no Python files under {root}"
    return files


def test_every_package_has_a_floor():
    packages = {p.name if p.is_dir() else p.stem for p in GUIRL.iterdir()
                if (p.is_dir() and any(p.rglob("*.py"))) or (p.suffix == ".py" and p.stem != "__init__")}
    missing = sorted(packages - set(_floor()))
    assert not missing, f"place these packages on a floor of LAYERS in tests/test_layers.py: {missing}"
    stale = sorted(set(_floor()) - packages)
    assert not stale, f"LAYERS names packages that do not exist: {stale}"


def test_imports_point_down():
    found = [line for path in _sources() for line in upward_imports(path)]
    assert not found, ("these imports run up the layers (docs/architecture.md); move the code they need down, "
                       "or document the import in ALLOWED:\n" + "\n".join(found))


def test_allow_list_is_short_and_used():
    assert len(ALLOWED) <= MAX_ALLOWED, f"at most {MAX_ALLOWED} upward imports may be allowed, got {len(ALLOWED)}"
    repo = GUIRL.parent
    for (file, module), why in ALLOWED.items():
        assert why.strip(), f"{file} -> {module}: say why it must exist"
        path = repo / file
        assert path.is_file(), f"ALLOWED names {file}, which does not exist"
        assert module in {m for _, m in imports_of(path, repo)}, f"ALLOWED entry unused: {file} -> {module}"
        assert upward_imports(path, allowed={}), f"ALLOWED entry no longer runs upward: {file} -> {module}"


def _module_graph(root: Path = GUIRL) -> dict[str, set[str]]:
    repo = root.parent
    names = {_module_name(path, repo)[0]: path for path in _sources(root)}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        for _, module in imports_of(path, repo):
            if module in names and module != name:
                graph[name].add(module)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_no_import_cycles():
    cycles = import_cycles(_module_graph())
    assert not cycles, "modules that import each other (directly or round a circle):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_checker_catches_lazy_and_relative_imports(tmp_path):
    # a fake guirl/data/ holding the three ways code can reach upward; each must be named with its line
    fake = tmp_path / "guirl" / "data"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text(
        "import json\n"
        "from guirl.eval.offline import evaluate_offline\n"
        "from guirl.actions import Action\n"
        "def f():\n"
        "    from ..models import generate\n"
        "    return importlib.import_module('guirl.judges.http')\n"
    )
    assert upward_imports(fake / "bad.py", repo=tmp_path) == [
        "guirl/data/bad.py:2 imports guirl.eval.offline",
        "guirl/data/bad.py:5 imports guirl.models",
        "guirl/data/bad.py:6 imports guirl.judges.http",
    ]
    allowed = {("guirl/data/bad.py", "guirl.eval.offline"): "a reason"}
    assert upward_imports(fake / "bad.py", repo=tmp_path, allowed=allowed)[0] == "guirl/data/bad.py:5 imports guirl.models"


def test_checker_finds_cycles():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []
