"""A figure's caption: the text printed beside a figure, never inside it.

A figure job writes it next to its PDF as `<name>.caption.md`: the title in bold, then one
paragraph per part (what the panels show, how the lines are drawn, the settings, the
hypotheses measured on the data, the backend). The image keeps axes, legend and panel
letters only.
"""

from __future__ import annotations

from pathlib import Path

from attnbias.workflow import markdown

SUFFIX = ".caption.md"


def compose(title: str, *paragraphs: str) -> str:
    """The caption's Markdown: `title` in bold (its lines joined by '. '), then each
    non-empty paragraph, all of it plain text (config titles and labels among it: no link,
    image or other markup can start in them; attnbias.workflow.markdown)."""
    lines = [" ".join(line.split()).rstrip(".:") for line in title.splitlines() if line.strip()]
    head = [f"**{markdown.text('. '.join(lines))}**"] if lines else []
    return "\n\n".join(head + [markdown.text(p) for p in paragraphs if p.strip()])


def is_caption(path) -> bool:
    return str(path).endswith(SUFFIX)


def write(path: Path | str, text: str) -> None:
    """Write the caption to `path`, atomically (a half-written caption never lies next to a
    figure)."""
    from attnbias.workflow.store import atomic_path

    with atomic_path(path) as tmp:
        Path(tmp).write_text(text.rstrip() + "\n", encoding="utf-8")
