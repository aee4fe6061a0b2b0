"""The package's import graph, read statically with `ast`: no cycle anywhere, every import
down the floor order of its sub-packages (FLOORS) or sideways within one, the backends'
shared definitions in a leaf, and torch only behind the dispatcher's lazy imports.

Every import statement counts, also one inside a function (a lazy import still runs, and a
circle through it is a circle of the design), except under `if TYPE_CHECKING:`. An import
of a package counts as its __init__.py; `from attnbias.x import y` counts as the module y
where y is one, else as attnbias.x.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
REPO = SRC.parent


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """{dotted module name: file} of every module of `package` under `root`."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def import_nodes(tree: ast.AST, top_level_only: bool = False):
    """The Import and ImportFrom nodes of `tree` (with those in functions unless
    top_level_only), skipping `if TYPE_CHECKING:` blocks."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif _type_checking(node):
            todo.extend(node.orelse)
        elif not (top_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
            todo.extend(ast.iter_child_nodes(node))


def imported_names(name: str, path: Path, top_level_only: bool = False) -> set[tuple[str, str]]:
    """What module `name` (file `path`) imports, as (absolute dotted name, attribute):
    ("m", "") for `import m`, ("m", "a") for `from m import a` (a module m.a, or a name of m)."""
    is_package = path.name == "__init__.py"
    names = set()
    for node in import_nodes(ast.parse(path.read_text(), str(path)), top_level_only):
        if isinstance(node, ast.Import):
            names.update((alias.name, "") for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # relative: from the module's package, up level - 1
            package = name.split(".") if is_package else name.split(".")[:-1]
            anchor = package[: len(package) - (node.level - 1)]
            base = ".".join(anchor + ([node.module] if node.module else []))
        names.update((base, alias.name) for alias in node.names)
    return names


def resolve(imported: tuple[str, str], modules) -> str | None:
    """The module an import counts as (see the module's doc); None outside `modules`."""
    base, attribute = imported
    if f"{base}.{attribute}" in modules:
        return f"{base}.{attribute}"
    return base if base in modules else None


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """{module: the package's modules it imports} (see the module's doc for what counts)."""
    modules = modules_of(root, package)
    graph = {}
    for name, path in modules.items():
        targets = {resolve(imported, modules) for imported in imported_names(name, path)}
        graph[name] = targets - {None}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a path back to its first module) per strongly connected component that
    has one (Tarjan's algorithm), sorted."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_cycle_within(graph, component) for component in components)


def _cycle_within(graph, component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside it."""
    start = min(component)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for target in sorted(graph[node] & component):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                todo.append(target)
    raise AssertionError(f"no cycle in component {sorted(component)}")


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# ---------------------------------------------------------------- the package


def test_the_package_has_no_import_cycle():
    graph = import_graph(SRC, "attnbias")
    assert "attnbias.training.kernel" in graph and graph["attnbias.training.dispatch"]
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_backends_shared_definitions_are_a_leaf():
    """training/metrics.py imports nothing from attnbias, nor torch: the loop, the metric
    formulas and the claims import it, and no stepper imports another."""
    graph = import_graph(SRC, "attnbias")
    leaf = "attnbias.training.metrics"
    assert graph[leaf] == set()
    imported = imported_names(leaf, modules_of(SRC, "attnbias")[leaf])
    roots = {base.split(".")[0] for base, _ in imported}
    assert roots <= {"__future__", "numpy"}, roots
    for user in ("loop", "metric_formulas"):
        assert leaf in graph[f"attnbias.training.{user}"], user
    assert "attnbias.training.kernel" not in graph["attnbias.training.torch_loop"]
    assert "attnbias.training.torch_loop" not in graph["attnbias.training.kernel"]
    assert "attnbias.training.full_matrix" not in graph["attnbias.training.kernel"]
    claims = [n for n in graph if n == "attnbias.claims" or n.startswith("attnbias.claims.")]
    assert any(leaf in graph[n] for n in claims), "the claims read the thresholds elsewhere"


# The floor order: the package's sub-packages from the lowest to the highest, one per stage of
# the Snakefile (data, svm, train, figure, real data, claims, study and sweep, the quotes
# checked against a build) and the layers they stand on (the model, the optimizers, what
# every rule shares). A module imports from its own floor (sideways, within its package) or
# from a lower one, never from a higher one, a lazy import included; the package's face
# (attnbias/__init__.py: its version) is the ground. A new sub-package takes its place here.
FLOORS = (
    "attnbias",  # the package's face: __version__
    "source_digest",  # a leaf: sha256 of sources and library versions (the caches' keys)
    "c_library",  # a leaf: a C source compiled, cached and loaded (the kernel, the simplex)
    "model",  # the paper's model: attention, losses, gradients
    "optim",  # the optimizers: each rule's module, its expected norm, the direction arithmetic
    "svm",  # rule svm: the max-margin problems, in each norm
    "data",  # rule data: the data models and their hypotheses
    "training",  # rule train: the backends, the logged metrics and the geometry measures
    "neighbours",  # the neighbours' questions: their SVMs, local-optimality check, measures
    "workflow",  # what every rule shares: config reading and checks, files, provenance
    "figures",  # rule figure: the metric figures and the geometry figure
    "realdata",  # rules of realdata.smk: the real-data runs and figures, their config checks
    "claims",  # rule claims: the claims table and what it reads of an experiment's files
    "studies",  # rules study and sweep: many settings at once, with the sweeps' figure
    "quotes",  # the docs' numbers held to a build (findings' geometry section among them)
)


def floor(module: str, floors: tuple[str, ...] = FLOORS) -> int:
    """The floor of `module` (the index in `floors` of its sub-package; the package itself
    is floors[0]); ValueError for a sub-package that has none."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else parts[0]
    if name not in floors:
        raise ValueError(f"{module}: its package {name} has no place in the floor order")
    return floors.index(name)


def upward_imports(graph, floors: tuple[str, ...] = FLOORS) -> list[str]:
    """Every import (a lazy one counts) from a module to one on a higher floor, named."""
    return sorted(
        f"{module} (floor {floor(module, floors)}: {floors[floor(module, floors)]}) imports "
        f"{target} (floor {floor(target, floors)}: {floors[floor(target, floors)]})"
        for module, targets in graph.items()
        for target in targets
        if floor(target, floors) > floor(module, floors)
    )


def test_every_sub_package_has_its_floor():
    """The floor order is the whole package: each sub-package in it once, and nothing else."""
    packages = {m.split(".")[1] for m in import_graph(SRC, "attnbias") if "." in m}
    assert len(set(FLOORS)) == len(FLOORS)
    assert packages == set(FLOORS[1:]), packages ^ set(FLOORS[1:])


def test_no_import_runs_up_the_floors():
    graph = import_graph(SRC, "attnbias")
    found = upward_imports(graph)
    assert not found, "imports that run back up:\n" + "\n".join(found)


def test_an_upward_import_is_found_even_when_lazy(tmp_path):
    """Negative control: a fake package whose workflow module imports a figures module
    inside a function (up), whose studies module imports the workflow (down) and whose
    figures modules import each other's (sideways); and one with no floor."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/workflow/__init__.py": "",
            "pkg/workflow/config.py": "def f():\n    from pkg.figures.panels import describe\n",
            "pkg/figures/__init__.py": "",
            "pkg/figures/panels.py": "describe = None\n",
            "pkg/figures/drawing.py": "from pkg.figures import panels\n",
            "pkg/studies/__init__.py": "",
            "pkg/studies/check.py": "from pkg.workflow import config\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    floors = ("pkg", "workflow", "figures", "studies")
    assert upward_imports(graph, floors) == [
        "pkg.workflow.config (floor 1: workflow) imports pkg.figures.panels (floor 2: figures)"
    ]
    with pytest.raises(ValueError, match="pkg.studies.check: its package studies has no place"):
        upward_imports(graph, ("pkg", "workflow", "figures"))


def _top_level_closure(script: Path) -> set[str]:
    """Every name imported at module level by `script` and, transitively, by the package's
    modules it so imports (lazy imports inside functions not followed)."""
    modules = modules_of(SRC, "attnbias")
    found: set[str] = set()
    todo = [("__main__", script)]
    while todo:
        for imported in imported_names(*todo.pop(), top_level_only=True):
            name = resolve(imported, modules) or imported[0]
            if name not in found:
                found.add(name)
                todo += [(name, modules[name])] if name in modules else []
    return found


def test_the_training_job_imports_torch_only_lazily():
    """Statically: workflow/scripts/train.py's module-level imports reach no torch (the
    dispatcher imports the torch loop inside functions). tests/training/test_dispatch.py runs it."""
    job = _top_level_closure(REPO / "workflow/scripts/train.py")
    assert "attnbias.training.dispatch" in job and "attnbias.training.kernel" in job
    assert not {n for n in job if n.split(".")[0] == "torch"}
    # negative control: the torch loop's closure does reach torch
    loop = _top_level_closure(SRC / "attnbias/training/torch_loop.py")
    assert "torch" in loop


# ---------------------------------------------------------------- negative controls


def test_a_cycle_through_a_lazy_relative_import_is_found_and_named(tmp_path):
    """A fake package: a -> b at module level, b -> a inside a function (relative), plus an
    acyclic part and a TYPE_CHECKING import that would close a second circle."""
    _write(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": "from fake import b\n",
            "fake/sub/__init__.py": "",
            "fake/sub/leaf.py": "import numpy\n",
            "fake/b.py": "def f():\n    from . import a\n    from .sub import leaf\n",
            "fake/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fake import d\n"
            ),
            "fake/d.py": "import fake.c\n",
        },
    )
    graph = import_graph(tmp_path, "fake")
    assert graph["fake.b"] == {"fake.a", "fake.sub.leaf"}
    assert graph["fake.c"] == set() and graph["fake.d"] == {"fake.c"}
    assert cycles(graph) == [["fake.a", "fake.b", "fake.a"]]


def test_imports_resolve_to_modules_packages_and_attributes(tmp_path):
    """`import pkg.sub` counts as sub's __init__, `from pkg.sub import mod` as the module,
    `from pkg.mod import name` as mod, `from .. import x` from a sub-package's module."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "NAME = 1\n",
            "pkg/x.py": "",
            "pkg/sub/__init__.py": "from .inner import VALUE\n",
            "pkg/sub/inner.py": "from .. import x\nfrom ..mod import NAME\nVALUE = 2\n",
            "pkg/user.py": "import pkg.sub\nfrom pkg.sub import inner\nfrom pkg.mod import NAME\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.user"] == {"pkg.sub", "pkg.sub.inner", "pkg.mod"}
    assert graph["pkg.sub"] == {"pkg.sub.inner"}
    assert graph["pkg.sub.inner"] == {"pkg.x", "pkg.mod"}
    assert cycles(graph) == []
    _write(tmp_path, {"pkg/x.py": "def g():\n    import pkg.sub\n"})  # x -> sub -> inner -> x
    assert cycles(import_graph(tmp_path, "pkg")) == [
        ["pkg.sub", "pkg.sub.inner", "pkg.x", "pkg.sub"]
    ]


@pytest.mark.parametrize("graph", [{"m": {"m"}}, {"m": {"n"}, "n": {"m"}}])
def test_a_self_import_and_a_pair_are_cycles(graph):
    assert len(cycles(graph)) == 1


# ---- no forwarding: a name is imported from the module that defines it ----------------
def forwarded_names(tree: ast.Module) -> set[str]:
    """Names a module hands on without defining them: its `__all__` entries that it only
    imports, and the imports it marks `noqa: F401` (kept for others to import)."""
    defined, imported, exported = set(), set(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                defined |= names
                if "__all__" in names:
                    exported = [e.value for e in node.value.elts]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return {name for name in exported if name not in defined and name in imported}


def test_no_module_forwards_a_name_it_does_not_define():
    found = {}
    for name, path in modules_of(SRC, "attnbias").items():
        text = path.read_text()
        forwarded = forwarded_names(ast.parse(text)) | (
            {"noqa: F401"} if "noqa: F401" in text else set()
        )
        if forwarded:
            found[name] = sorted(forwarded)
    assert not found, f"import these from the modules that define them: {found}"


def test_forwarded_names_are_found():
    tree = ast.parse(
        "from a import b, c\nfrom d import e\ndef f(): pass\n__all__ = ['b', 'f', 'e']\n"
    )
    assert forwarded_names(tree) == {"b", "e"}
