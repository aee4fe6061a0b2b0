"""Robustness of the verdicts to the constants the paper lost and we chose (the config's
`claims_robustness`; docs/claims.md, column "robustness").

For each constant, attnbias.studies.robustness_points measures the claims table at a few
values around ours (ours among them): `points`, one row per row of the table and value.
Here each counted row of ours (category covered, comparison or outside) is compared by its
`key` with its rows at the other values: it depends on the constant if its outcome or its
measured numbers change. Such a row gets a range text ("holds for eta in [0.3, 1]; does not
hold at 0.1 (4 of 5 seeds)") and is fragile if its outcome flips at a value inside the
plausible range the config gives, with its reason, for the constant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from attnbias.claims import real_constants

COUNTED = ("covered", "comparison", "outside")  # the categories whose verdicts are counted
CHANGES = ("outcome", "mean", "low", "high", "value_text")  # what a depending row changes
COLUMNS = ("key", "experiment", "claim", "constant", "label", "ours", "values", "outcomes",
           "range", "plausible", "fragile")  # fmt: skip
NOT_MEASURED = "not measured"  # the outcome at a value where the row is not measured
UNMEASURED = "robustness_unmeasured"  # the column naming the constants a partial table lacks


@dataclass(frozen=True)
class Constant:
    """A constant of ours (an entry of the config's `claims_robustness.constants`): its
    name, the `label` the texts use, our value, the values tried (ours among them), the
    plausible range [low, high] and why, and the kinds of test (claim.KINDS) it is read on
    (None: every kind)."""

    name: str
    label: str
    ours: float
    values: tuple[float, ...]
    plausible: tuple[float, float]
    why: str = ""
    kinds: tuple[str, ...] | None = None

    @classmethod
    def from_params(cls, name: str, params: dict) -> Constant:
        kinds = params.get("kinds")
        return cls(name, params["label"], float(params["ours"]),
                   tuple(sorted(float(v) for v in params["values"])),
                   tuple(float(v) for v in params["plausible"]), params.get("why", ""),
                   tuple(kinds) if kinds else None)  # fmt: skip

    def inside(self, value: float) -> bool:
        return self.plausible[0] <= value <= self.plausible[1]

    @property
    def plausible_text(self) -> str:
        return f"[{number(self.plausible[0])}, {number(self.plausible[1])}]"


def number(value: float) -> str:
    """A value as the texts show it: 0.1, 30000, 1e5, 1e150, 2.5e-5."""
    if value and not 1e-3 <= abs(value) < 1e5:
        mantissa, exponent = f"{value:.3e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{value:g}"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def _outcome_text(row) -> str:
    """A row's outcome at a value, with the number of seeds that give it alone where it
    differs from ours (attnbias.studies.robustness_points)."""
    if row is None:
        return NOT_MEASURED
    if row["seeds_alike"] >= 0:
        return f"{row['outcome']} ({row['seeds_alike']} of {row['seeds']} seeds)"
    return row["outcome"]


def range_text(constant: Constant, outcomes: dict[float, str], texts: dict[float, str]) -> str:
    """Over which values the outcome stays ours: "holds for eta in [0.3, 1]; does not hold
    at 0.1 (4 of 5 seeds)". `outcomes`: value -> outcome; `texts`: value -> its words."""
    values = sorted(outcomes)
    at = values.index(constant.ours)
    low = high = at
    while low > 0 and outcomes[values[low - 1]] == outcomes[constant.ours]:
        low -= 1
    while high < len(values) - 1 and outcomes[values[high + 1]] == outcomes[constant.ours]:
        high += 1
    label, ours = constant.label, outcomes[constant.ours]
    if low == high:
        parts = [f"{ours} at {label} = {number(constant.ours)} only"]
    else:
        parts = [f"{ours} for {label} in [{number(values[low])}, {number(values[high])}]"]
    others: dict[str, list[str]] = {}
    for value in values[:low] + values[high + 1 :]:
        others.setdefault(outcomes[value], []).append(value)
    for outcome, found in others.items():
        at_values = ", ".join(
            number(v) + texts[v].removeprefix(outcome) for v in found
        )  # "0.1 (4 of 5 seeds)"
        parts.append(f"{outcome} at {at_values}")
    return "; ".join(parts)


def compare(constant: Constant, points: pd.DataFrame) -> pd.DataFrame:
    """The counted rows of ours that depend on `constant` (COLUMNS), from its `points`
    (attnbias.studies.robustness_points.COLUMNS: every row at every value)."""
    by_value = {v: table.set_index("key") for v, table in points.groupby("value")}
    missing = [v for v in constant.values if v not in by_value]
    if missing:
        raise ValueError(f"the points of {constant.name} lack the values {missing}; rebuild them")
    ours = by_value[constant.ours]
    counted = ours["category"].isin(COUNTED)
    if constant.kinds:
        counted &= ours["kind"].isin(constant.kinds)
    out = []
    for key, base in ours[counted].iterrows():
        rows = {v: _row(by_value[v], key) for v in constant.values}
        changed = any(
            row is None or not all(_same(row[c], base[c]) for c in CHANGES) for row in rows.values()
        )
        if not changed:
            continue
        outcomes = {v: NOT_MEASURED if r is None else r["outcome"] for v, r in rows.items()}
        texts = {v: _outcome_text(r) for v, r in rows.items()}
        flips = [v for v in constant.values if outcomes[v] != base["outcome"]]
        out.append(
            {
                "key": key,
                "experiment": base["experiment"],
                "claim": base["claim"],
                "constant": constant.name,
                "label": constant.label,
                "ours": constant.ours,
                "values": ", ".join(number(v) for v in constant.values),
                "outcomes": ", ".join(texts[v] for v in constant.values),
                "range": range_text(constant, outcomes, texts),
                "plausible": constant.plausible_text,
                "fragile": any(constant.inside(v) for v in flips),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


def _row(table: pd.DataFrame, key: str):
    return table.loc[key] if key in table.index else None


def cell(row) -> str:
    """One constant's words in a row's robustness cell: its value, the range, the values
    tried, and whether the verdict is fragile (flips inside the plausible range)."""
    text = f"{row['label']} = {number(row['ours'])} (ours): {row['range']} (tried: {row['values']})"
    if row["fragile"]:
        text += f"; FRAGILE: flips inside the plausible range {row['plausible']}"
    return text


def annotate(
    table: pd.DataFrame, robustness: pd.DataFrame | None, absent: str = "", unmeasured=None
) -> pd.DataFrame:
    """The claims `table` with the columns `robustness` (each constant the row depends on,
    in words; "" where none does) and `fragile`. Without a robustness table, every counted
    row's cell reads "not measured: <absent>" (the reason). `unmeasured`: where the table
    measures some constants only (the default build's), (the others' names, how to measure
    them), kept for the summary line (column UNMEASURED)."""
    table = table.copy()
    if unmeasured and unmeasured[0]:
        names, hint = unmeasured
        table[UNMEASURED] = f"{', '.join(names)} not measured: {hint}"
    counted = table["category"].isin(COUNTED)
    if robustness is None:
        table["robustness"] = [f"{NOT_MEASURED}: {absent}" if c else "" for c in counted]
        table["fragile"] = False
        return table
    cells: dict[str, list[str]] = {}
    for _, row in robustness.iterrows():
        cells.setdefault(row["key"], []).append(cell(row))
    fragile = set(robustness.loc[robustness["fragile"].astype(bool), "key"])
    rows = list(zip(table["key"], counted, strict=True))
    table["robustness"] = [". ".join(cells.get(key, [])) if c else "" for key, c in rows]
    table["fragile"] = [key in fragile and c for key, c in rows]
    return table


def named(table: pd.DataFrame, described: dict, experiments: dict) -> pd.DataFrame:
    """The claims `table` with the column `constants`: for each counted row, the constants
    of ours its verdict may depend on, from the config alone, "name = ours" each ("" where
    none), so that every row names them whether or not the robustness table (which measures
    them) is built: every number in the settings of an optimizer the row reads (named in its
    key; `experiments`: the claims settings) and each constant of the config's
    claims_robustness (`described`: RobustnessConfig.described) set in the training settings
    of the row's experiment, on the row's kind of test (t_last); for a real-data row, also
    those of claims.real_constants (the race's level, probe subset, horizon and the rule
    that chose the settings; Adam's gap factor)."""
    table = table.copy()

    def constants(row) -> str:
        if row.category not in COUNTED:
            return ""
        experiment, *words = row.key.split()
        settings = experiments.get(experiment, {})
        found = [
            f"{settings['labels'][o]}'s {k} = {number(float(v))}"
            for o, s in settings.get("optimizers", {}).items()
            if o in words
            for k, v in s.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        for entry in described.values():
            paths = entry["set"].get(experiment, [])
            kinds = entry.get("kinds")
            if any(p.startswith("train.") for p in paths) and (not kinds or row.kind in kinds):
                found.append(f"{entry['label']} = {number(float(entry['ours']))}")
        if settings.get("layout") == "real":  # the race's test, probe, horizon and tuning
            found += real_constants.words(settings, row.kind)
        return "; ".join(found)

    table["constants"] = [constants(r) for r in table.itertuples()]
    return table


def cells(table: pd.DataFrame) -> pd.Series:
    """A claims table's robustness cells as text: "" where blank (as read back from
    claims.csv, a blank cell is NaN), and for every row of a table without the column."""
    if "robustness" not in table:
        return pd.Series("", index=table.index, dtype=str)
    return table["robustness"].fillna("").astype(str)


def unmeasured(cells: pd.Series) -> pd.Series:
    """The cells that say the robustness table was not built ("not measured: <why>")."""
    return cells.str.startswith(f"{NOT_MEASURED}:")


def summary(table: pd.DataFrame, whose: str = "the paper lost and we chose") -> str:
    """The summary line's sentence on the constants (the counted rows of `table`: the
    paper's, or beyond it with `whose` "we chose"); "" for a table without the robustness
    column."""
    if "robustness" not in table:
        return ""
    counted = table[table["category"].isin(COUNTED)]
    texts = cells(counted)
    absent = texts[unmeasured(texts)]
    if len(absent):
        return f"Robustness to our constants {absent.iloc[0]}."
    depends = int((texts != "").sum())
    fragile = int((counted["fragile"] == True).sum())  # noqa: E712 (NaN: not fragile)
    if UNMEASURED in table and len(table):  # a partial table: the default build's constants
        return (
            f"Measured in this build for the constants of the default build only: {depends} "
            f"verdicts depend on them, {fragile} fragile (the verdict flips inside the "
            "constant's plausible range: column robustness, claims_robustness_default.md); "
            f"the constants {table[UNMEASURED].iloc[0]}."
        )
    return (
        f"{depends} verdicts depend on constants {whose}, {fragile} "
        "fragile (the verdict flips inside the constant's plausible range: column robustness, "
        "claims_robustness.md)."
    )


TITLE = "The claims' robustness to the constants we chose"
HOW_TO_READ = (
    "Each constant below is ours, the config's: one the paper's text lost (for the paper's "
    "statements) or one the experiments beyond the paper chose (their step lengths, Adam's "
    "beta2 and eps, named '(geometry)'). The "
    "claims table was measured again at each value tried (only the runs whose settings "
    "change were trained again, on the same data; every other run is the default build's). "
    "A counted row (covered, comparison or outside) depends on a constant if its outcome or "
    "its measured numbers change; it is listed here with its outcome at each value (with, "
    "where it differs from ours, on how many seeds alone the row gives that outcome) and "
    "the range of values over which the outcome stays ours. A row is FRAGILE if its outcome "
    "flips at a value inside the constant's plausible range. The claims table's column "
    "'robustness' says the same per row."
)


def to_markdown(table: pd.DataFrame, constants: dict) -> str:
    """The robustness table (compare's rows of every constant) as Markdown: a section per
    constant (`constants`: name -> its words, RobustnessConfig.described)."""
    from attnbias.workflow.markdown import text as cell_text

    fragile = table.loc[table["fragile"].astype(bool), "key"].nunique()
    counts = (
        f"**{table['key'].nunique()} rows of the claims table depend on the "
        f"{len(constants)} constants below; {fragile} are fragile.**"
    )
    lines = [f"# {TITLE}", "", counts, "", HOW_TO_READ, ""]
    for name, words in constants.items():
        constant = Constant.from_params(name, words)
        mine = table[table["constant"] == name]
        where = "; ".join(f"{e}: {', '.join(keys)}" for e, keys in words["set"].items())
        kinds = ", ".join(words["kinds"]) if words.get("kinds") else "every kind"
        tried = ", ".join(
            number(v) + (" (ours)" if v == constant.ours else "") for v in constant.values
        )
        lines += [
            f"## {cell_text(constant.label)} ({name})",
            "",
            cell_text(
                f"Ours {number(constant.ours)}; tried {tried}; plausible "
                f"{constant.plausible_text}: {words['why']}. Set at {where}; read on tests of "
                f"{kinds}."
            ),
            "",
        ]
        if mine.empty:
            lines += ["No counted row changes with it.", ""]
            continue
        lines += [
            f"| row | outcome at {', '.join(number(v) for v in constant.values)} | range | "
            "fragile |",
            "|---|---|---|---|",
        ]
        for _, row in mine.iterrows():
            cells = (row["key"], row["outcomes"], row["range"], "FRAGILE" if row["fragile"] else "")
            lines.append("| " + " | ".join(cell_text(c) for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)
