"""The paper's real-data statements (Sec. 5, App. C), measured on the real-data run tables
(results/{figure}/metrics.parquet: experiment, optimizer, seed, iteration = step, metric,
value; metrics train_loss, test accuracy, and per-layer norms "norm/NN layer" where the
experiment logs them). The optimizers are found by their rule (sgd, sngd, sps, adam).

"Faster" is read as a paired race (claims.paired_race): over the seeds, each a pair of runs
from the same weights on the same batches, the difference of the areas under the loss curve
(the probe loss where logged), by a one-sided paired t-test at level paired_race.ALPHA;
"no significant gap" as the final train losses within
a factor ADAM_GAP of each other (ours); "the layer norms grow" as every layer's norm ending
above its start; Fig. 10's near-orthogonality as at least ORTHOGONAL_SHARE of the token pairs
inside the figure's band |cos| < band (the similarity tables: one row per bin, with the
band, the share inside it and the counts on every row). A race on a run whose cap bound at
most of its steps (realdata.cap_bound.bound_mostly; SNGD's max_step, SPS's eta_max: the run
was mostly SGD with the cap for its rate) is a comparison that names that SGD (as_became),
never a verdict on the capped rule; every capped run's race says at how many steps its cap
bound (cap_note).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attnbias.claims.paired_race import paired_race_row
from attnbias.claims.real_constants import ADAM_GAP
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread
from attnbias.claims.thresholds import threshold_row
from attnbias.optim import rules
from attnbias.realdata.cap_bound import became_runs, bound_share, run_text

# Fig. 10's "a significant fraction of all the cosine similarities fall within a small range
# around 0": read as at least this share of the pairs inside the figure's band (ours)
ORTHOGONAL_SHARE = 0.5
LOSS = "train_loss"


def _sgd(rows: Rows) -> str | None:
    found = rows.runs("sgd", twins=True)
    return found[0] if found else None


def as_became(rows: Rows, opt: str, said: Said) -> Said:
    """`said` for a race that reads `opt`'s run; where its cap bound at most of its steps
    (realdata.cap_bound.bound_mostly), the run was mostly plain SGD, so the row is a
    comparison that says which SGD, never a verdict on `opt`'s rule."""
    settings = rows.run.optimizers[opt]
    plain = became_runs({opt: settings}, rows.run.table).get(opt)
    if plain is None:
        return said
    rule = rules.get(settings["rule"]).display_name
    share = bound_share(rows.run.table, opt)
    return replace(
        said,
        covers=(),
        scope=f"{plain}, which {rule} became (cap bound at {share:.0%} of its steps)",
    )


def cap_note(rows: Rows, opt: str) -> str:
    """For a race on `opt`'s run: at how many steps its cap bound (realdata.cap_bound),
    named by its rule (its label may already say "cap bound at 99% of its steps"); "" for an
    uncapped run."""
    settings = rows.run.optimizers[opt]
    name = rules.get(settings["rule"]).display_name
    return run_text(opt, settings, rows.run.table, name) or ""


def faster_than_sgd_rows(rows: Rows) -> None:
    """SNGD and SPS (the statement's algorithms) train faster than SGD."""
    sgd = _sgd(rows)
    if sgd is None:
        return
    for opt in rows.runs(*rows.statement.covers):
        said = Said(
            f"{opt} faster than {sgd}",
            "trains faster than SGD: its loss curve's area is below SGD's over the paired seeds.",
        )
        paired_race_row(rows, opt, sgd, as_became(rows, opt, said), note=cap_note(rows, opt))


def sngd_slower_rows(rows: Rows) -> None:
    """On the vision data SNGD trains slower than SGD: SGD's loss below SNGD's."""
    sgd = _sgd(rows)
    if sgd is None:
        return
    for opt in rows.runs("sngd", twins=True):
        said = Said(
            f"{sgd} faster than {opt}",
            f"trains faster than {rows.label(opt)}: its loss curve's area is below "
            f"{rows.label(opt)}'s over the paired seeds.",
            covers=("sgd",),
        )
        paired_race_row(rows, sgd, opt, as_became(rows, opt, said), note=cap_note(rows, opt))


def adam_no_gap_rows(rows: Rows) -> None:
    """No significant gap between Adam and SGD: final train losses within ADAM_GAP."""
    sgd = _sgd(rows)
    if sgd is None:
        return
    table = rows.run.table
    for opt in rows.runs("adam"):
        final = {o: _final(table, o) for o in (opt, sgd)}
        gap = np.maximum(final[opt] / final[sgd], final[sgd] / final[opt])
        said = Said(
            f"{opt} like {sgd}",
            f"no significant gap to SGD: the final train losses are within a factor {ADAM_GAP:g}.",
        )
        measured = Measured(
            "the larger over the smaller of Adam's and SGD's final train loss",
            f"step {rows.run.t_last}",
            gap,
            opt=opt,
            value_text=f"{rows.label(opt)} {spread(final[opt])}, {rows.label(sgd)} "
            f"{spread(final[sgd])}; factor {spread(gap)}",
        )
        threshold_row(
            rows, said, measured, ADAM_GAP, above=False,
            ours="'no significant gap' read as within a factor 2",
        )  # fmt: skip


def layer_norms_grow_rows(rows: Rows) -> None:
    """The ViT's layer norms grow: every logged layer ends above its start, every seed."""
    table = rows.run.table
    layers = sorted(m for m in set(table["metric"]) if m.startswith("norm/"))
    if not layers:
        return
    for opt in rows.runs():
        mine = table[(table["optimizer"] == opt) & table["metric"].isin(layers)]
        wide = mine.pivot_table(
            index=["seed", "metric"], columns="iteration", values="value", observed=True
        )
        grew = (wide.iloc[:, -1] > wide.iloc[:, 0]).groupby(level="seed").mean().to_numpy()
        rows.add(
            Said(
                f"{opt} layer norms grow", "the parameter norm of every layer grows over training."
            ),
            Measured(
                f"fraction of the {len(layers)} layers whose norm ends above its start",
                f"steps 0 to {rows.run.t_last}",
                grew,
                opt=opt,
                value_text=f"{spread(grew, '.0%')} of the layers grow",
            ),
            Verdict("holds if every layer grows on every seed", bool(np.all(grew == 1))),
        )


def _final(table, opt) -> np.ndarray:
    rows = table[(table["optimizer"] == opt) & (table["metric"] == LOSS)]
    last = rows[rows["iteration"] == rows["iteration"].max()]
    return last.sort_values("seed")["value"].to_numpy(dtype=float)


def orthogonal_rows(rows: Rows) -> None:
    """Token embeddings nearly orthogonal within a text: the share of pairs in the band."""
    first = rows.run.table.iloc[0]
    band, share = float(first["band"]), float(first["within_band"])
    said = Said(
        f"{rows.run.dataset} orthogonal",
        f"a significant fraction of the token pairs' cosine similarities falls within "
        f"|cos| < {band:g}.",
    )
    measured = Measured(
        f"share of the pairs of distinct positions in a text with |cos| < {band:g}",
        f"{int(first['pairs']):,} pairs from {int(first['texts']):,} texts",
        [share],
        value_text=f"{share:.1%} of the pairs",
    )
    threshold_row(
        rows, said, measured, ORTHOGONAL_SHARE, above=True,
        ours=f"'a significant fraction' read as at least {ORTHOGONAL_SHARE:.0%} of the pairs",
    )  # fmt: skip
