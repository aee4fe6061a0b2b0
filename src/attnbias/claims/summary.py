"""The claims table's summary lines: the counts of the paper's statements by category and
outcome, the rows of each kind (counted by test, consistency checks by why they cannot
fail), what optional targets add, and apart from them the counts beyond the paper (the
published results, and the statements of ours). attnbias.claims.write puts them on top of
the table; the quotes check reads them (attnbias.quotes)."""

from __future__ import annotations

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.claim import KINDS, Claim


def as_claims(table: pd.DataFrame) -> list[Claim]:
    """The rows as Claims; an empty text cell read back from claims.csv (NaN) as ""."""
    text = [k for k, f in Claim.__dataclass_fields__.items() if f.type == "str"]
    table = table.fillna(dict.fromkeys(text, "")) if len(table) else table
    return [Claim(**{k: r[k] for k in Claim.__dataclass_fields__}) for _, r in table.iterrows()]


def beyond_rows(table: pd.DataFrame) -> pd.Series:
    """Which rows measure a statement beyond the paper (claims.beyond.BEYOND)."""
    from attnbias.claims.beyond import KEYS

    return table["statement"].isin(KEYS)


def beyond_summary_line(table: pd.DataFrame) -> str:
    """The counts of the rows beyond the paper (`table`: those rows only): the rows testing
    published results, and apart from them those testing statements of ours, which nobody
    published (Statement.ours)."""
    from attnbias.claims.beyond import OURS

    ours = table["statement"].isin(OURS)
    line = _beyond_counts(table[~ours], "published results beyond the paper")
    if ours.any():
        line += " Apart from them, " + _beyond_counts(
            table[ours], "statements of ours (nobody published them)", lead=False
        )
    return line


def _beyond_counts(table: pd.DataFrame, what: str, lead: bool = True) -> str:
    rows = as_claims(table)
    measured = [r for r in rows if r.kind != "not measured"]
    holds = sum(r.outcome == "holds" for r in measured)
    undecided = sum(r.outcome == "undecided" for r in measured)
    statements = table["statement"].nunique()
    unmeasured = table.loc[table["kind"] == "not measured", "statement"].nunique()
    return (
        f"{len(measured)} rows {'measure' if lead else 'test'} {statements - unmeasured} of "
        f"{statements} {what} ({unmeasured} not measured here): {holds} hold, "
        f"{len(measured) - holds - undecided} do not hold (findings), {undecided} undecided "
        "at this horizon."
    )


def summary_line(table: pd.DataFrame) -> str:
    """The counts by category (Claim.category): covered and within hypotheses (hold / do
    not hold / undecided), comparisons, outside hypotheses; consistency checks and
    statements not measured apart; then the rows of each kind: the counted ones by test,
    the consistency checks by why they cannot fail (kinds_line). The paper's statements
    only: the results beyond the paper are counted apart (beyond_summary_line)."""
    rows = as_claims(table[~beyond_rows(table)])
    covered = [r for r in rows if r.category == "covered"]
    count = {
        c: sum(r.category == c for r in rows)
        for c in ("comparison", "outside", "consistency", "not measured")
    }
    outcomes = {
        o: sum(r.outcome == o for r in covered) for o in ("holds", "does not hold", "undecided")
    }
    statements = table.loc[~beyond_rows(table), "statement"].nunique()
    return (
        f"{len(rows) - count['not measured']} rows measure {statements - count['not measured']}"
        f" of the {statements} checkable statements of the paper ({count['not measured']} not "
        f"measured here: their data are not in this build). On the algorithms and data the "
        f"statements are made for: {outcomes['holds']} hold, {outcomes['does not hold']} do "
        f"not hold, {outcomes['undecided']} undecided; {count['comparison']} comparisons (an "
        f"algorithm or data the statement is not made for); {count['outside']} on data "
        f"outside the hypotheses of the proofs of their section; {count['consistency']} "
        "consistency checks (outside the count: rows that cannot fail). "
        + kinds_line(table[~beyond_rows(table)])
    )


def kinds_line(table: pd.DataFrame) -> str:
    """How many rows of `table` of each kind: the counted ones (covered, within
    hypotheses) by test, and the consistency checks by why they cannot fail (a
    near-tautology, or the part of Claim.check before its colon), each in a fixed order
    (the tests' KINDS order; the reasons alphabetically), so that a build's line reads alike
    whatever the order of its rows."""
    rows = as_claims(table)
    counted = [r.kind for r in rows if r.category == "covered"]
    checks = [
        r.check.split(":")[0] if r.check else "a near-tautology"
        for r in rows
        if r.category == "consistency"
    ]

    def listed(kinds: list, order) -> str:
        counts = pd.Series(kinds, dtype=object).value_counts()
        return "; ".join(f"{what} {counts[what]}" for what in order if what in counts)

    counted_order = [k for k in KINDS if k in counted]
    return (
        f"The counted rows by test: {listed(counted, counted_order) or 'none'}. The "
        f"consistency checks: {listed(checks, sorted(set(checks))) or 'none'}."
    )

    return (
        f"The counted rows by test: {listed(counted) or 'none'}. The consistency checks: "
        f"{listed(checks) or 'none'}."
    )


def robustness_line(table: pd.DataFrame) -> str:
    """The header's count of the verdicts that depend on our constants, and of the fragile
    ones (claims.robustness.summary; "" where the claims job did not add the column); a
    line of its own, so that the summary line's counts read the same with or without it."""
    return robustness.summary(table[~beyond_rows(table)])


def optional_line(table: pd.DataFrame, optional=()) -> str:
    """What the optional targets this build holds (`optional`: experiment names, outside
    `snakemake`'s default build) add to the counts, and the counts without them, as the
    default build alone gives them (the README's); "" where they add no row."""
    experiment = table["key"].str.split(" ").str[0]
    added = experiment.isin(list(optional)) & ~beyond_rows(table)
    if not added.any():
        return ""
    from attnbias.claims.claim import frame
    from attnbias.claims.layouts import not_measured
    from attnbias.claims.statements import by_key

    counts = experiment[added].value_counts(sort=False)
    names = ", ".join(f"{n} ({c} row{'s' * (c > 1)})" for n, c in counts.items())
    default = table[~added]
    # a statement that only optional targets measure is "not measured" without them
    unmeasured = dict.fromkeys(
        k for k in table["statement"][added] if k not in set(default["statement"])
    )
    if unmeasured:
        default = pd.concat([default, frame([not_measured(by_key(k)) for k in unmeasured])])
    return (
        f"Optional targets this build holds add rows to these counts: {names}. Without them, "
        f"as the default build (snakemake) gives them: {summary_line(default)}"
    )
