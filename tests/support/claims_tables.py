"""Hand-made aggregate tables with known answers, for the tests of the claims table
(tests/claims/): NGD-like and GD-like curves, joint-training curves, a bad-direction run, the
GD and NGD optimizers of their experiment (OPTS), and the rows the table gives on them (rows_of,
and one statement's rows: measured). Every kind of row has a negative control built from these: a
run that must fail it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnbias.claims import layouts
from attnbias.data import hypotheses, models
from attnbias.svm import max_margin
from attnbias.training.metrics import CROSSING_THRESHOLDS

T = 10_000


ITERATIONS = np.unique(np.concatenate([[0], np.rint(np.geomspace(1, T, 80)).astype(int)]))


GOOD = hypotheses.summarize(
    [hypotheses.report(models.generate("example1", s, dict(n=8, T=4, d=100, query_signal=0.0)))
     for s in (0, 1)]
)  # fmt: skip


def _joint_report(seed: int) -> dict:
    """DM data inside Cond. 1 (iii) as Lem. 11 uses it, measured with the svm job's u_mm."""
    dataset = models.generate("dm", seed, dict(n=4, T=3, d=60))
    solutions = max_margin.solve_for_dataset(dataset, train_u=True, name=f"dm seed {seed}")
    return hypotheses.report(dataset, max_margin.to_arrays(solutions))


JOINT_GOOD = hypotheses.summarize([_joint_report(s) for s in (0, 1)])


def long_table(curves: dict) -> pd.DataFrame:
    """{(optimizer, metric): f(t, seed)} -> long-format aggregate table, two seeds. A
    metric named first_gap_W_below_* is a run summary: f(None, seed) at the last t."""
    rows = []
    for (optimizer, metric), f in curves.items():
        for seed in (0, 1):
            if metric.startswith("first_gap_W_below_"):
                value = f(None, seed)
                if value is not None:
                    rows.append(("x", optimizer, seed, T, metric, float(value)))
                continue
            for t in ITERATIONS:
                if t == 0 and metric in ("gap_W", "W_norm"):
                    continue  # as in real tables: W = 0 has no direction
                rows.append(("x", optimizer, seed, t, metric, f(float(t), seed)))
    return pd.DataFrame(
        rows, columns=["experiment", "optimizer", "seed", "iteration", "metric", "value"]
    )


def ngd_like(exponent=-2.0, lr=0.1, W_mm_norm=2.0):
    """NGD's curves: gap ~ t^exponent, ||W|| = lr t, log(1 - s) = -lr t / ||W_mm||."""
    return {
        "gap_W": lambda t, s: (1 + s) * t**exponent,
        "W_norm": lambda t, s: lr * t,
        "log1m_opt_softmax": lambda t, s: -lr * t / W_mm_norm,
        "min_opt_softmax": lambda t, s: 1 - math.exp(-lr * t / W_mm_norm),
    }


def gd_like():
    return {
        "gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)),
        "W_norm": lambda t, s: 2.0 * math.log(max(t, 1.0)) + 1,
        "log1m_opt_softmax": lambda t, s: -math.log(max(t, 1.0)),
        "min_opt_softmax": lambda t, s: 1 - 1 / (1 + t),
    }


def crossings(curves, optimizer):
    """The exact first-crossing summaries that the training loop writes, from gap_W."""
    out = {}
    for thr in CROSSING_THRESHOLDS:

        def first(_, s, thr=thr):
            below = [t for t in ITERATIONS if t > 0 and curves["gap_W"](float(t), s) < thr]
            return below[0] if below else None

        out[(optimizer, f"first_gap_W_below_{thr:g}")] = first
    return out


def fixed_table(**optimizers) -> pd.DataFrame:
    curves = {}
    for name, c in optimizers.items():
        curves.update({(name, m): f for m, f in c.items()})
        curves.update(crossings(c, name))
    return long_table(curves)


def rows_of(table, optimizers, summary=GOOD, kind="fixed_decoder", T_tokens=3, figure=None,
            **extra):  # fmt: skip
    """The measured rows of one experiment "x" (the registry's "not measured" rows left out)."""
    experiment = {"layout": kind, "optimizers": optimizers, "seeds": 2, "paper_figure": figure}
    out = layouts.claims({"x": experiment}, {"x": table}, {"x": [2.0, 2.0]}, {"x": T_tokens},
                        {"x": summary}, extra.get("u_margins"))  # fmt: skip
    return [r for r in out.itertuples() if r.kind != "not measured"]


# the optimizers of the fixed-decoder tables
OPTS = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}


def measured(statement: str, table, optimizers, layout="fixed_decoder", summary=GOOD,
             data="", feasibility=None, T_tokens=3):  # fmt: skip
    """The rows of `statement` on one experiment "x"."""
    experiment = {"layout": layout, "optimizers": optimizers, "seeds": 2, "data": data}
    feasible = {"x": feasibility} if feasibility else None
    out = layouts.claims({"x": experiment}, {"x": table}, {"x": [2.0, 2.0]}, {"x": T_tokens},
                        {"x": summary}, None, feasible)  # fmt: skip
    return [r for r in out.itertuples() if r.statement == statement and r.kind != "not measured"]


def row(rows, key):
    (match,) = [r for r in rows if r.key == f"x {key}"]
    return match


def joint_curves(good=True):
    """NGD-like joint curves; good=False breaks each Lem. 11 / Thm. 2-4 property."""
    if good:
        return {
            "gap_u": lambda t, s: 1e-5,
            "gap_W": lambda t, s: 1.0 / t,
            "log_loss": lambda t, s: -0.1 * t - 0.01,
            "log_loss_ratio": lambda t, s: 0.5 - 0.1 / (1 + t),
            "min_score_gap": lambda t, s: 1.0 - 1.0 / (1 + t),
            "min_opt_softmax": lambda t, s: 1 - 0.5 / (1 + t),
        }
    return {
        "gap_u": lambda t, s: 1e-2,
        "gap_W": lambda t, s: 0.05,  # stalls
        "log_loss": lambda t, s: -1 - 1e-6 * t,  # barely moves
        "log_loss_ratio": lambda t, s: 1e-3 * t,  # grows without bound
        "min_score_gap": lambda t, s: 1.0 - 0.5 * (t > 100),  # dips
        "min_opt_softmax": lambda t, s: 0.9 - 0.1 * (t > 100),  # dips
    }


EQ10 = {"rule": "ngd", "lr": 1.0, "normalize": "per_block", "decay_W": 1.0, "decay_u": 0.5}


def bad_init_2d(sample_1) -> pd.DataFrame:
    """Two samples: sample 1 starts disfavoured (below 1/T = 1/2), sample 2 favoured."""
    curves = {}
    for opt in ("gd", "ngd"):
        curves[(opt, "opt_softmax_0")] = lambda t, s: sample_1(t)
        curves[(opt, "opt_softmax_1")] = lambda t, s: 1 - 0.4 / (t + 1)
        curves[(opt, "gap_W")] = lambda t, s: 1 / t
        curves[(opt, "loss")] = lambda t, s: 0.68 + 1 / (t + 1)
    return long_table(curves)


# ---- real-data run tables (the real runs' schema) and token-similarity panels ---------

REAL_COLUMNS = ["experiment", "optimizer", "seed", "iteration", "metric", "value"]


def real_table(losses: dict, norms: dict | None = None, steps=range(0, 2001, 100)) -> pd.DataFrame:
    """{optimizer: loss(step, seed)} (and {optimizer: [norm(step) per layer]}) -> the real
    runs' long table (experiment, optimizer, seed, iteration = step, metric, value)."""
    rows = []
    for opt, loss in losses.items():
        for seed in (0, 1):
            for step in steps:
                rows.append(("r", opt, seed, step, "train_loss", loss(step, seed)))
                for i, norm in enumerate((norms or {}).get(opt, [])):
                    rows.append(("r", opt, seed, step, f"norm/{i:02d} layer{i}", norm(step)))
    return pd.DataFrame(rows, columns=REAL_COLUMNS)


REAL_OPTS = {"sgd": {"rule": "sgd", "lr": 0.1}, "sngd": {"rule": "sngd", "lr": 0.5},
             "sps": {"rule": "sps", "c": 0.5}, "adam": {"rule": "adam", "lr": 1e-3}}  # fmt: skip


def decay(rate):
    return lambda step, seed: 2.0 * math.exp(-rate * step / 1000) + 0.01 * seed


def similarity_frame(share: float, band: float = 0.1) -> pd.DataFrame:
    """A similarity table as token_similarity writes it: bins, with the summary on each row."""
    return pd.DataFrame({"lo": [-1.0, 0.0], "hi": [0.0, 1.0], "count": [5, 5], "texts": 40,
                         "pairs": 1234, "identical_pairs": 3, "band": band,
                         "within_band": share})  # fmt: skip
