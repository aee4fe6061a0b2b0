"""The claims table as files: Markdown (one compact table per result, under a summary
line), standalone HTML with every column, CSV (every column, no cell a spreadsheet
evaluates) and LaTeX macros of every measured number. Each format escapes config text for
its reader: workflow.markdown, html.escape, workflow.csvcells, workflow.latex."""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.claim import by_result
from attnbias.claims.measure import BURN_IN, R2_MIN
from attnbias.claims.summary import (
    as_claims,
    beyond_rows,
    beyond_summary_line,
    optional_line,
    robustness_line,
    summary_line,
)
from attnbias.workflow import csvcells, latex, markdown

TITLE = "The paper's claims, measured"
HOW_TO_READ = (
    "Computed from the aggregate tables of this build: every checkable statement of the "
    "paper is an entry of a registry (listed at the end), measured on each run its layout "
    "allows, grouped by the paper's result. value: what was measured, in words, over the "
    "seeds; every seed must pass. constants: the constants of ours (the paper's were lost) "
    "that the verdict may depend on: every number in the settings of the optimizers the row "
    "reads, and the horizon for a race; robustness: over which values of each the verdict "
    "stays the same (the values tried named), for the constants the build measured: those "
    "of the default build (fig2's caps) in every build, all of them where "
    "results/claims_robustness.md is built. Which runs a statement "
    "reads is decided by their algorithm (the optimizer's rule and settings), never by "
    "their config names; a run bit-identical to another's gives its rows once, and a "
    "statement about the data reads bit-identical data once. A statement "
    "made for other algorithms or data (Sec. 3: NGD and PS uncapped; Sec. 4: Eq. 10 with "
    "its step factors; a remark about a figure: that figure's settings; Sec. 3.3's races: "
    "its two-token example) reads 'comparison' and is not counted. The hypotheses are "
    "those of the section's proofs "
    "(Sec. 3: Ass. 1 and 2; Sec. 4: Cond. 1 with every sample a u-SVM support vector, for "
    "Thm. 2 to 4 and Lem. 11 alike), measured on the run's data; a verdict outside them "
    "says so and is not counted. A row can be both: a comparison (made for another "
    "algorithm) on data outside the hypotheses; its verdict names both, and it is counted "
    "once, as outside the hypotheses. Verdict words by test: a bound whose constant was lost is "
    "'consistent with the bound' or 'undecided: slower than the bound's rate' (with the "
    "slope, the window's span and where the trend would cross), never 'does not hold'; a "
    "race shows both methods' numbers and the margin at the last t (read over the whole run "
    f"after a burn-in of t_last/{BURN_IN}); a threshold of ours states by what factor it "
    "would have to move to flip; a remark shows its ratio and tolerance. A fit with R^2 "
    f"below {R2_MIN:g} reads 'undecided'. Consistency checks (near-tautologies, and every row "
    "that cannot read 'does not hold': a bound whose constant was lost, a data check, an "
    "asymptotic reading; the verdict says why) and statements not measured here are outside "
    "the count. A verdict within 1% of its threshold says so. Only failures that count are "
    "bold. "
    "ln is the natural log."
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
    "constants",
    "robustness",
    "verdict",
)
# the Markdown's columns; CSV and HTML: all
COMPACT = ("claim", "where", "value", "constants", "robustness", "verdict")


BEYOND_TITLE = "Beyond the paper: which max-margin does an optimizer find?"
BEYOND_HOW_TO_READ = (
    "Not the paper's statements, and not in its counts above: published results on the "
    "implicit bias of other optimizers (a registry of their own, listed at the end), each "
    "saying what it was proved for. A result proved for linear models only is a conjecture "
    "test on attention; a row that does not hold is a finding (the optimizer does not find "
    "its geometry's margin on attention), reported with its numbers. Measured on the "
    "geometry experiments (results/geometry.pdf) where this build holds their tables: for "
    "each run, at the last logged iteration on every seed, whether W_t aligns more with its "
    "expected norm's SVM solution than with any other norm's, and whether its normalized "
    "margin in that norm reaches a fraction of the optimum 1/||W*||: short of it, undecided "
    "at this horizon only where the margin is rising at the horizon on every seed (above its "
    "value at the previous logged t and at t/10), a finding otherwise. A statement of ours "
    "that nobody published (a trained decoder keeps the optimal tokens) is counted apart."
)


def _display_rows(table: pd.DataFrame):
    """Each claim as the cells of COLUMNS, as text; and whether it is shown plain (all but
    the failures that count: covered, within hypotheses, does not hold)."""
    for r, claim in zip(table.itertuples(), as_claims(table), strict=True):
        value = r.value_text or (
            "" if math.isnan(r.mean) else f"{r.mean:.4g} ({r.low:.4g} to {r.high:.4g})"
        )
        predicted = "" if math.isnan(r.predicted) else f"{r.predicted:.4g} ({r.ratio:.3g})"
        if not math.isnan(r.window_ratio):
            predicted += f"; window ratio {r.window_ratio:.3g}"
        r2 = "" if math.isnan(r.r2) else f"{r.r2:.4f}"
        cells = (
            f"{r.experiment}, on {r.data}" if r.data else r.experiment,
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
            getattr(r, "constants", ""),  # where the claims job added them (robustness.named)
            getattr(r, "robustness", ""),  # where the claims job added it (claims.robustness)
            r.verdict,
        )
        failure = claim.category == "covered" and claim.outcome == "does not hold"
        yield r.result, cells, not failure


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


def registry_lines(
    table: pd.DataFrame, statements=None, title="The registry of statements"
) -> list[str]:
    """The registry of statements (default: the paper's) as a Markdown table: each entry's
    words, where it stands, what it is made for, its test, and what this build measured."""
    from attnbias.claims.statements import STATEMENTS

    lines = [
        f"## {title}",
        "",
        "| statement | where | made for | data | test | this build |",
        "|---|---|---|---|---|---|",
    ]
    for st in STATEMENTS if statements is None else statements:
        mine = table[table["statement"] == st.key]
        if (mine["kind"] == "not measured").all():
            measured = f"not measured: {st.missing}"
        else:
            # the experiments' names, without their data and twins
            runs = dict.fromkeys(e.split(" (")[0].split(": ")[0] for e in mine["experiment"])
            measured = f"{len(mine)} row{'s' * (len(mine) > 1)} on {', '.join(runs)}"
        cells = (f"'{st.quote}'", st.where, ", ".join(st.covers or ("any",)), st.data, st.kind,
                 measured)  # fmt: skip
        lines.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
    return lines + [""]


def markdown_cell(text: str) -> str:
    """Text safe in a Markdown table cell (| escaped with the rest; a config label
    "[x](javascript:...)" stays text): attnbias.workflow.markdown, as the captions."""
    return markdown.text(text)


def to_markdown(table: pd.DataFrame, backend: str = "", optional=(), seeds: str = "") -> str:
    """The claims as compact Markdown tables (COMPACT), one per result, under a summary;
    the results beyond the paper in a section of their own, counted apart. `optional`: the
    experiments of optional targets (optional_line); `seeds`: the seeds of the rows beyond
    the paper, in words (claims.beyond.seeds_sentence)."""
    table = by_result(table)
    beyond = beyond_rows(table)
    lines = _markdown_part(table[~beyond], backend, optional)
    if beyond.any():
        lines += _markdown_beyond(table[beyond], seeds)
    return "\n".join(lines)


def _markdown_beyond(table: pd.DataFrame, seeds: str = "") -> list[str]:
    from attnbias.claims.beyond import BEYOND

    lines = [f"# {BEYOND_TITLE}", "", beyond_summary_line(table), ""]
    lines += [markdown_cell(seeds), ""] if seeds else []
    robust = robustness.summary(table, "we chose")  # the geometry runs' steps, Adam's beta2, eps
    lines += [markdown_cell(robust), ""] if robust else []
    lines += [BEYOND_HOW_TO_READ, ""]
    lines += markdown_groups(table)
    return lines + registry_lines(table, BEYOND, "The registry of results beyond the paper")


def _markdown_part(table: pd.DataFrame, backend: str, optional=()) -> list[str]:
    lines = [f"# {TITLE}", "", f"**{summary_line(table)}**", ""]
    robust = robustness_line(table)
    lines += [f"**{markdown_cell(robust)}**", ""] if robust else []
    extra = optional_line(table, optional)
    lines += [markdown_cell(extra), ""] if extra else []
    lines += [HOW_TO_READ, ""]
    if backend:
        lines += [f"The runs trained on {backend}.", ""]
    lines += ["Every column (measured quantity, window, reference, R^2, hypotheses, algorithm) "
              "is in claims.csv and claims.html.", ""]  # fmt: skip
    lines += markdown_groups(table)
    if "study" not in set(table["statement"]):  # the study's own table lists no registry
        lines += registry_lines(table)
    return lines


def _compact_columns(table: pd.DataFrame) -> tuple[str, ...]:
    """COMPACT, less the columns no row of `table` fills: robustness where no cell is
    measured (no robustness table: the summary line says why once, not in every row), the
    constants where no row names one (robustness.named)."""
    cells = robustness.cells(table)
    unfilled = set()
    if (cells.eq("") | robustness.unmeasured(cells)).all():
        unfilled.add("robustness")
    if "constants" not in table or table["constants"].fillna("").eq("").all():
        unfilled.add("constants")
    return tuple(c for c in COMPACT if c not in unfilled)


def markdown_groups(table: pd.DataFrame) -> list[str]:
    """The claims `table` as markdown: one `## result` heading and table per result, in the
    compact columns it fills (claims.md's body; claims.neighbours_write's too)."""
    lines = []
    compact = _compact_columns(table)
    for result, group in _groups(table):
        lines += [
            f"## {result}",
            "",
            "| " + " | ".join(compact) + " |",
            "|" + "---|" * len(compact),
        ]
        for cells, ok in group:
            cell = dict(zip(COLUMNS, cells, strict=True))
            cell["where"] = f"{cell['experiment']}; {cell['where']}"  # the paper's and ours
            shown = [markdown_cell(cell[c]) for c in compact]
            if not ok:
                shown[-1] = f"**{shown[-1]}**"
            lines.append("| " + " | ".join(shown) + " |")
        lines.append("")
    return lines


def to_html(table: pd.DataFrame, backend: str = "", optional=(), seeds: str = "") -> str:
    """The same tables with every column, as a standalone HTML page (shown in the report)."""
    table = by_result(table)
    beyond = beyond_rows(table)
    body = _html_groups(table[~beyond])
    if beyond.any():
        summary = html.escape(beyond_summary_line(table[beyond]))
        how = html.escape(BEYOND_HOW_TO_READ)
        said = f"<p>{html.escape(seeds)}</p>" if seeds else ""
        body += [f"<h1>{html.escape(BEYOND_TITLE)}</h1>", f"<p><strong>{summary}</strong></p>",
                 said, f"<p>{how}</p>", *_html_groups(table[beyond])]  # fmt: skip
    table = table[~beyond]
    style = (
        "body{font-family:sans-serif;font-size:13px;margin:1em}"
        "table{border-collapse:collapse;margin-bottom:1em}th,td{border:1px solid #ccc;"
        "padding:3px 6px;vertical-align:top;text-align:left}th{background:#eee}"
    )
    provenance = f"<p>The runs trained on {html.escape(backend)}.</p>\n" if backend else ""
    extra = optional_line(table, optional)
    provenance = (f"<p>{html.escape(extra)}</p>\n" if extra else "") + provenance
    header = [summary_line(table), robustness_line(table)]
    bold = "".join(f"<p><strong>{html.escape(line)}</strong></p>\n" for line in header if line)
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(TITLE)}</title>"
        f"<style>{style}</style></head><body>\n<h1>{html.escape(TITLE)}</h1>\n{bold}"
        f"<p>{html.escape(HOW_TO_READ)}</p>\n{provenance}" + "\n".join(body) + "\n</body></html>\n"
    )


def _html_groups(table: pd.DataFrame) -> list[str]:
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
    return body


_DIGITS = "Zero One Two Three Four Five Six Seven Eight Nine".split()


def macro_name(*parts: str) -> str:
    """A LaTeX command name from free text: letters only, CamelCase, digits spelled out."""
    words = re.findall(r"[A-Za-z]+|\d", " ".join(parts))
    return "".join(_DIGITS[int(w)] if w.isdigit() else w[:1].upper() + w[1:] for w in words)


def to_csv(table: pd.DataFrame) -> pd.DataFrame:
    """The table as claims.csv holds it: no text cell a spreadsheet would evaluate
    (workflow.csvcells; csvcells.read gives the table back)."""
    return csvcells.frame(table)


def to_latex(table: pd.DataFrame) -> str:
    """One \\newcommand per measured number (mean, low, high, ratio), so a paper can cite
    them, and one per verdict: names of letters only (macro_name), text escaped
    (workflow.latex: the verdicts carry config labels), numbers as they are."""
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
        lines.append(f"\\newcommand{{\\{verdict}}}{{{latex.text(r.verdict)}}}")
    return "\n".join(lines) + "\n"
