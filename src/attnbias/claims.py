"""The paper's claims, measured: one row per claim, computed from the aggregate tables.

Every number comes from `results/{experiment}/metrics.parquet` (and ||W_mm|| from the SVM
files); nothing is typed in. A claim that does not hold on our runs says so: the table is
a measurement, not a certificate. Fits use a stated window of iterations and report R^2.

Optimizers are found by their config names: `gd` is the baseline; `ngd`, `ps`, `ngd-mom`
and `joint-ngd` are compared with it where the experiment has them.
"""

from __future__ import annotations

import html
import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

ADAPTIVE = ("ngd", "ps", "ngd-mom", "joint-ngd")


@dataclass
class Claim:
    experiment: str
    claim: str  # the claim, in one sentence
    source: str  # where the paper makes it
    quantity: str  # what was measured (and over which window)
    mean: float
    low: float  # smallest over seeds
    high: float  # largest over seeds
    reference: str  # the threshold or reference value
    holds: bool
    r2: float = math.nan  # smallest R^2 over seeds, for fitted quantities


def series(table: pd.DataFrame, optimizer: str, metric: str) -> pd.DataFrame:
    """One metric of one optimizer as an (iteration x seed) frame."""
    rows = table[(table["optimizer"] == optimizer) & (table["metric"] == metric)]
    if rows.empty:  # e.g. every value was undefined (NaN rows are not written)
        experiments = sorted(set(table["experiment"])) if "experiment" in table else []
        raise ValueError(
            f"experiment {', '.join(experiments) or '?'}: the aggregate table holds no "
            f"{metric} rows of optimizer {optimizer}, which the claims need"
        )
    return rows.pivot(index="iteration", columns="seed", values="value").sort_index()


def window(values: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    return values[(values.index >= lo) & (values.index <= hi)]


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y against x, and R^2."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    return float(slope), float(1 - residual @ residual / np.sum((y - y.mean()) ** 2))


def fit_per_seed(values: pd.DataFrame, x_of_t, y_of_value) -> tuple[np.ndarray, np.ndarray]:
    """Slopes and R^2 of y_of_value(values) against x_of_t(t), one per seed."""
    x = x_of_t(values.index.to_numpy(dtype=float))
    fits = [fit(x, y_of_value(values[seed].to_numpy())) for seed in values.columns]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])


def first_passage(values: pd.DataFrame, threshold: float) -> np.ndarray:
    """First logged iteration at which each seed's value is below `threshold` (inf: never)."""
    below = values < threshold
    return np.array(
        [below.index[below[s]].min() if below[s].any() else math.inf for s in values.columns]
    )


def _row(experiment, claim, source, quantity, values, reference, holds, r2=None) -> Claim:
    values = np.asarray(values, dtype=float)
    return Claim(
        experiment,
        claim,
        source,
        quantity,
        float(values.mean()),
        float(values.min()),
        float(values.max()),
        reference,
        bool(holds),
        math.nan if r2 is None else float(np.min(r2)),
    )


def fixed_decoder_claims(name, table, optimizers, W_mm_norms) -> list[Claim]:
    rows = []
    T = int(table["iteration"].max())
    gd = series(table, "gd", "gap_W") if "gd" in optimizers else None
    adaptive = [o for o in ADAPTIVE if o in optimizers]
    for threshold in (1e-2, 1e-3):
        gd_first = first_passage(gd, threshold) if gd is not None else None
        for opt in adaptive:
            first = first_passage(series(table, opt, "gap_W"), threshold)
            reference = (
                "no GD comparison"
                if gd_first is None
                else f"GD: {_describe_passage(gd_first, T)}; holds if every {opt} seed is first"
            )
            holds = np.all(np.isfinite(first)) and (
                gd_first is None or np.max(first) < np.min(gd_first)
            )
            rows.append(
                _row(
                    name,
                    "NGD and PS reach W_mm's direction faster than GD.",
                    "Sec. 3.2-3.3, Fig. 2",
                    f"{opt}: first iteration with 1 - cos(W_t, W_mm) < {threshold:g}",
                    np.where(np.isfinite(first), first, T + 1),
                    reference,
                    holds,
                )
            )
    if "ngd" in optimizers:
        lr = optimizers["ngd"].get("lr", 1.0)
        gap = window(series(table, "ngd", "gap_W"), T / 10, T)
        slopes, r2 = fit_per_seed(gap, np.log, np.log)
        rows.append(
            _row(
                name,
                "NGD's direction converges to W_mm at least at the rate of Thm. 1.",
                "Thm. 1 (bounds 1 - cos(W_t, W_mm) by O(t^-3/4), our reading)",
                f"ngd: slope of log(1 - cos(W_t, W_mm)) vs log t, t in [{T // 10}, {T}]",
                slopes,
                "<= -0.75",
                np.all(slopes <= -0.75),
                r2,
            )
        )
        norm = window(series(table, "ngd", "W_norm"), T / 10, T)
        slopes, r2 = fit_per_seed(norm, lambda t: t, lambda v: v)
        rows.append(
            _row(
                name,
                "Under NGD, ||W_t|| grows linearly in t.",
                "Sec. 3.4 (norm growth in the proof of Thm. 1)",
                f"ngd: slope of ||W_t|| vs t, t in [{T // 10}, {T}]",
                slopes,
                f"lr = {lr:g} per step; holds if within 5% and R^2 > 0.999",
                np.all(np.abs(slopes / lr - 1) < 0.05) and np.all(r2 > 0.999),
                r2,
            )
        )
        log1m = window(series(table, "ngd", "log1m_opt_softmax"), T / 2, T)
        slopes, r2 = fit_per_seed(log1m, lambda t: t, lambda v: v)
        predicted = -lr / np.asarray(W_mm_norms)
        rows.append(
            _row(
                name,
                "Under NGD, the optimal token's softmax approaches 1 exponentially fast.",
                "Lem. 1",
                f"ngd: slope of log(1 - mean opt softmax) vs t, t in [{T // 2}, {T}]",
                slopes,
                f"-lr/||W_mm|| = {predicted.mean():.4g} (mean over seeds); holds if within 10%",
                np.all(np.abs(slopes / predicted - 1) < 0.1),
                r2,
            )
        )
    if "gd" in optimizers:
        norm = window(series(table, "gd", "W_norm"), T / 100, T)
        slopes, r2 = fit_per_seed(norm, np.log, lambda v: v)
        loglog, _ = fit_per_seed(norm, np.log, np.log)
        rows.append(
            _row(
                name,
                "Under GD, ||W_t|| grows only logarithmically in t.",
                "Sec. 3.3",
                f"gd: slope of ||W_t|| vs log t, t in [{T // 100}, {T}]",
                slopes,
                "linear in log t: R^2 > 0.99, and log-log slope < 0.3 "
                f"(measured {loglog.max():.3f} at most)",
                np.all(r2 > 0.99) and np.all(loglog < 0.3),
                r2,
            )
        )
    return rows


def _describe_passage(first: np.ndarray, T: int) -> str:
    if np.all(np.isinf(first)):
        return f"not reached by t = {T}"
    reached = first[np.isfinite(first)]
    missing = int(np.sum(np.isinf(first)))
    text = f"{reached.min():g} to {reached.max():g}"
    return text + (f" ({missing} seeds not by t = {T})" if missing else "")


def two_token_claims(name, table, optimizers) -> list[Claim]:
    rows = []
    T = int(table["iteration"].max())
    if "gd" in optimizers:
        gap = window(series(table, "gd", "gap_W"), T / 100, T)
        slopes, r2 = fit_per_seed(gap, lambda t: np.log(np.log(t)), np.log)
        rows.append(
            _row(
                name,
                "GD's alignment gap decays only like 1/log^2 t.",
                "Sec. 3.3",
                f"gd: slope of log(1 - cos(W_t, W_mm)) vs log log t, t in [{T // 100}, {T}]",
                slopes,
                "-2 (gap ~ ||W0_perp||^2 / (2 log^2 t)); holds if within 0.2",
                np.all(np.abs(slopes + 2) < 0.2),
                r2,
            )
        )
    if "ngd" in optimizers:
        gap = window(series(table, "ngd", "gap_W"), T / 100, T)
        slopes, r2 = fit_per_seed(gap, np.log, np.log)
        rows.append(
            _row(
                name,
                "NGD's alignment gap decays polynomially, like t^-2.",
                "Sec. 3.3",
                f"ngd: slope of log(1 - cos(W_t, W_mm)) vs log t, t in [{T // 100}, {T}]",
                slopes,
                "-2 (gap ~ ||W0_perp||^2 / (2 lr^2 t^2)); holds if within 0.1",
                np.all(np.abs(slopes + 2) < 0.1),
                r2,
            )
        )
    return rows


def joint_claims(name, table, optimizers) -> list[Claim]:
    rows = []
    T = int(table["iteration"].max())
    for opt in [o for o in ("gd", *ADAPTIVE) if o in optimizers]:
        gap_u = series(table, opt, "gap_u")
        rows.append(
            _row(
                name,
                "Joint training: u converges in direction to u_mm.",
                "Thm. 4 (u-SVM), Fig. 3",
                f"{opt}: 1 - cos(u_t, u_mm) at t = {T}",
                gap_u.iloc[-1].to_numpy(),
                f"< 1e-3 by t = {T}",
                np.all(gap_u.iloc[-1] < 1e-3),
            )
        )
        log_loss = series(table, opt, "log_loss")
        late = window(log_loss, T / 10, T)
        drop = (late.iloc[0] - late.iloc[-1]).to_numpy()
        rows.append(
            _row(
                name,
                "Joint training: the train loss goes to 0.",
                "Thm. 2, Fig. 3",
                f"{opt}: decrease of log L over t in [{T // 10}, {T}] (log L at {T}: "
                f"{late.iloc[-1].max():.4g} at most)",
                drop,
                "log L decreases at every logged step of the window, by more than 1 in all",
                bool(np.all(np.diff(late.to_numpy(), axis=0) < 0)) and np.all(drop > 1),
            )
        )
        if opt not in ("ngd", "joint-ngd"):
            continue  # Thm. 3 is a statement about NGD
        gap_W = window(series(table, opt, "gap_W"), T / 10, T)
        slopes, r2 = fit_per_seed(gap_W, lambda t: np.log(np.log(t)), np.log)
        rows.append(
            _row(
                name,
                "Joint training: W converges in direction to W_mm at least at the 1/log t rate.",
                "Thm. 3 (for NGD with its extra step factors, which our runs drop)",
                f"{opt}: slope of log(1 - cos(W_t, W_mm)) vs log log t, t in [{T // 10}, {T}]",
                slopes,
                "<= -1",
                np.all(slopes <= -1),
                r2,
            )
        )
    return rows


def bad_init_claims(name, table, optimizers, T_tokens) -> list[Claim]:
    rows = []
    T = int(table["iteration"].max())
    for opt in optimizers:
        softmax = series(table, opt, "opt_softmax")
        gap = series(table, opt, "gap_W")
        late = window(gap, T / 100, T)
        holds = (
            np.all(softmax.iloc[0] < 1 / T_tokens)
            and np.all(softmax.iloc[-1] > 0.99)
            and bool(np.all(np.diff(late.to_numpy(), axis=0) <= 0))
        )
        rows.append(
            _row(
                name,
                "Convergence is global: from a bad stationary direction training reaches W_mm.",
                "Thm. 1, App. C.1, Fig. 8",
                f"{opt}: 1 - cos(W_t, W_mm) at t = {T}",
                gap.iloc[-1].to_numpy(),
                f"opt softmax starts below 1/T = {1 / T_tokens:.3g} "
                f"(measured {softmax.iloc[0].max():.3g} at most) and ends above 0.99 "
                f"({softmax.iloc[-1].min():.4g} at least); the gap decreases over "
                f"[{T // 100}, {T}]",
                holds,
            )
        )
    return rows


def claims(experiments: dict, tables: dict, W_mm_norms: dict, T_tokens: dict) -> pd.DataFrame:
    """All claims of the configured experiments, as a table."""
    rows = []
    for name, experiment in experiments.items():
        kind, optimizers, table = experiment["figure"], experiment["optimizers"], tables[name]
        if kind == "fixed_decoder":
            rows += fixed_decoder_claims(name, table, optimizers, W_mm_norms[name])
        elif kind == "joint":
            rows += joint_claims(name, table, optimizers)
        elif kind == "two_token":
            rows += two_token_claims(name, table, optimizers)
        elif kind == "bad_init":
            rows += bad_init_claims(name, table, optimizers, T_tokens[name])
    return pd.DataFrame([asdict(r) for r in rows])


TITLE = "The paper's claims, measured"
HOW_TO_READ = (
    "Computed from the aggregate tables of this build; value: mean over seeds "
    "(smallest to largest). R^2: the smallest over seeds, for fitted quantities."
)
COLUMNS = ("experiment", "claim", "where", "measured", "value", "reference", "R^2", "holds")


def _display_rows(table: pd.DataFrame):
    """Each claim as the cells of COLUMNS, as text; and whether it holds."""
    for r in table.itertuples():
        value = f"{r.mean:.4g} ({r.low:.4g} to {r.high:.4g})"
        r2 = "" if math.isnan(r.r2) else f"{r.r2:.4f}"
        verdict = "holds" if r.holds else "does not hold"
        cells = (r.experiment, r.claim, r.source, r.quantity, value, r.reference, r2, verdict)
        yield cells, bool(r.holds)


def to_markdown(table: pd.DataFrame) -> str:
    """The claims as a Markdown table with a header that says how to read it."""
    lines = [
        f"# {TITLE}",
        "",
        HOW_TO_READ,
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for cells, holds in _display_rows(table):
        if not holds:
            cells = (*cells[:-1], f"**{cells[-1]}**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_html(table: pd.DataFrame) -> str:
    """The same table as a standalone HTML page (the Snakemake report shows it inline)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    rows = []
    for cells, holds in _display_rows(table):
        tds = [f"<td>{html.escape(str(c))}</td>" for c in cells[:-1]]
        verdict = html.escape(cells[-1]) if holds else f"<strong>{html.escape(cells[-1])}</strong>"
        rows.append("<tr>" + "".join(tds) + f"<td>{verdict}</td></tr>")
    style = (
        "body{font-family:sans-serif;font-size:13px;margin:1em}"
        "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 6px;"
        "vertical-align:top;text-align:left}th{background:#eee}"
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(TITLE)}</title>"
        f"<style>{style}</style></head><body>\n<h1>{html.escape(TITLE)}</h1>\n"
        f"<p>{html.escape(HOW_TO_READ)}</p>\n<table><thead><tr>{head}</tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table></body></html>\n"
    )
