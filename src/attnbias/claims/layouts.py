"""Which results each experiment's layout gets, and the whole table (`claims`).

Optimizers are found by their config names: `gd` is the baseline; the others are compared
with it where the experiment has them. Rate results (Thm. 1, Thm. 7) get rows for the
uncapped algorithms only.
"""

from __future__ import annotations

import pandas as pd

from attnbias.claims import comparisons, consistency, direction, global_convergence, joint
from attnbias.claims.coverage import uncapped
from attnbias.claims.rows import Rows, by_result, frame


def fixed_decoder_claims(rows: Rows, table, optimizers, W_mm_norms) -> None:
    t_last = int(table["iteration"].max())
    seeds = sorted(table["seed"].unique())
    if "gd" in optimizers:
        comparisons.faster_than_gd_rows(rows, table, optimizers, t_last, seeds)
    if "ps" in optimizers and {"ngd", "ngd-mom"} & set(optimizers):
        comparisons.ps_fastest_row(rows, table, optimizers, t_last, seeds)
    for opt, result in (("ngd", "Thm. 1"), ("ps", "Thm. 7")):
        if opt in optimizers and uncapped(optimizers[opt]):
            direction.rate_rows(rows, table, opt, result, t_last)
    for opt in ("ngd", "ps"):
        if opt in optimizers:
            direction.softmax_monotone_row(rows, table, opt, t_last)
    if "ngd" in optimizers and uncapped(optimizers["ngd"]):
        lr = optimizers["ngd"].get("lr", 1.0)
        consistency.ngd_consistency_rows(rows, table, lr, W_mm_norms, t_last)
    if "gd" in optimizers:
        direction.log_norm_row(rows, table, t_last, covered=False)


def joint_claims(rows: Rows, table, optimizers, u_margins: dict | None) -> None:
    t_last = int(table["iteration"].max())
    for opt in optimizers:
        joint.u_rows(rows, table, opt, u_margins, t_last)
        joint.loss_rows(rows, table, opt, optimizers, t_last)
        if rows.algorithms[opt] in ("gd", "ps", "ps-capped"):
            continue  # Thm. 3 and Lem. 11 concern the normalised updates
        joint.w_rate_row(rows, table, opt, t_last)
        joint.lemma11_rows(rows, table, opt, t_last)
    if "gd" in optimizers:
        comparisons.joint_faster_than_gd_rows(rows, table, optimizers, t_last)


def claims(
    experiments: dict,
    tables: dict,
    W_mm_norms: dict,
    T_tokens: dict,
    hypotheses: dict | None = None,
    u_margins: dict | None = None,
) -> pd.DataFrame:
    """All claims of the configured experiments, as a table (one row per claim).

    experiments: name -> layout, optimizers (settings), labels and paper_figure
    (WorkflowConfig.claims_settings)."""
    out = []
    for name, experiment in experiments.items():
        kind, optimizers, table = experiment["layout"], experiment["optimizers"], tables[name]
        rows = Rows(name, (hypotheses or {}).get(name), experiment.get("labels"), optimizers,
                    kind, experiment.get("paper_figure"))  # fmt: skip
        if kind == "fixed_decoder":
            fixed_decoder_claims(rows, table, optimizers, W_mm_norms[name])
        elif kind == "joint":
            joint_claims(rows, table, optimizers, (u_margins or {}).get(name))
        elif kind == "two_token":
            direction.two_token_rate_rows(rows, table, optimizers, int(table["iteration"].max()))
        elif kind == "bad_init":
            global_convergence.bad_init_rows(rows, table, optimizers, T_tokens[name])
        elif kind == "bad_init_2d":
            global_convergence.bad_init_2d_rows(rows, table, optimizers, T_tokens[name])
        out += rows.rows
    return by_result(frame(out)).reset_index(drop=True)  # grouped by result, as shown
