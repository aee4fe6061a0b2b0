"""AttentionMD's statements measured (claims.neighbours registers them): each takes the
neighbours' tables (results/attentionmd_local{,_final}.csv, attentionmd_joint.csv as
frames) and gives its rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.claims.neighbour_rows import DIRECTION, local_optimality, row, threshold_words
from attnbias.claims.rows import spread

LOCAL, CURVES, JOINT = "attentionmd_local", "attentionmd_local_curves", "attentionmd_joint"
MD = "normalised l_p mirror descent on W"
RANDOM_START = (
    "a start near the l_p SVM direction of locally optimal tokens, a small step; "
    "ours (their script's): W0 ~ N(0, 1)"
)


def decade(curve: pd.Series) -> tuple[float, float, int]:
    """(value at the logged iteration nearest t_last / 10, value at t_last, that iteration)
    of one run's curve indexed by iteration."""
    t_last = int(curve.index.max())
    earlier = int(curve.index[np.argmin(np.abs(curve.index - t_last / 10))])
    return float(curve.loc[earlier]), float(curve.loc[t_last]), earlier


def converges(st, tables: dict) -> list:
    """Per p: the divergence to its own p's SVM falls over the last decade of steps on
    every run whose tokens are locally optimal (a comparison: their theorem is for a start
    near the SVM direction)."""
    finals = tables[LOCAL].drop_duplicates(["seed", "p"])
    curves = tables[CURVES]
    rows = []
    for p, runs in finals.groupby("p"):
        ok, hypotheses = local_optimality(runs)
        before, last, fell = [], [], []
        for seed in runs.loc[ok, "seed"]:
            mine = curves[(curves["seed"] == seed) & (curves["p"] == p)]
            a, b, t_before = decade(mine.set_index("iteration")["divergence"])
            before.append(a)
            last.append(b)
            fell.append(b < a)
        last, fell = np.array(last), np.array(fell)
        t_last = int(runs["epochs"].iloc[0])
        rows.append(row(
            st, LOCAL, last, holds=bool(fell.all()), covered=False, suffix=f"-p{p:g}",
            claim=f"p = {p:g}: W converges in direction to the l_{p:g} SVM of its tokens.",
            algorithm=f"{MD}, p = {p:g}, from {RANDOM_START}", hypotheses=hypotheses,
            quantity=f"directional Bregman divergence D_{p:g} to the l_{p:g} SVM",
            window=f"t = {t_before} to {t_last}",
            detail=f"falls over the last decade on every run (to {spread(last)})" if fell.all()
            else f"does not fall over the last decade on {int((~fell).sum())} of {fell.size} runs",
            value_text=f"{spread(last)} at t = {t_last} ({spread(before)} at t = {t_before}); "
            + hypotheses,
            reference="lower at t_last than at t_last / 10 on every run",
        ))  # fmt: skip
    return rows


def own_p_closest(st, tables: dict) -> list:
    """Their figure: each p's W closest to its own p's SVM: per p and seed, the divergence
    to the own SVM below that to every other p's (a race between the SVMs, every seed)."""
    finals = tables[LOCAL]
    rows = []
    for p, runs in finals.groupby("p"):
        table = runs.pivot(index="seed", columns="svm_p", values="divergence")
        own = table[p].to_numpy(float)
        others = table.drop(columns=[p])
        lead = others.min(axis=1).to_numpy(float) - own
        behind = table.index[lead <= 0].tolist()
        means = ", ".join(f"SVM p = {q:g}: {v:.3g}" for q, v in table.mean().items())
        rows.append(row(
            st, LOCAL, lead, holds=not behind, suffix=f"-p{p:g}", algorithm=f"{MD}, p = {p:g}",
            claim=f"p = {p:g}: W is closest to the l_{p:g} SVM, of the SVMs of p in "
            f"{', '.join(f'{q:g}' for q in table.columns)}.",
            quantity=f"the least divergence to another p's SVM minus that to the l_{p:g} SVM",
            window=f"the last step (t = {int(runs['epochs'].iloc[0])})",
            detail="its own p's SVM the closest on every seed" if not behind else
            f"another p's SVM closer on {len(behind)} of {lead.size} seeds "
            f"(seed(s) {', '.join(map(str, behind))})",
            value_text=f"own {spread(own)}; lead {spread(lead)}; means: {means}",
            reference="lead > 0 on every seed",
        ))  # fmt: skip
    return rows


def joint_direction(st, tables: dict) -> list:
    """Their joint run: W and v each in direction of its l_p SVM (ours: cos at the last step
    at least DIRECTION), on the run with the step formed in logs."""
    curves = tables[JOINT]
    ours = curves[curves["run"] == "ours"]
    rows = []
    for block, mine in ours.groupby("block"):
        last = mine.sort_values("iteration").iloc[-1]
        holds, detail = threshold_words([last["cos"]], DIRECTION, f"cos({block}, its l_p SVM)")
        rows.append(row(
            st, JOINT, [last["cos"]], holds=holds, detail=detail, suffix=f"-{block}",
            claim=f"{block} converges in direction to its l_p SVM (W and v trained jointly).",
            algorithm="per-block normalised l_p mirror descent on W and v, p = 2",
            quantity=f"cos of {block} with its l_p SVM direction",
            window=f"the last step (t = {int(last['iteration'])})",
            value_text=f"{last['cos']:.6f}",
            reference=f">= {DIRECTION:g} (ours: 'converges' at a finite horizon)",
        ))  # fmt: skip
    return rows


# "keeps converging" over the last decade of steps: 1 - cos falls by at least this fraction
# (ours: a rate of 1/t falls by 90% a decade; our run's step, formed in logs, by 99%)
DECADE_FALL = 0.5


def their_step_stalls(st, tables: dict) -> list:
    """Defect: their step Z - lr G / (||G||_q + 2.2e-16), restated: does their run keep
    converging over the last decade of steps (1 - cos falls by at least DECADE_FALL, W and v
    alike)? Beside it ours, whose step is formed in logs."""
    curves = tables[JOINT]
    values, words, stalled = [], [], []
    for (run, block), mine in curves.groupby(["run", "block"]):
        a, b, t_before = decade(1 - mine.set_index("iteration")["cos"])
        fall = 1 - b / a
        if run == "theirs":
            values.append(fall)
            if not fall >= DECADE_FALL:
                stalled.append(f"{block} ({fall:.0%})")
        words.append(f"{run} {block}: 1 - cos {a:.3g} at t = {t_before}, {b:.3g} at the last "
                     f"(down {fall:.0%})")  # fmt: skip
    return [row(
        st, JOINT, values, holds=not stalled, algorithm="their step restated "
        "(neighbours.restated: the 2.2e-16 in the denominator)",
        quantity="the fraction by which 1 - cos with the l_p SVM direction falls over the "
        "last decade of steps, theirs (W, v)", window="the last decade of steps",
        detail="their run keeps converging" if not stalled else
        f"their run stalls: 1 - cos falls by less than {DECADE_FALL:.0%} over the last decade "
        f"for {' and '.join(stalled)}",
        value_text="; ".join(words),
        reference=f"falls by at least {DECADE_FALL:.0%} (ours: a 1/t rate falls by 90%)",
    )]  # fmt: skip
