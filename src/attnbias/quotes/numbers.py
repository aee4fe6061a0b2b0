"""Numbers as the docs write them, read back and written anew at the same precision.

A quoted number keeps its style: its decimals ("2.23"), its significant digits in
e-notation ("1.0e-5") or in a round integer after "≈", "about" or "near" ("t ≈ 1,300":
there, trailing zeros are not significant; elsewhere an integer is exact), a power of ten
("10¹¹⁹", "10^11.5"), a percentage ("40%"), thousands commas and its minus sign (− or -).
A phrase is one number or a range ("375 to 1,241", in either order). `render(phrase,
built)` writes the built value(s) in the phrase's style; the phrase is current exactly when
rendering gives it back, so the check and the writer are one computation, and a number is
stale only where it no longer rounds to what the build gives.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_FROM_SUPERSCRIPT = str.maketrans(SUPERSCRIPTS + "⁻", "0123456789-")
_TO_SUPERSCRIPT = str.maketrans("0123456789-", SUPERSCRIPTS + "⁻")
MINUS = "−"  # U+2212, the docs' minus; "-" where a phrase writes that
NUMBER = (
    rf"[{MINUS}-]?(?:10[{SUPERSCRIPTS}⁻]+|10\^[{MINUS}-]?\d+(?:\.\d+)?"
    r"|\d{1,3}(?:,\d{3})+(?!\d|\.\d)|\d+(?:\.\d+)?(?:e[+-]?\d+)?)%?"
)
APPROXIMATE = re.compile(r"(?:≈|~|\babout|\bnear|\broughly)\s*(?:t\s*=\s*)?$")
PHRASE = rf"{NUMBER}(?:\s+to\s+{NUMBER})?"  # a range may break across lines


@dataclass(frozen=True)
class Style:
    """How one number is written: `kind` is fixed (digits = decimals), sig (digits =
    significant digits of an integer), exp (digits = decimals of the mantissa) or pow10
    (digits = decimals of the exponent)."""

    kind: str
    digits: int
    minus: str = MINUS
    commas: bool = False
    percent: bool = False
    caret: bool = False  # pow10 written 10^x, not with superscripts


def style_of(text: str, approximate: bool = False) -> Style:
    """The style of one quoted number (a match of NUMBER); `approximate`: the words call it
    approximate, so a round integer's trailing zeros are rounding."""
    minus = "-" if text.startswith("-") else MINUS
    body = text.lstrip(MINUS + "-")
    percent = body.endswith("%")
    body = body.rstrip("%")
    if body.startswith("10^"):
        exponent = body[3:].lstrip(MINUS + "-")
        return Style("pow10", _decimals(exponent), minus, percent=percent, caret=True)
    if body.startswith("10") and body[2:] and body[2] in SUPERSCRIPTS + "⁻":
        return Style("pow10", 0, minus, percent=percent)
    if "e" in body:
        return Style("exp", _decimals(body.split("e")[0]), minus, percent=percent)
    digits = body.replace(",", "")
    # thousands commas as quoted; a number quoted below 1,000 takes the docs' commas
    commas = "," in body or len(digits.split(".")[0]) < 4
    if "." in digits:
        return Style("fixed", _decimals(digits), minus, commas, percent)
    stripped = digits.rstrip("0")
    if approximate and stripped and len(stripped) < len(digits):
        return Style("sig", len(stripped), minus, commas, percent)
    return Style("fixed", 0, minus, commas, percent)


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def value_of(text: str) -> float:
    """The value of one quoted number (a percentage as a fraction)."""
    negative = text[:1] in (MINUS, "-")
    body = text.lstrip(MINUS + "-").rstrip("%")
    if body.startswith("10^"):
        value = 10 ** float(body[3:].replace(MINUS, "-"))
    elif body.startswith("10") and body[2:3] in tuple(SUPERSCRIPTS + "⁻"):
        value = 10.0 ** int(body[2:].translate(_FROM_SUPERSCRIPT))
    else:
        value = float(body.replace(",", ""))
    value = value / 100 if text.endswith("%") else value
    return -value if negative else value


def write(value: float, style: Style) -> str | None:
    """`value` in `style`; None for a value the build does not have (NaN)."""
    if value is None or not np.isfinite(value):
        return None
    scaled = abs(value) * (100 if style.percent else 1)
    if style.kind == "pow10":
        if scaled <= 0:
            return None
        exponent = f"{math.log10(scaled):.{style.digits}f}"
        body = f"10^{exponent}" if style.caret else "10" + exponent.translate(_TO_SUPERSCRIPT)
        zero = False
    elif style.kind == "exp":
        mantissa, exponent = f"{scaled:.{style.digits}e}".split("e")
        body, zero = f"{mantissa}e{int(exponent)}", float(mantissa) == 0
    elif style.kind == "sig":
        rounded = round(scaled, style.digits - 1 - math.floor(math.log10(scaled))) if scaled else 0
        body, zero = (f"{int(rounded):,}" if style.commas else f"{int(rounded)}"), rounded == 0
    else:
        body = f"{scaled:,.{style.digits}f}" if style.commas else f"{scaled:.{style.digits}f}"
        zero = float(body.replace(",", "")) == 0
    sign = style.minus if value < 0 and not zero else ""
    return sign + body + ("%" if style.percent else "")


def render(phrase: str, built, approximate: bool = False) -> str | None:
    """The phrase with the built value(s) in its style: one number where every built value
    writes the same, else "low to high" (in the phrase's order). None where the build has
    no value (NaN). `built`: a number or the values over seeds; `approximate`: see style_of."""
    values = np.atleast_1d(np.asarray(built, dtype=float))
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    ends = re.findall(NUMBER, phrase)
    between = re.search(r"\s+to\s+", phrase)
    separator = between[0] if between else " to "
    styles = [style_of(t, approximate) for t in ends]
    descending = len(ends) == 2 and value_of(ends[0]) > value_of(ends[1])
    low, high = float(values.min()), float(values.max())
    first, second = (high, low) if descending else (low, high)
    texts = [write(first, styles[0]), write(second, styles[-1])]
    if texts[0] == write(second, styles[0]):
        return texts[0]
    return f"{texts[0]}{separator}{texts[1]}"
