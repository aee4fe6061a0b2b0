"""The notes of a metric figure's caption: how its lines are drawn, what its panels draw
beyond them, the optimizers' settings and the backend that trained the runs (the caption's
paragraphs around them: caption.compose)."""

from __future__ import annotations

import math

import pandas as pd

from attnbias.figures.references import references_note
from attnbias.optim import cap_rule
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


CAP_KEYS = ("max_step", "eta_max")  # NGD's (and NGD-mom's), PS's: App. C's two caps


def caps_note(table: pd.DataFrame, optimizers: dict, labels: dict) -> str:
    """The caption's words on the runs' step caps (App. C's; the paper's values were lost):
    the rule that chose them, and where each bound, read off each run's largest step over
    every step (max_log_step_W); "" where no run has a cap."""
    parts = []
    for name, settings in optimizers.items():
        key = next((k for k in CAP_KEYS if settings.get(k) is not None), None)
        rows = table[(table["optimizer"] == name) & (table["metric"] == "max_log_step_W")]
        if key is None or rows.empty:
            continue
        cap = float(settings[key])
        steps = rows.pivot(index="iteration", columns="seed", values="value").sort_index()
        bound = cap_rule.binding(steps, cap)
        largest = steps.iloc[-1].to_numpy() / math.log(10)
        if pd.isna(bound).all():
            where = f"never bound (largest step 10^{largest.min():.2f} to 10^{largest.max():.2f})"
        else:
            low, high = int(pd.Series(bound).min()), int(pd.Series(bound).max())
            where = f"bound by t = {low:,}" + ("" if low == high else f" to {high:,}")
            if pd.isna(bound).any():
                where += f" on {int((~pd.isna(bound)).sum())} of {len(bound)} seeds"
        exponent = round(math.log10(cap)) if cap > 0 else None
        text = f"1e{exponent}" if exponent is not None and cap == 10.0**exponent else f"{cap:g}"
        parts.append(f"{labels.get(name, name)}'s {key} {text} {where}")
    if not parts:
        return ""
    return (
        "Step caps (App. C's; the paper's values were lost; ours by one rule that reads only "
        "step sizes: each cap the smallest power of ten its method's uncapped step never "
        "reaches at any step within the horizon, else float64's largest power of ten, 1e308; "
        "attnbias.optim.cap_rule, docs/regime.md): " + "; ".join(parts) + "."
    )
