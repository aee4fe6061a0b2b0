"""What a built PDF figure prints, read back from the file: its page size in inches and
the words on it (poppler's pdftotext), and the font sizes its text is set in (the `Tf`
operators of its content streams, which matplotlib writes Flate-compressed)."""

from __future__ import annotations

import re
import subprocess
import zlib
from pathlib import Path

SCRIPT_SHRINK = 0.7  # matplotlib's mathtext: sub- and superscripts at 0.7 of their base
_PAGE = re.compile(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]")
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_FONT_SIZE = re.compile(rb"/F\d+\s+([\d.]+)\s+Tf")


def page_inches(pdf) -> tuple[float, float]:
    width, height = _PAGE.search(Path(pdf).read_bytes()).groups()
    return float(width) / 72, float(height) / 72


def font_sizes(pdf) -> list[float]:
    """Every size (pt) a font is selected at in the PDF's content streams."""
    sizes = []
    for raw in _STREAM.findall(Path(pdf).read_bytes()):
        try:
            content = zlib.decompress(raw)
        except zlib.error:  # not Flate: an image or font program, no text operators
            continue
        sizes += [float(s) for s in _FONT_SIZE.findall(content)]
    return sizes


def body_sizes(sizes: list[float]) -> list[float]:
    """`sizes` less the sub- and superscripts: a size that is SCRIPT_SHRINK times (or its
    square) another size of the same figure."""
    used = set(sizes)

    def script(s):
        return any(
            abs(s - base * SCRIPT_SHRINK**k) < 0.01 for base in used for k in (1, 2) if base > s
        )

    return [s for s in sizes if not script(s)]


def words(pdf) -> list[str]:
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split()
