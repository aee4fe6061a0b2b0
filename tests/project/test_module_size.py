"""Every module under src/ is at most MAX_LINES lines, so that one reads as one job: a
module that grows past it is split along its seams, not allowed more.

The one exception is the claims' registry (claims/statements.py): every checkable sentence
of the paper, one entry each, which the claims table reads in order.
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 400
EXCEPTION = "attnbias/claims/statements.py"


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_every_module_is_at_most_400_lines():
    over = {
        path.relative_to(SRC).as_posix(): _lines(path)
        for path in sorted(SRC.rglob("*.py"))
        if _lines(path) > MAX_LINES
    }
    allowed = {EXCEPTION}
    assert not {name: n for name, n in over.items() if name not in allowed}, (
        f"modules over {MAX_LINES} lines: split each along its seams"
    )


def test_the_exception_is_real():
    """The exception names a module that exists (a rename or split shows here)."""
    assert (SRC / EXCEPTION).is_file(), EXCEPTION
