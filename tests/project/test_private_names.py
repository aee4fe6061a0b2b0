"""No module of the package imports another's private name (`from attnbias.x import _y`):
a helper two modules share is a public, documented name of the module whose job it is, so
that a reader finds it, and a change to it is seen as one to an interface. Read statically
with `ast`; dunder names (`__version__`) are public."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def private_imports(source: str) -> list[str]:
    """`module: name` of every private name `source` imports from the package."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attnbias"):
            found += [
                f"{node.module}: {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_no_module_imports_another_s_private_name():
    found = {
        path.relative_to(SRC).as_posix(): names
        for path in sorted(SRC.rglob("*.py"))
        if (names := private_imports(path.read_text()))
    }
    assert not found, f"private names imported across modules (make them public): {found}"


def test_the_check_sees_a_private_import():
    """The control: the import this check exists for, in each form, is seen."""
    source = (
        "from attnbias.svm.spectral_nuclear import _follow, orthonormal_basis\n"
        "def f():\n"
        "    from attnbias.claims.write import (\n"
        "        _markdown_groups,\n"
        "    )\n"
        "from attnbias import __version__\n"
    )
    assert private_imports(source) == [
        "attnbias.svm.spectral_nuclear: _follow",
        "attnbias.claims.write: _markdown_groups",
    ]
