"""Which optimizer reaches W_mm's direction first: Sec. 3.3 (NGD and PS before GD), Fig. 2
(PS fastest early) and Fig. 3 (every other algorithm ahead of GD in joint training).

A race is read on the exact first crossings of CROSSING_THRESHOLDS; "ahead" over the whole
run after a burn-in (measure.ahead).
"""

from __future__ import annotations

import numpy as np

from attnbias.claims.coverage import JOINT_NEEDS, SEC3_NGD, SEC3_PS
from attnbias.claims.measure import BURN_IN, describe_passage, first_crossing, race
from attnbias.claims.rows import AHEAD_OF_GD, Rows, ahead_of_gd_row, over_gd
from attnbias.training.metrics import CROSSING_THRESHOLDS  # a leaf: no torch in claims


def faster_than_gd_rows(rows: Rows, table, optimizers, t_last, seeds) -> None:
    """Sec. 3.3: NGD and PS (uncapped) reach W_mm's direction before GD: the exact first
    crossings of each threshold, and 1 - cos below GD's over the whole run."""
    adaptive = [o for o in optimizers if rows.algorithms[o] != "gd"]
    result = "Sec. 3.3: NGD (and PS) faster than GD"
    source = rows.source("Sec. 3.3, Thm. 1 against Eq. 3", "; {}")
    for threshold in CROSSING_THRESHOLDS:
        gd_first = first_crossing(table, "gd", threshold, seeds)
        for opt in adaptive:
            first = first_crossing(table, opt, threshold, seeds)
            holds, undecided = race(first, gd_first)
            rows.add(
                result,
                f"faster than gd {opt} {threshold:g}",
                f"reaches 1 - cos(W_t, W_mm) < {threshold:g} before GD.",
                source,
                f"first iteration with 1 - cos(W_t, W_mm) < {threshold:g} (exact, every step "
                "checked; inf: not reached)",
                f"t <= {t_last}",
                first,
                f"GD: {describe_passage(gd_first, t_last)}; holds if {rows.label(opt)} crosses "
                "first on every seed, does not hold if GD crosses first on one, undecided where "
                "neither crosses",
                holds,
                value_text=describe_passage(first, t_last),
                opt=opt,
                covers=SEC3_NGD + SEC3_PS,
                undecided=undecided,
            )
    for opt in adaptive:
        label = rows.label(opt)
        ahead_of_gd_row(
            rows, table, opt, "gap_W", t_last, result, f"ahead of gd {opt}", AHEAD_OF_GD, source,
            lambda mine, gd, label=label: (
                f"last logged t at which {label}'s 1 - cos(W_t, W_mm) is not below GD's "
                f"(0: never); {over_gd(label, mine, gd, t_last)}"
            ),
            reference="holds if below on every seed at every logged t (burn-in: t < "
            f"{t_last // BURN_IN}); does not hold if at or above GD's at t = {t_last} on a seed",
            covers=SEC3_NGD + SEC3_PS,
        )  # fmt: skip


def ps_fastest_row(rows: Rows, table, optimizers, t_last, seeds) -> None:
    """Fig. 2: PS reaches W_mm's direction before NGD (and NGD-mom)."""
    first = first_crossing(table, "ps", CROSSING_THRESHOLDS[0], seeds)
    others = [o for o in ("ngd", "ngd-mom") if o in optimizers]
    rival = np.min([first_crossing(table, o, CROSSING_THRESHOLDS[0], seeds) for o in others], 0)
    holds, undecided = race(first, rival)
    rows.add(
        "Fig. 2: PS fastest early",
        "ps fastest",
        "reaches W_mm's direction first (PS converges faster than NGD).",
        rows.source("Sec. 3.2 (Extension to Polyak step)"),
        f"first iteration with 1 - cos(W_t, W_mm) < {CROSSING_THRESHOLDS[0]:g}",
        f"t <= {t_last}",
        first,
        f"{' and '.join(map(rows.label, others))}: {describe_passage(rival, t_last)} (earliest "
        "of them, per seed); holds if PS crosses first on every seed, undecided where none "
        "crosses",
        holds,
        value_text=describe_passage(first, t_last),
        opt="ps",
        undecided=undecided,
    )


def joint_faster_than_gd_rows(rows: Rows, table, optimizers, t_last) -> None:
    """Fig. 3: in joint training every other algorithm's W is ahead of GD's."""
    for opt in [o for o in optimizers if o != "gd"]:
        label = rows.label(opt)
        ahead_of_gd_row(
            rows, table, opt, "gap_W", t_last, "Fig. 3: faster than GD", f"ahead of gd {opt} W",
            AHEAD_OF_GD,
            rows.source("Sec. 5", ", {} ('all other algorithms are faster than GD')"),
            lambda mine, gd, label=label: (
                "last logged t at which it is not below GD's (0: never); "
                f"{over_gd(label, mine, gd, t_last)}"
            ),
            needs=JOINT_NEEDS,
            covers=("per-block-ngd", "ps", "joint-ngd"),  # the figure's algorithms
        )  # fmt: skip
