"""The claims table as files: Markdown (one compact table per result, under a summary
line), standalone HTML with every column, and LaTeX macros of every measured number."""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from attnbias.claims.measure import BURN_IN, R2_MIN
from attnbias.claims.rows import Claim, by_result

TITLE = "The paper's claims, measured"
HOW_TO_READ = (
    "Computed from the aggregate tables of this build, grouped by the paper's result. "
    "value: mean over seeds (smallest to largest); every seed must pass. Each row names the "
    "optimizer it measures; a result proved for another algorithm (Sec. 3: NGD and PS "
    "uncapped; Sec. 4: Eq. 10 with its step factors) reads 'comparison' and is not counted "
    "among the results that do or do not hold. A comparison of two methods is read over the "
    f"whole run after a burn-in of t_last/{BURN_IN}; a threshold that neither method "
    f"reaches, or a fit with R^2 below {R2_MIN:g}, reads 'undecided'. Consistency checks "
    "(near-tautologies) are outside the count. Where a constant was lost in extraction, the "
    "reference says so and tests the form. hypotheses: measured on the run's data; a verdict "
    "outside them says so. ln is the natural log."
)
COLUMNS = (
    "experiment",
    "claim",
    "where",
    "measured",
    "window",
    "value",
    "reference",
    "predicted (ratio)",
    "R^2",
    "hypotheses",
    "algorithm",
    "verdict",
)
COMPACT = ("claim", "where", "value", "verdict")  # the Markdown's columns; CSV and HTML: all


def summary_line(table: pd.DataFrame) -> str:
    """The counts by category (Claim.category): covered and within hypotheses (hold / do
    not hold / undecided), comparisons, outside hypotheses; consistency checks apart."""
    rows = [Claim(**{k: r[k] for k in Claim.__dataclass_fields__}) for _, r in table.iterrows()]
    covered = [r for r in rows if r.category == "covered"]
    count = {
        c: sum(r.category == c for r in rows) for c in ("comparison", "outside", "consistency")
    }
    outcomes = {
        o: sum(r.outcome == o for r in covered) for o in ("holds", "does not hold", "undecided")
    }
    return (
        f"{len(rows)} rows over {table['result'].nunique()} results. On the algorithms and "
        f"data of their hypotheses: {outcomes['holds']} hold, {outcomes['does not hold']} do "
        f"not hold, {outcomes['undecided']} undecided; {count['comparison']} comparisons (an "
        f"algorithm the result is not proved for); {count['outside']} on data outside the "
        f"hypotheses; {count['consistency']} consistency checks (outside the count)."
    )


def _display_rows(table: pd.DataFrame):
    """Each claim as the cells of COLUMNS, as text; and whether it holds."""
    for r in table.itertuples():
        value = r.value_text or f"{r.mean:.4g} ({r.low:.4g} to {r.high:.4g})"
        predicted = "" if math.isnan(r.predicted) else f"{r.predicted:.4g} ({r.ratio:.3g})"
        if not math.isnan(r.window_ratio):
            predicted += f"; window ratio {r.window_ratio:.3g}"
        r2 = "" if math.isnan(r.r2) else f"{r.r2:.4f}"
        cells = (
            r.experiment,
            r.claim,
            r.source,
            r.quantity,
            r.window,
            value,
            r.reference,
            predicted,
            r2,
            r.hypotheses,
            r.algorithm,
            r.verdict,
        )
        yield r.result, cells, bool(r.holds or r.undecided or r.kind == "consistency")


def _groups(table: pd.DataFrame):
    """Rows grouped by result, in order of first appearance."""
    current, group = None, []
    for result, cells, ok in _display_rows(table):
        if result != current and group:
            yield current, group
            group = []
        current = result
        group.append((cells, ok))
    if group:
        yield current, group


def markdown_cell(text: str) -> str:
    """Text safe in a Markdown table cell: | and <...> escaped, as html.escape does."""
    return html.escape(str(text), quote=False).replace("|", "\\|")


def to_markdown(table: pd.DataFrame, backend: str = "") -> str:
    """The claims as compact Markdown tables (COMPACT), one per result, under a summary."""
    table = by_result(table)
    lines = [f"# {TITLE}", "", f"**{summary_line(table)}**", "", HOW_TO_READ, ""]
    if backend:
        lines += [f"The runs trained on {backend}.", ""]
    lines += ["Every column (measured quantity, window, reference, R^2, hypotheses, algorithm) "
              "is in claims.csv and claims.html.", ""]  # fmt: skip
    for result, group in _groups(table):
        lines += [
            f"## {result}",
            "",
            "| " + " | ".join(COMPACT) + " |",
            "|" + "---|" * len(COMPACT),
        ]
        for cells, ok in group:
            cell = dict(zip(COLUMNS, cells, strict=True))
            cell["where"] = f"{cell['experiment']}; {cell['where']}"  # the paper's and ours
            shown = [markdown_cell(cell[c]) for c in COMPACT]
            if not ok:
                shown[-1] = f"**{shown[-1]}**"
            lines.append("| " + " | ".join(shown) + " |")
        lines.append("")
    return "\n".join(lines)


def to_html(table: pd.DataFrame, backend: str = "") -> str:
    """The same tables with every column, as a standalone HTML page (shown in the report)."""
    table = by_result(table)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for result, group in _groups(table):
        body.append(f"<h2>{html.escape(result)}</h2>\n<table><thead><tr>{head}</tr></thead><tbody>")
        for cells, ok in group:
            tds = [f"<td>{html.escape(str(c))}</td>" for c in cells[:-1]]
            verdict = html.escape(cells[-1])
            verdict = verdict if ok else f"<strong>{verdict}</strong>"
            body.append("<tr>" + "".join(tds) + f"<td>{verdict}</td></tr>")
        body.append("</tbody></table>")
    style = (
        "body{font-family:sans-serif;font-size:13px;margin:1em}"
        "table{border-collapse:collapse;margin-bottom:1em}th,td{border:1px solid #ccc;"
        "padding:3px 6px;vertical-align:top;text-align:left}th{background:#eee}"
    )
    provenance = f"<p>The runs trained on {html.escape(backend)}.</p>\n" if backend else ""
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(TITLE)}</title>"
        f"<style>{style}</style></head><body>\n<h1>{html.escape(TITLE)}</h1>\n"
        f"<p><strong>{html.escape(summary_line(table))}</strong></p>\n"
        f"<p>{html.escape(HOW_TO_READ)}</p>\n{provenance}" + "\n".join(body) + "\n</body></html>\n"
    )


_DIGITS = "Zero One Two Three Four Five Six Seven Eight Nine".split()


def macro_name(*parts: str) -> str:
    """A LaTeX command name from free text: letters only, CamelCase, digits spelled out."""
    words = re.findall(r"[A-Za-z]+|\d", " ".join(parts))
    return "".join(_DIGITS[int(w)] if w.isdigit() else w[:1].upper() + w[1:] for w in words)


def to_latex(table: pd.DataFrame) -> str:
    """One \\newcommand per measured number (mean, low, high, ratio), so a paper can cite them."""
    lines = [f"% {TITLE}: generated by the attnbias workflow from this build's tables"]
    seen = set()
    for r in table.itertuples():
        values = {"Mean": r.mean, "Low": r.low, "High": r.high, "Ratio": r.ratio}
        for suffix, value in values.items():
            if isinstance(value, float) and math.isnan(value):
                continue
            name = "claim" + macro_name(r.key, suffix)
            if name in seen:
                raise ValueError(f"two claims rows give the LaTeX macro \\{name}")
            seen.add(name)
            text = "not reached" if math.isinf(value) else f"{value:.4g}"
            lines.append(f"\\newcommand{{\\{name}}}{{{text}}}")
        verdict = "claim" + macro_name(r.key, "Verdict")
        lines.append(f"\\newcommand{{\\{verdict}}}{{{r.verdict}}}")
    return "\n".join(lines) + "\n"
