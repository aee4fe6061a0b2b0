"""Errors for data or weights that are not where the config says, and the test-fixture marker."""

from __future__ import annotations

from pathlib import Path

from attnbias.data.missing import MissingDataError

__all__ = [
    "FIXTURE_MARKER",
    "MissingRealDataError",
    "is_fixture",
    "mark_fixture",
]

# A file with this name in a dataset folder or a model folder marks it as a test fixture
# (written by the test suite, not real data); figures drawn from it say so in their title.
FIXTURE_MARKER = "ATTNBIAS_FIXTURE"


class MissingRealDataError(MissingDataError):
    """Several datasets or weights are missing: one message lists each, with where it goes."""

    def __init__(self, errors: list[MissingDataError], what: str = "real-data figure"):
        self.errors = list(errors)
        first = self.errors[0]
        FileNotFoundError.__init__(self, self.message(what))
        # as a MissingDataError: the first missing item
        self.dataset, self.path, self.key, self.how = (
            first.dataset,
            first.path,
            first.key,
            first.how,
        )

    def message(self, what: str) -> str:
        n = len(self.errors)
        items = "\n".join(f"  - {err}" for err in self.errors)
        return f"The {what} cannot start: {n} item{'s' if n > 1 else ''} missing.\n{items}"


def is_fixture(path: str | Path) -> bool:
    """True when `path` (a dataset or model folder) carries the fixture marker."""
    return (Path(path) / FIXTURE_MARKER).exists()


def mark_fixture(path: str | Path) -> None:
    """Mark a folder written by the tests as a fixture."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / FIXTURE_MARKER).write_text(
        "Written by the attnbias test suite: tiny synthetic stand-in, not real data.\n"
    )
