"""A figure's caption: the text printed beside a figure, never inside it.

A figure job writes it next to its PDF as `<name>.caption.md`: the title in bold, then one
paragraph per part (what the panels show, how the lines are drawn, the settings, the
hypotheses measured on the data, the backend). The image keeps axes, legend and panel
letters only.
"""

from __future__ import annotations

from pathlib import Path

SUFFIX = ".caption.md"


def compose(title: str, *paragraphs: str) -> str:
    """The caption's Markdown: `title` in bold (its lines joined by '. '), then each
    non-empty paragraph."""
    lines = [" ".join(line.split()).rstrip(".:") for line in title.splitlines() if line.strip()]
    parts = [f"**{'. '.join(lines)}**" if lines else "", *paragraphs]
    return "\n\n".join(" ".join(p.split()) for p in parts if p.strip())


def is_caption(path) -> bool:
    return str(path).endswith(SUFFIX)


def write(path: Path | str, text: str) -> None:
    """Write the caption to `path`, atomically (a half-written caption never lies next to a
    figure)."""
    from attnbias.workflow.io import atomic_path

    with atomic_path(path) as tmp:
        Path(tmp).write_text(text.rstrip() + "\n", encoding="utf-8")
