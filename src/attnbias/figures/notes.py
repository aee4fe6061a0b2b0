"""The notes of a metric figure's caption: how its lines are drawn, what its panels draw
beyond them, the optimizers' settings and the backend that trained the runs (the caption's
paragraphs around them: caption.compose)."""

from __future__ import annotations

import pandas as pd

from attnbias.figures.references import references_note
from attnbias.workflow.provenance import trained_on


def lines_text(table: pd.DataFrame) -> str:
    """How the lines and bands of a figure are drawn, for its caption."""
    seeds = sorted(set(table.groupby("optimizer")["seed"].nunique()))
    if seeds == [1]:
        return "Lines: a single run."
    counts = ", ".join(str(v) for v in seeds)
    return f"Lines: mean over {counts} seeds (geometric on log axes); bands: min to max over seeds."


def notes(
    table: pd.DataFrame,
    legend: dict,
    note: str = "",
    references=(),
    late_starts=(),
    panel_notes=(),
) -> str:
    """The drawing's notes: what the lines are, the reference rates drawn (`references`:
    their line styles), panels whose curves begin after t = 1 (`late_starts`: (letter, t)),
    what the panels draw differently (`panel_notes`), the optimizers' settings and `note`
    (the hypotheses measured, the backend)."""
    parts = [lines_text(table), references_note(references)]
    by_start: dict[int, list[str]] = {}
    for panel_letter, start in late_starts:
        by_start.setdefault(start, []).append(panel_letter)
    for start, letters in by_start.items():
        verb = "begins" if len(letters) == 1 else "begin"
        parts.append(
            f"{', '.join(letters)} {verb} at t = {start}: before, the value is 0, which a log "
            "axis cannot show."
        )
    parts.extend(panel_notes)
    parts.append(
        "Optimizers: " + "; ".join(f"{label}: {text}" for label, text in legend.values()) + "."
    )
    parts.append(note)
    return " ".join(p for p in parts if p).strip()


def backend_note(provenance: dict) -> str:
    """Which implementation trained the runs, from the provenance (as its files record)."""
    trained = trained_on(provenance.get("training", {}))
    return f"Trained on {trained}." if trained else ""
