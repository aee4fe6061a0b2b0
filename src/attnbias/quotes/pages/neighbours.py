"""docs/neighbours.md's registry: the numbers the neighbours' targets measure (optional
targets, each named), by marker name (attnbias.quotes.marks), read from the tables their
jobs write (results/tfsvm_rank.csv, tfsvm_scs.csv, tfsvm_local{.json,_final.csv},
attentionmd_local{.json,_final.csv}, attentionmd_joint.json) and the outcomes of the rows
of results/claims_neighbours.csv. Not here: the issue's re-run of their code (their
numbers, quoted as the issue gives them) and the lines of their scripts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from attnbias.claims.neighbours_attentionmd import decade
from attnbias.quotes.quote import Page
from attnbias.quotes.sources import computed
from attnbias.workflow import csvcells

NEIGHBOURS_DOC = "docs/neighbours.md"
PS = ("1.75", "2", "3")
TARGET = {
    "tfsvm_rank.csv": "results/tfsvm_rank.pdf",
    "tfsvm_scs.csv": "results/claims_neighbours.md",
    "tfsvm_local.json": "results/tfsvm_local.pdf",
    "tfsvm_local_final.csv": "results/tfsvm_local.pdf",
    "attentionmd_local.json": "results/attentionmd_local.pdf",
    "attentionmd_local_final.csv": "results/attentionmd_local.pdf",
    "attentionmd_joint.json": "results/attentionmd_joint.pdf",
    "attentionmd_joint.csv": "results/attentionmd_joint.pdf",
    "claims_neighbours.csv": "results/claims_neighbours.md",
}


def _load(b, name: str):
    path = b.path(name)
    if name.endswith(".json"):
        return json.loads(path.read_text())
    return csvcells.read(path) if name.startswith("claims") else pd.read_csv(path)


def read(name: str, what: str, reduce):
    """A number `reduce(table)` of the built file `name` (results/<name>), its target named."""
    return computed(what, lambda b: reduce(_load(b, name)), target=TARGET[name])


def _range(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return np.array([np.nanmin(values), np.nanmax(values)])


def _runs(finals: pd.DataFrame) -> pd.DataFrame:
    """One row per run of attentionmd_local's finals (one per (seed, p, svm_p) there)."""
    return finals.drop_duplicates(["seed", "p"]) if "svm_p" in finals else finals


def count(name: str, column: str, what: str, **where):
    """How many runs of `name` read False in `column` (where the columns `where` hold)."""

    def reduce(finals):
        runs = _runs(finals)
        for key, value in where.items():
            runs = runs[runs[key] == value]
        return float((~runs[column].astype(bool)).sum())

    return read(name, what, reduce)


def outcome(key: str, *outcomes: str):
    """True where every row of the neighbours' claims entry `key` reads one of `outcomes`."""

    def reduce(table):
        rows = table[table["statement"] == key]
        if rows.empty:
            raise ValueError(f"results/claims_neighbours.csv has no row of {key!r}")
        return bool(rows["outcome"].isin(outcomes).all())

    return read(
        "claims_neighbours.csv", f"the rows of {key!r} read {' or '.join(outcomes)}", reduce
    )


def field(name: str, key: str, what: str):
    """A top-level number of the built summary `name` (a .json)."""
    return read(name, what, lambda s: float(s[key]))


def _rank_cells(n: int, column: str, reduce):
    def of(cells):
        mine = cells[(cells["n"] == n) & (cells["instances"] > cells["infeasible"])]
        return reduce(mine[column])

    return of


def _scs(reduce):
    def of(table):
        feasible = table[~table["infeasible"].astype(bool) & (table["d"] >= table["n"])]
        return reduce(feasible)

    return of


def divergence(p: str, q: str):
    """attentionmd_local's mean divergence of the runs of p to the SVM of q."""
    return read(
        "attentionmd_local.json",
        f"mean divergence, run p {p}, SVM p {q}",
        lambda s: s["mean_divergence"][str(float(p))][str(float(q))],
    )


def decade_fall(run: str, block: str):
    """The fraction by which the joint run's 1 - cos falls over its last decade of steps
    (the claims row amd-defect-eps's measure)."""

    def reduce(curves):
        mine = curves[(curves["run"] == run) & (curves["block"] == block)]
        before, last, _ = decade(1 - mine.set_index("iteration")["cos"])
        return 1 - last / before

    return read("attentionmd_joint.csv", f"{run}'s fall of 1 - cos({block})", reduce)


JOINT = {
    f"joint.{run}.{block}": read("attentionmd_joint.json", f"{run}'s final cos of {block}",
                                 lambda s, k=f"{run}_{block}": s["final_cos"][k])
    for run in ("ours", "theirs") for block in ("W", "v")
} | {
    f"joint.fall.{run}.{block}": decade_fall(run, block)
    for run in ("ours", "theirs") for block in ("W", "v")
}  # fmt: skip
RANK = {
    "rank.instances": read("tfsvm_rank.csv", "instances", lambda c: float(c["instances"].sum())),
    "rank.infeasible": read("tfsvm_rank.csv", "infeasible instances",
                            lambda c: float(c["infeasible"].sum())),
    **{f"rank.infeasible.d{d}": read("tfsvm_rank.csv", f"infeasible instances at d = {d}",
                                     lambda c, d=d: float(c.loc[c["d"] == d, "infeasible"].sum()))
       for d in (1, 2, 3, 4, 5)},
    **{f"rank.nuclear.mean.n{n}": read("tfsvm_rank.csv", f"nuclear cell means at n = {n}",
                                       _rank_cells(n, "mean_nuclear", _range))
       for n in (5, 10, 15)},
    **{f"rank.nuclear.max.n{n}": read("tfsvm_rank.csv", f"largest nuclear rank at n = {n}",
                                      _rank_cells(n, "max_nuclear", lambda v: float(v.max())))
       for n in (5, 10, 15)},
}  # fmt: skip
SCS = {
    "scs.instances": read("tfsvm_scs.csv", "feasible SCS instances (d >= n)",
                          _scs(lambda t: float(len(t)))),
    "scs.theirs": read(
        "tfsvm_scs.csv", "their rank readings", _scs(lambda t: _range(t["scs_rank"]))
    ),
    "scs.exact": read("tfsvm_scs.csv", "exact ranks", _scs(lambda t: _range(t["exact_rank"]))),
    "scs.over": read("tfsvm_scs.csv", "their readings above n",
                     _scs(lambda t: float((t["scs_rank"] > t["n"]).sum()))),
    "scs.margin": read("tfsvm_scs.csv", "SCS's smallest margin",
                       _scs(lambda t: float(t["scs_min_margin"].min()))),
    "scs.infeasible": read("tfsvm_scs.csv", "infeasible SCS instances at d < n",
                           lambda t: float(t.loc[t["d"] < t["n"], "infeasible"].sum())),
}  # fmt: skip
MD = {
    **{f"md.div.{p}.{q}": divergence(p, q) for p in PS for q in PS},
    "md.runs": field("attentionmd_local.json", "runs", "runs"),
    "md.off": field("attentionmd_local.json", "not_globally_optimal", "runs off argmax"),
    "md.notlocal": field("attentionmd_local.json", "not_locally_optimal", "not locally optimal"),
    **{f"md.off.p{p}": count("attentionmd_local_final.csv", "globally_optimal",
                             f"p = {p} runs off argmax", p=float(p)) for p in PS},
    **{f"md.notlocal.p{p}": count("attentionmd_local_final.csv", "locally_optimal",
                                  f"p = {p} runs not locally optimal", p=float(p)) for p in PS},
}  # fmt: skip
TF = {
    **{f"tf.corr.{param}.{norm}": read("tfsvm_local.json", f"{param}'s mean correlation, {norm}",
                                       lambda s, a=param, n=norm: s["mean_correlation"][a][n])
       for param in ("W", "KQ") for norm in ("fro", "nuclear")},
    "tf.range.W.fro": read("tfsvm_local_final.csv", "W's Frobenius correlations",
                           lambda f: _range(f.loc[f["param"] == "W", "corr_fro"])),
    "tf.range.KQ.nuclear": read("tfsvm_local_final.csv", "K Q^T's nuclear correlations",
                                lambda f: _range(f.loc[f["param"] == "KQ", "corr_nuclear"])),
    "tf.off": field("tfsvm_local.json", "not_globally_optimal", "runs off argmax"),
    "tf.notlocal": field("tfsvm_local.json", "not_locally_optimal", "not locally optimal"),
    **{f"tf.off.{param}": count("tfsvm_local_final.csv", "globally_optimal",
                                f"{param} runs off argmax", param=param) for param in ("W", "KQ")},
    **{f"tf.notlocal.{param}": count("tfsvm_local_final.csv", "locally_optimal",
                                     f"{param} runs not locally optimal", param=param)
       for param in ("W", "KQ")},
}  # fmt: skip
FACTS = {
    "claims.tfsvm-fig-local": outcome("tfsvm-fig-local", "holds"),
    "claims.tfsvm-rank": outcome("tfsvm-rank", "does not hold"),
    "claims.amd-own-p": outcome("amd-own-p", "holds"),
    "claims.amd-joint": outcome("amd-joint", "holds"),
    "claims.tfsvm-defect-scs": outcome("tfsvm-defect-scs", "does not hold"),
    "claims.tfsvm-defect-infeasible": outcome("tfsvm-defect-infeasible", "does not hold"),
    "claims.amd-defect-eps": outcome("amd-defect-eps", "does not hold"),
}
PAGE = Page(NEIGHBOURS_DOC, numbers={**JOINT, **RANK, **SCS, **MD, **TF}, facts=FACTS)
