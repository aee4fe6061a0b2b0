"""Which of the package's modules a workflow script imports, transitively.

Snakemake reruns a job when its script changes, but not when a module that the script
imports changes. The workflow lists these modules as inputs of each rule, so editing
optim/full_batch.py reruns training (and what depends on it) and nothing upstream.
Imports are read statically with `ast`, so nothing is executed.

The optimizer rules are the exception: their registry (attnbias.optim.rules) imports each
module of its folder by file name, so every job that reads the registry runs them all, but
a job's results depend only on the rules it trains with. A rule's module (rule_files) is
therefore a code input of the jobs that train with it (workflow.job_params), never of the
others: adding or editing one reruns its jobs and what reads their tables, nothing else.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from functools import cache
from pathlib import Path

from attnbias.data.models import SEPARATE_GENERATORS

PACKAGE = "attnbias"
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# Sources that a module reads rather than imports: training/kernel_library.py compiles
# _kernel.c, svm/max_simplex.py _max_simplex.c.
COMPANIONS = {"kernel_library.py": ("_kernel.c",), "max_simplex.py": ("_max_simplex.c",)}
# The registry that imports each module of its folder by file name (a rule is a file
# there): those modules are code inputs of the jobs that train with them (rule_files) only.
RULES_PACKAGE = "attnbias.optim.rules"


def _statements(tree: ast.Module):
    """Every statement of `tree`, nested ones included (in functions, classes, if, try...):
    an import is a statement, so the expressions, most of the tree, are never visited."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "handlers", "finalbody", "cases"):
            todo.extend(getattr(node, field, None) or ())


class _KnownImports:
    """Each source text's imports by the sha256 of the text, kept in a record between
    Snakemake runs (remember_imports): parsing the package's ~200 files is a tenth of a
    dry run. The key is the text itself, so an edited file is parsed again, and checkouts
    share the record; one that does not load is ignored and written again. Past KEEP
    texts, those this run did not read are dropped."""

    KEEP = 4096

    def __init__(self):
        self.record: Path | None = None
        self.known: dict[str, list[str]] = {}
        self.used: set[str] = set()
        self.new = False

    def load(self, record: Path) -> None:
        self.record = Path(record)
        try:
            stored = json.loads(self.record.read_text())
        except (OSError, ValueError):
            stored = None
        imports = stored.get("imports") if isinstance(stored, dict) else None
        if stored and stored.get("format") == IMPORTS_FORMAT and isinstance(imports, dict):
            self.known.update(
                (k, v)
                for k, v in imports.items()
                if isinstance(v, list) and all(isinstance(m, str) for m in v)
            )

    def save(self) -> None:
        if self.record is None or not self.new:
            return
        if len(self.known) > self.KEEP:
            self.known = {k: v for k, v in self.known.items() if k in self.used}
        text = json.dumps({"format": IMPORTS_FORMAT, "imports": self.known})
        from attnbias.workflow.store import atomic_path

        try:  # atomic: a parallel run reads all or none
            with atomic_path(self.record, shared=True) as temporary:
                Path(temporary).write_text(text)
            self.new = False
        except OSError:  # not writable: the next run parses again
            pass


# the record's format: the statements' reading below (and the Python version's ast)
IMPORTS_FORMAT = f"attnbias-imports/1, Python {sys.version_info[0]}.{sys.version_info[1]}"
_KNOWN = _KnownImports()


def remember_imports(record) -> None:
    """Read the imports found by earlier runs from `record` (a JSON file), and keep those
    found in this one there (save_imports)."""
    _KNOWN.load(record)


def save_imports() -> None:
    """Write the imports found since remember_imports to its record, if any are new."""
    _KNOWN.save()


@cache
def _imported_modules(source: Path) -> frozenset[str]:
    """Fully qualified names of the package's modules that `source` imports (read once per
    file: the workflow asks for every rule's script, and they share most modules)."""
    text = source.read_bytes()
    digest = hashlib.sha256(text).hexdigest()
    _KNOWN.used.add(digest)
    if digest not in _KNOWN.known:
        _KNOWN.known[digest] = sorted(_parsed_imports(text, source))
        _KNOWN.new = True
    return frozenset(_KNOWN.known[digest])


def _parsed_imports(text: bytes, source: Path) -> set[str]:
    found = set()
    for node in _statements(ast.parse(text, filename=str(source))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # `from attnbias import svm` names a module, not an attribute
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    # importing attnbias.a.b runs attnbias/a/__init__.py too
    found |= {
        ".".join(name.split(".")[:i]) for name in found for i in range(2, name.count(".") + 1)
    }
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


@cache  # the same few hundred names, asked for by every script's closure
def _module_file(name: str) -> Path | None:
    parts = name.split(".")[1:]
    candidate = PACKAGE_DIR.joinpath(*parts)
    for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def module_files(script: str) -> tuple[str, ...]:
    """Source files of the package that `script` imports, directly or not, sorted.

    The package's __init__.py is always included, since every import runs it, and so are
    the COMPANIONS of a module (the C sources that kernel_library.py and max_simplex.py
    compile); the modules the rules' registry imports by file name are not (rule_files: the
    jobs that train with a rule list its module).
    """
    seen: set[Path] = set()
    todo = [Path(script)]
    init = PACKAGE_DIR / "__init__.py"
    while todo:
        for name in _imported_modules(todo.pop()):
            path = _module_file(name)
            if path is not None and path not in seen:
                seen.add(path)
                todo.append(path)
    seen.add(init)
    seen |= {p.with_name(c) for p in list(seen) for c in COMPANIONS.get(p.name, ())}
    return tuple(sorted(str(p) for p in seen))


def package_module_files(module: str) -> tuple[str, ...]:
    """Source files of the package's `module` ("attnbias.x") and of what it imports."""
    path = _module_file(module)
    if path is None:
        raise ValueError(f"{module!r} is not a module of the {PACKAGE} package")
    return tuple(sorted({str(path), *module_files(str(path))}))


def rule_files(names) -> list[str]:
    """Source files of the modules of the optimizer rules `names` (config `rule`s) and of
    what they import: a code input of the jobs that train with them. A name no module
    defines gives none (the config checks refuse it first)."""
    from attnbias.optim import rules

    modules = {rules.MODULES[n] for n in names if n in rules.MODULES}
    return sorted({f for module in modules for f in package_module_files(module)})


def generator_files(model: str) -> list[str]:
    """Source files of data model `model`'s own module, where its generator lives apart
    from attnbias.data.models (SEPARATE_GENERATORS: bad_direction's solves an SVM,
    binary_digits' reads real images): models.generator loads it by name, so no script's
    imports name it. None for the models of attnbias.data.models itself."""
    own = SEPARATE_GENERATORS.get(model)
    return list(package_module_files(own)) if own else []
