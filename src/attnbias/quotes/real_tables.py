"""docs/real-data.md's tables, generated from a build's real-data tables so that no number of
them is typed by hand (each an optional target's: "not built here" without it):

- a sweep's (results/<sweep>_final.csv, realdata.final_values): per setting its probe area,
  final train loss, test accuracy and cap share on the tuning seed, the tuning rule's
  choice in bold, and whether the figure runs that setting;
- a figure's end points (results/<figure>/metrics.parquet): per optimizer over the
  reported seeds, mean (min to max), and at how many steps its cap bound;
- a figure's races (results/claims.csv, the rows claims.paired_race writes): the paired
  difference of the probe-loss areas, the one-sided p and the verdict.

    python -m attnbias.quotes write
"""

from __future__ import annotations

import re

import numpy as np

from attnbias.optim import rules
from attnbias.quotes.build import Build, Unbuilt
from attnbias.quotes.numbers import NUMBER
from attnbias.quotes.quote import Section, Source, markers
from attnbias.realdata import cap_bound
from attnbias.realdata.tuning import probe_area

RULE_ORDER = ("sgd", "sngd", "sps", "adam")
_SETTING = re.compile(r"=([0-9.e+-]+)")


def spread(values, fmt: str = ".3f") -> str:
    """Values over seeds as "mean (min to max)", or one value where they all write alike."""
    values = np.asarray(values, dtype=float)
    low, high, mean = (f"{v:{fmt}}" for v in (values.min(), values.max(), values.mean()))
    return low if low == high else f"{mean} ({low} to {high})"


def _share(value: float) -> str:
    return "no cap" if not np.isfinite(value) else f"{value:.0%}"


def sweep_table(b: Build, sweep: str, figure: str) -> str:
    """One row per setting of `sweep` (its _final.csv, on the tuning seed), grouped by update
    rule; the tuning rule's choice in bold; "yes" where `figure` runs that setting."""
    table = b.final_table(sweep)
    runs = set(zip(b.final_table(figure)["rule"], b.final_table(figure)["settings"], strict=True))
    lines = [
        "| rule | setting | probe area | final train loss | test accuracy | cap bound | "
        "in the figure |",
        "|---|---|---|---|---|---|---|",
    ]
    order = {rule: i for i, rule in enumerate(RULE_ORDER)}
    # by rule, then by the setting's numbers in order (SPS: c, then its cap eta_max)
    numbers = table["settings"].map(lambda text: tuple(map(float, _SETTING.findall(text))))
    ranked = table.assign(_order=table["rule"].map(order), _numbers=numbers)
    ranked = ranked.sort_values(["_order", "_numbers"], kind="stable")
    for row in ranked.itertuples():
        bold = "**" if row.best_of_rule else ""
        name = rules.get(row.rule).display_name
        used = "yes" if (row.rule, row.settings) in runs else ""
        lines.append(
            f"| {name} | {bold}{row.settings}{bold} | {bold}{row.probe_area:.4f}"
            f"{bold} | {row.final_train_loss:.3f} | {row.final_test_accuracy:.3f} | "
            f"{_share(row.cap_bound_share)} | {used} |"
        )
    return "\n".join(lines)


def results_table(b: Build, figure: str) -> str:
    """One row per optimizer of `figure`, over its reported seeds: final train loss and test
    accuracy at the last step, the probe area, and the steps at which a cap bound."""
    metrics, finals = b.metrics(figure), b.final_table(figure)
    seeds = b.seeds(figure)
    lines = [
        f"| optimizer | setting | final train loss | test accuracy | probe area | cap bound "
        f"(steps, seeds {seeds[0]} to {seeds[-1]}) |",
        "|---|---|---|---|---|---|",
    ]
    for row in finals.itertuples():
        name = row.optimizer
        counts = cap_bound.bound_steps(metrics, name)
        bound = "no cap" if counts.empty else f"{counts['bound'].sum()} of {counts['steps'].sum()}"
        lines.append(
            f"| {row.label} | {row.settings} | {spread(b.final(figure, name, 'train_loss'))} | "
            f"{spread(b.final(figure, name, 'test_accuracy'))} | "
            f"{spread(probe_area(metrics, name).to_numpy(), '.4f')} | {bound} |"
        )
    return "\n".join(lines)


def race_p(value_text: str) -> str:
    """The one-sided p a race row's value states ("" where it has none: one seed)."""
    found = re.search(r"one-sided p = (" + NUMBER + ")", value_text)
    return found[1] if found else ""


def races_table(b: Build, figure: str) -> str:
    """The claims table's races on `figure`'s runs: claim, paired difference of the
    probe-loss areas (mean (min to max) over seeds), one-sided p, verdict."""
    claims = b.claims()
    mine = claims[claims["key"].str.startswith(f"{figure} ") & (claims["kind"] == "race")]
    if mine.empty:
        raise Unbuilt(f"the race rows of {figure} ({b.results / 'claims.csv'})")
    lines = [
        "| race | paired difference of the areas | one-sided p | verdict |",
        "|---|---|---|---|",
    ]
    for row in mine.itertuples():
        low, high = f"{row.low:.4f}", f"{row.high:.4f}"
        difference = low if low == high else f"{row.mean:.4f} ({low} to {high})"
        said = isinstance(row.detail, str) and row.detail and row.detail not in row.verdict
        detail = f"; {row.detail}" if said else ""  # where the verdict does not say it
        lines.append(
            f"| {row.claim} | {difference} | {race_p(str(row.value_text))} | "
            f"{row.verdict}{detail} |"
        )
    return "\n".join(lines)


def section(name: str, what: str, table, target: str) -> Section:
    """A generated section of docs/real-data.md: `table(build)` between its marker lines."""
    start, end = markers(name)
    return Section(start, end, Source(what, lambda b: "\n".join([start, table(b), end]), target))


def sections(figure: str, sweep: str) -> tuple[Section, ...]:
    """The three tables of one figure and its sweep."""
    target = f"results/{figure}.pdf"
    return (
        section(
            f"{sweep} table",
            f"{sweep}'s settings on the tuning seed, from results/{sweep}_final.csv",
            lambda b: sweep_table(b, sweep, figure),
            f"results/{sweep}_final.csv",
        ),
        section(
            f"{figure} table",
            f"{figure}'s end points over its seeds, from results/{figure}/metrics.parquet",
            lambda b: results_table(b, figure),
            target,
        ),
        section(
            f"{figure} races",
            f"{figure}'s races, from results/claims.csv",
            lambda b: races_table(b, figure),
            target,
        ),
    )
