"""Text into LaTeX, read back as the same text: the one escaping for the LaTeX file the
workflow writes (`claims.tex`, whose `\\newcommand` bodies carry the verdicts).

Config text (labels, titles) reaches those bodies; unescaped, a label such as
`x}\\input{/etc/hostname}\\newcommand{\\zz}{` closes the body and runs as TeX (any file read
in, `\\write18` where the engine allows a shell), and an ordinary `PS 100% #1 & co` breaks
the file (`%` comments out the closing brace, `#` is a macro parameter). Numbers are
written as they are; only text goes through `text()`.
"""

from __future__ import annotations

import re

# TeX's ten specials, each replaced by what prints it in text mode (LaTeX's own names);
# one character at a time (str.translate), so no replacement is escaped again
_SPECIALS = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\{",
        "}": r"\}",
        "$": r"\$",
        "&": r"\&",
        "#": r"\#",
        "^": r"\^{}",
        "_": r"\_",
        "%": r"\%",
        "~": r"\textasciitilde{}",
    }
)
# control characters: TeX refuses most as invalid (the file would not compile); they print
# nothing, so they are dropped (whitespace among them first becomes one space)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def text(value) -> str:
    """`value` as LaTeX text: on one line, every special character printed as itself."""
    line = " ".join(str(value).split())
    return _CONTROL.sub("", line).translate(_SPECIALS)
