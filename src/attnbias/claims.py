"""The paper's results, measured: rows grouped by result, computed from the aggregate tables.

Every number comes from `results/{experiment}/metrics.parquet` (with ||W_mm|| from the SVM
files, the learned u's margin from the final parameters, and the hypotheses from the data
files); nothing is typed in. A row that does not hold on our runs says so: the table is a
measurement, not a certificate.

Each row states:
  result       the numbered result it tests (Thm. 1, Lem. 3, ...), its source in the paper;
  quantity     what was measured, over which window of iterations;
  mean, low, high   over seeds (every seed must pass, not only the mean);
  reference    the bound or predicted value and the tolerance. Where the paper's constant
               was lost in extraction the row says so and tests the form (a slope, a
               monotonicity, a ratio) with a threshold of ours, stated in the row;
  predicted, ratio  for results the paper says the runs agree with ("closely predicted"):
               the predicted rate and measured / predicted;
  hypotheses   whether the run's data satisfy the result's hypotheses (Ass. 1, Ass. 2,
               Condition 1; attnbias.data.hypotheses). A verdict on data outside them says so.

  algorithm, covered   the run's algorithm (ALGORITHMS, from its optimizer's settings) and
               whether the result is proved for it; a row on another algorithm is a
               comparison, never counted among the results that do not hold;
  undecided    a race neither method wins, or a fit with R^2 below R2_MIN;
  kind         "consistency" for near-tautologies, outside the count.

Optimizers are found by their config names: `gd` is the baseline; the others are compared
with it where the experiment has them. Rate results (Thm. 1, Thm. 7) get rows for the
uncapped algorithms only.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from attnbias.data import hypotheses as hyp
from attnbias.training.metrics import CROSSING_THRESHOLDS

ADAPTIVE = ("ngd", "ps", "ngd-mom", "joint-ngd")
CLOSENESS_TOLERANCE = 0.25  # |measured / predicted - 1| for "closely predicted" rows
MONOTONE_TOLERANCE = 1e-12  # relative: a decrease below this is rounding


@dataclass
class Claim:
    result: str  # the numbered result, e.g. "Thm. 1"
    experiment: str
    claim: str  # the claim, in one sentence
    source: str  # where the paper makes it
    quantity: str  # what was measured
    window: str  # over which iterations
    mean: float
    low: float  # smallest over seeds
    high: float  # largest over seeds
    reference: str  # the threshold or predicted value, and the tolerance
    holds: bool
    hypotheses: str = ""  # the measured hypotheses of the result on this run's data
    in_hypotheses: bool = True
    predicted: float = math.nan  # closeness rows: the predicted value
    ratio: float = math.nan  # closeness rows: mean measured / predicted
    r2: float = math.nan  # smallest R^2 over seeds, for fitted quantities
    key: str = ""  # a stable identifier (LaTeX macro names)
    value_text: str = ""  # how to show the value where numbers alone mislead ("not reached")
    algorithm: str = ""  # the run's algorithm, in words (ALGORITHMS)
    covered: bool = True  # whether the result is proved (or, for a figure, shown) for it
    undecided: bool = False  # the run cannot decide the claim (see the reference)
    kind: str = "test"  # "test", or "consistency" (a near-tautology, outside the count)
    window_ratio: float = math.nan  # bound rows: max over the window of measured/predicted

    @property
    def category(self) -> str:
        """consistency, outside (data outside the hypotheses), comparison (an algorithm the
        result does not cover), or covered: what the summary line counts the row as."""
        if self.kind == "consistency":
            return "consistency"
        if not self.in_hypotheses:
            return "outside"
        return "covered" if self.covered else "comparison"

    @property
    def outcome(self) -> str:
        if self.undecided:
            return "undecided"
        return "holds" if self.holds else "does not hold"

    @property
    def verdict(self) -> str:
        if self.kind == "consistency":
            return f"consistency check: {'consistent' if self.holds else 'INCONSISTENT'}"
        text = self.outcome
        if not self.covered:
            text = f"comparison: {text} (not proved for {self.algorithm})"
        if not self.in_hypotheses:
            text += f" (outside hypotheses: {self.hypotheses_broken})"
        return text

    @property
    def hypotheses_broken(self) -> str:
        return ", ".join(
            part.split(" BROKEN")[0] + " broken"
            for part in self.hypotheses.split("; ")
            if "BROKEN" in part
        )


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


def has(table: pd.DataFrame, optimizer: str, metric: str) -> bool:
    return bool(((table["optimizer"] == optimizer) & (table["metric"] == metric)).any())


def window(values: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    return values[(values.index >= lo) & (values.index <= hi)]


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y against x, and R^2."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = np.sum((y - y.mean()) ** 2)
    return float(slope), float(1 - residual @ residual / total) if total > 0 else math.nan


def fit_per_seed(values: pd.DataFrame, x_of_t, y_of_value) -> tuple[np.ndarray, np.ndarray]:
    """Slopes and R^2 of y_of_value(values) against x_of_t(t), one per seed."""
    if values.empty or len(values) < 3:
        raise ValueError("too few logged iterations in the fit window")
    x = x_of_t(values.index.to_numpy(dtype=float))
    fits = [fit(x, y_of_value(values[seed].to_numpy())) for seed in values.columns]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])


def first_passage(values: pd.DataFrame, threshold: float) -> np.ndarray:
    """First logged iteration at which each seed's value is below `threshold` (inf: never)."""
    below = values < threshold
    return np.array(
        [below.index[below[s]].min() if below[s].any() else math.inf for s in values.columns]
    )


def first_crossing(table: pd.DataFrame, optimizer: str, threshold: float, seeds) -> np.ndarray:
    """The exact first iteration with 1 - cos(W_t, W_mm) < threshold, per seed (inf: never).

    The training loop checks every step (metric first_gap_W_below_{threshold:g}); where that
    metric is absent (older tables) the log grid is used.
    """
    metric = f"first_gap_W_below_{threshold:g}"
    if not table["metric"].str.startswith("first_gap_W_below_").any():
        return first_passage(series(table, optimizer, "gap_W"), threshold)
    if not has(table, optimizer, metric):  # no seed crossed (NaN rows are not written)
        return np.full(len(seeds), math.inf)
    last = series(table, optimizer, metric).iloc[-1]
    return np.array([last.get(s, math.inf) for s in seeds], dtype=float)


def largest_decrease(values: pd.DataFrame) -> np.ndarray:
    """Per seed, the largest drop between consecutive logged values, relative to the scale."""
    v = values.to_numpy()
    drops = -np.diff(v, axis=0) / np.maximum(np.abs(v[:-1]), 1e-300)
    return np.max(np.maximum(drops, 0.0), axis=0)


def describe_passage(first: np.ndarray, t_last: int) -> str:
    if np.all(np.isinf(first)):
        return f"not reached by t = {t_last}"
    reached = first[np.isfinite(first)]
    missing = int(np.sum(np.isinf(first)))
    text = f"{reached.mean():.4g} ({reached.min():g} to {reached.max():g})"
    return text + (f" ({missing} seeds not by t = {t_last})" if missing else "")


def paper_figure(experiment: str) -> str | None:
    """The paper's figure an experiment reproduces, read from its name (fig9 -> "Fig. 9",
    fig2_uncapped -> "Fig. 2"); None for other names (gd_vs_ngd, a user's experiment)."""
    match = re.match(r"fig(\d+)(?:_|$)", experiment)
    return f"Fig. {match.group(1)}" if match else None


class Rows:
    """Collects the rows of one experiment, with its hypotheses attached to each.

    Rows are written with the optimizers' config names (gd, ngd, ...); the table shows the
    experiment's own labels (its legend's) in the claim, quantity, reference and value, and
    cites the experiment's own figure of the paper where the source names one.
    """

    def __init__(self, experiment: str, hypotheses: dict | None, labels: dict | None = None,
                 optimizers: dict | None = None, layout: str = "fixed_decoder"):  # fmt: skip
        self.experiment = experiment
        self.hypotheses = hypotheses
        self.labels = labels or {}
        self.algorithms = {o: algorithm(o, s, layout) for o, s in (optimizers or {}).items()}
        self.figure = paper_figure(experiment)
        self.rows: list[Claim] = []

    def named(self, text: str) -> str:
        """`text` with each optimizer's config name replaced by its label."""
        if not self.labels:
            return text
        names = sorted(self.labels, key=len, reverse=True)  # ngd-mom before ngd
        pattern = r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])"
        return re.sub(pattern, lambda m: self.labels[m.group(1)], text)

    def cite(self, source: str) -> str:
        """`source` citing this experiment's figure instead of the one the row was written
        for (a claim of Fig. 2 measured on fig9 cites Fig. 9); none where it has none."""
        if self.figure:
            return re.sub(r"Fig\. \d+", self.figure, source)
        return re.sub(r"(, |; )?Fig\. \d+( \([^)]*\))?", "", source).strip(" ,;")

    def add(self, result, key, claim, source, quantity, window_text, values, reference, holds,
            *, needs=("ass1", "ass2"), r2=None, predicted=math.nan, value_text="", opt=None,
            covers=None, undecided=False, kind="test", window_ratio=math.nan,
            scope=""):  # fmt: skip
        """One row. opt: the optimizer the row measures (named in the claim); covers: the
        algorithms (ALGORITHMS keys) the result is proved for, None: any; scope: what the
        comparison verdict names as not covered (default: the run's algorithm)."""
        values = np.asarray(values, dtype=float)
        text, inside = _hypotheses_of(self.hypotheses, needs)
        mean = float(values.mean())
        kind_of_run = self.algorithms.get(opt, "")
        if opt is not None:
            claim = f"{opt}: {claim}"
        self.rows.append(
            Claim(
                result=result,
                experiment=self.experiment,
                claim=self.named(claim),
                source=self.cite(source),
                quantity=self.named(quantity),
                window=window_text,
                mean=mean,
                low=float(values.min()),
                high=float(values.max()),
                reference=self.named(reference),
                holds=bool(holds),
                hypotheses=text,
                in_hypotheses=inside,
                predicted=float(predicted),
                ratio=mean / predicted if np.isfinite(predicted) and predicted else math.nan,
                r2=math.nan if r2 is None else float(np.min(r2)),
                key=f"{self.experiment} {key}",
                value_text=self.named(value_text),
                algorithm=scope or ALGORITHMS.get(kind_of_run, kind_of_run),
                covered=covers is None or kind_of_run in covers,
                undecided=bool(undecided),
                kind=kind,
                window_ratio=float(window_ratio),
            )
        )


# The algorithm of a run, from its optimizer's settings: each result covers some of them.
ALGORITHMS = {
    "gd": "GD",
    "ngd": "NGD (uncapped)",
    "ngd-capped": "NGD with a step cap",
    "ngd-mom": "NGD with momentum",
    "ps": "PS (uncapped)",
    "ps-capped": "PS with a step cap",
    "per-block-ngd": "per-block NGD, Eq. 10 without its step factors",
    "joint-ngd": "joint NGD, one norm over (W, u)",
    "eq10": "Eq. 10 with its step factors",
}
# Which algorithms each result is proved for (Sec. 3: NGD and PS uncapped; Sec. 4: Eq. 10).
SEC3_NGD, SEC3_PS, EQ10 = ("ngd",), ("ps",), ("eq10",)
GLOBAL = ("gd", "ngd")  # global convergence: Thm. 1 (NGD); App. C.1 shows it for GD


def algorithm(name: str, settings: dict, layout: str) -> str:
    """The ALGORITHMS key of an optimizer (its config name and settings) in a layout."""
    rule = settings.get("rule") or {"gd": "gd", "ps": "polyak"}.get(name, "ngd")
    if rule == "gd":
        return "gd"
    if rule == "polyak":
        return "ps" if settings.get("eta_max") is None else "ps-capped"
    if settings.get("decay_W") or settings.get("decay_u"):
        return "eq10"
    if settings.get("momentum"):
        return "ngd-mom"
    if layout == "joint":
        return "per-block-ngd" if settings.get("normalize") == "per_block" else "joint-ngd"
    return "ngd" if settings.get("max_step") is None else "ngd-capped"


def _hypotheses_of(summary: dict | None, needs) -> tuple[str, bool]:
    """The text and verdict of the hypotheses in `needs` (ass1, ass2, cond1) on the data."""
    if summary is None:
        return "not measured", False
    parts, inside = [], True
    for need in needs:
        if f"{need}_holds" not in summary:
            parts.append(f"{_NAMES[need]} BROKEN (not applicable to this data model)")
            inside = False
            continue
        ok = summary[f"{need}_holds"]
        inside &= ok
        parts.append(f"{_NAMES[need]} {'holds' if ok else 'BROKEN'} ({_VALUES[need](summary)})")
    return "; ".join(parts), inside


_NAMES = {
    "ass1": "Ass. 1",
    "ass2": "Ass. 2",
    "cond1": "Cond. 1",
    "cond1_sv": "Cond. 1 iii as Lem. 11 uses it",
}
_VALUES = {
    "ass1": lambda s: f"rho {s['ass1_rho']:.2g} {'<=' if s['ass1_holds'] else '>'} {hyp.RHO_MAX:g}",
    "cond1_sv": lambda s: (
        f"{s['cond1_sv_fraction']:.0%} of samples are u-SVM support vectors (worst seed); "
        f"largest u-SVM margin {s['cond1_u_margin_max']:.3g}"
    ),
    "ass2": lambda s: (
        f"non-opt score spread {s['ass2_spread']:.2g}, opt gap {s['ass2_opt_gap']:.2g}"
    ),
    "cond1": lambda s: (
        f"zero init {s['cond1_zero_init']}, opt/non-opt sq-norm ratio "
        f"{s['cond1_opt_norm_ratio']:.2g}, d/(nT) {s['cond1_d_over_nT']:.2g}; step size not "
        "judged (constant lost)"
    ),
}


def _uncapped(opt: dict) -> bool:
    return opt.get("max_step") is None and opt.get("eta_max") is None


R2_MIN = 0.9  # a fitted slope with a smaller R^2 (on some seed) decides nothing: "undecided"
BURN_IN = 100  # comparisons over the whole run start at t_last / BURN_IN


def race(first: np.ndarray, rival: np.ndarray) -> tuple[bool, bool]:
    """(holds, undecided) of "crosses before the rival", seed by seed (inf: never crossed).

    Holds if every seed crosses strictly first; does not hold if the rival crosses first on
    some seed; otherwise (some seed where neither gets there, or a tie) undecided."""
    won, lost = first < rival, rival < first
    if won.all():
        return True, False
    return False, not lost.any()


def ahead(mine: pd.DataFrame, rival: pd.DataFrame) -> tuple[np.ndarray, bool, bool]:
    """Per seed, the last logged t at which `mine` is not below `rival` (0: never); and
    (holds, undecided) of "below at every logged t": does not hold if `mine` ends at or
    above the rival on some seed, undecided if it ends below but was not below throughout."""
    mine, rival = mine.align(rival, join="inner")
    behind = mine >= rival
    last = np.array([behind.index[behind[s]].max() if behind[s].any() else 0 for s in mine])
    if not behind.to_numpy().any():
        return last, True, False
    return last, False, not behind.iloc[-1].any()


def fitted_bound(slopes, r2, within: bool) -> tuple[bool, bool]:
    """(holds, undecided) of a bound read through fitted slopes: undecided below R2_MIN."""
    if np.min(r2) < R2_MIN:
        return False, True
    return bool(within), False


def curve_ratio(values: pd.DataFrame, x_of_t, y_of_value, slope: float) -> np.ndarray:
    """Per seed, the largest measured / predicted over the window, where the prediction is
    the rate `slope` (of y = log value against x) from the window's first logged value."""
    x = x_of_t(values.index.to_numpy(dtype=float))
    out = []
    for seed in values.columns:
        y = y_of_value(values[seed].to_numpy())
        out.append(np.max(y - (y[0] + slope * (x - x[0]))))
    return np.exp(np.array(out))


def _crossing_rows(rows: Rows, table, optimizers, t_last, seeds) -> None:
    """Sec. 3.3: NGD and PS (uncapped) reach W_mm's direction before GD: the exact first
    crossings of each threshold, and 1 - cos below GD's over the whole run."""
    adaptive = [o for o in optimizers if rows.algorithms[o] != "gd"]
    result, source = (
        "Sec. 3.3: NGD (and PS) faster than GD",
        "Sec. 3.3, Thm. 1 against Eq. 3; Fig. 2",
    )
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
                f"GD: {describe_passage(gd_first, t_last)}; holds if {opt} crosses first on "
                "every seed, does not hold if GD crosses first on one, undecided where neither "
                "crosses",
                holds,
                value_text=describe_passage(first, t_last),
                opt=opt,
                covers=SEC3_NGD + SEC3_PS,
                undecided=undecided,
            )
    gd_gap = window(series(table, "gd", "gap_W"), t_last / BURN_IN, t_last)
    for opt in adaptive:
        gap = window(series(table, opt, "gap_W"), t_last / BURN_IN, t_last)
        last, holds, undecided = ahead(gap, gd_gap)
        rows.add(
            result,
            f"ahead of gd {opt}",
            "1 - cos(W_t, W_mm) is below GD's at every logged t after the burn-in.",
            source,
            f"last logged t at which {opt}'s 1 - cos(W_t, W_mm) is not below GD's (0: never); "
            f"{opt} / GD at t = {t_last}: {float((gap.iloc[-1] / gd_gap.iloc[-1]).max()):.3g} "
            "at most",
            f"t in [{t_last // BURN_IN}, {t_last}]",
            last,
            "holds if below on every seed at every logged t (burn-in: t < "
            f"{t_last // BURN_IN}); does not hold if at or above GD's at t = {t_last} on a seed",
            holds,
            opt=opt,
            covers=SEC3_NGD + SEC3_PS,
            undecided=undecided,
        )


def fixed_decoder_claims(rows: Rows, table, optimizers, W_mm_norms) -> None:
    t_last = int(table["iteration"].max())
    seeds = sorted(table["seed"].unique())
    if "gd" in optimizers:
        _crossing_rows(rows, table, optimizers, t_last, seeds)
    if "ps" in optimizers and {"ngd", "ngd-mom"} & set(optimizers):
        first = first_crossing(table, "ps", CROSSING_THRESHOLDS[0], seeds)
        others = [o for o in ("ngd", "ngd-mom") if o in optimizers]
        rival = np.min([first_crossing(table, o, CROSSING_THRESHOLDS[0], seeds) for o in others], 0)
        holds, undecided = race(first, rival)
        rows.add(
            "Fig. 2: PS fastest early",
            "ps fastest",
            "reaches W_mm's direction first (PS converges faster than NGD).",
            "Sec. 3.2 (Extension to Polyak step), Fig. 2",
            f"first iteration with 1 - cos(W_t, W_mm) < {CROSSING_THRESHOLDS[0]:g}",
            f"t <= {t_last}",
            first,
            f"{' and '.join(others)}: {describe_passage(rival, t_last)} (earliest of them, per "
            "seed); holds if PS crosses first on every seed, undecided where none crosses",
            holds,
            value_text=describe_passage(first, t_last),
            opt="ps",
            undecided=undecided,
        )
    for opt, result in (("ngd", "Thm. 1"), ("ps", "Thm. 7")):
        if opt in optimizers and _uncapped(optimizers[opt]):
            _rate_rows(rows, table, opt, result, t_last)
    for opt in ("ngd", "ps"):
        if opt in optimizers:
            _softmax_monotone_row(rows, table, opt, t_last)
    if "ngd" in optimizers and _uncapped(optimizers["ngd"]):
        _ngd_consistency_rows(rows, table, optimizers["ngd"].get("lr", 1.0), W_mm_norms, t_last)
    if "gd" in optimizers:
        _log_norm_row(rows, table, t_last, covered=False)


def _ngd_consistency_rows(rows: Rows, table, lr, W_mm_norms, t_last) -> None:
    """Near-tautologies of NGD, outside the count: ||W_t|| <= lr t always, and Lem. 1's
    exponent -lr/||W_mm|| follows once ||W_t|| = lr t and the direction has converged."""
    norm = window(series(table, "ngd", "W_norm"), t_last / 10, t_last)
    slopes, r2 = fit_per_seed(norm, lambda t: t, lambda v: v)
    rows.add(
        "Thm. 1: norm growth",
        "ngd norm slope",
        "||W_t|| grows linearly in t.",
        "Sec. 3.2 (norm growth in the proof of Thm. 1)",
        "slope of ||W_t|| against t",
        f"t in [{t_last // 10}, {t_last}]",
        slopes,
        f"lr = {lr:g} per step (each step adds at most lr, so ||W_t|| <= lr t always); "
        "consistent if within 5% and R^2 > 0.999",
        np.all(np.abs(slopes / lr - 1) < 0.05) and np.all(r2 > 0.999),
        r2=r2,
        predicted=lr,
        opt="ngd",
        kind="consistency",
    )
    log1m = window(series(table, "ngd", "log1m_opt_softmax"), t_last / 2, t_last)
    slopes, r2 = fit_per_seed(log1m, lambda t: t, lambda v: v)
    exponents = -lr / np.asarray(W_mm_norms)
    rows.add(
        "Lem. 1",
        "ngd softmax rate",
        "The optimal token's softmax approaches 1 exponentially fast, at the rate of Lem. 1 "
        "('closely aligns with the empirical rate').",
        "Lem. 1, Sec. 3.2",
        "slope of ln(1 - mean opt softmax) against t",
        f"t in [{t_last // 2}, {t_last}]",
        slopes,
        f"-lr/||W_mm|| = {float(np.mean(exponents)):.4g} (mean over seeds): OUR derivation of "
        "Lem. 1's exponent, which follows once ||W_t|| = lr t and W_t's direction is W_mm's; "
        f"consistent if every seed is within {CLOSENESS_TOLERANCE:.0%}",
        np.all(np.abs(slopes / exponents - 1) < CLOSENESS_TOLERANCE),
        r2=r2,
        predicted=float(np.mean(exponents)),
        opt="ngd",
        kind="consistency",
    )


def _log_norm_row(rows: Rows, table, t_last, *, covered: bool) -> None:
    """Sec. 3.3: under GD ||W_t|| grows like log t. Derived there for the two-token example
    only (covered), elsewhere a comparison: a + b ln t against a power law c t^k, both fitted
    to ||W_t||, by AIC (both have two parameters: AIC difference = N ln(RSS_pow / RSS_log))."""
    norm = window(series(table, "gd", "W_norm"), t_last / 100, t_last)
    ln_t = np.log(norm.index.to_numpy(dtype=float))
    delta, r2_log, r2_pow = [], [], []
    for seed in norm.columns:
        v = norm[seed].to_numpy()
        log_fit = np.polyval(np.polyfit(ln_t, v, 1), ln_t)
        pow_fit = np.exp(np.polyval(np.polyfit(ln_t, np.log(v), 1), ln_t))
        total = np.sum((v - v.mean()) ** 2)
        rss_log, rss_pow = np.sum((v - log_fit) ** 2), np.sum((v - pow_fit) ** 2)
        delta.append(len(v) * math.log(rss_pow / rss_log))
        r2_log.append(1 - rss_log / total)
        r2_pow.append(1 - rss_pow / total)
    delta = np.array(delta)
    # undecided only where neither form describes the curve
    holds, undecided = fitted_bound(None, np.maximum(r2_log, r2_pow), np.all(delta > 0))
    rows.add(
        "Sec. 3.3: GD's norm",
        "gd norm log growth",
        "||W_t|| grows like log t (a + b ln t fits better than a power law c t^k).",
        "Sec. 3.3 (the two-token example)",
        "AIC(power law) - AIC(a + b ln t), fitted to ||W_t|| (> 0 favours log growth); R^2 of "
        f"the power law {min(r2_pow):.4f} at least",
        f"t in [{t_last // 100}, {t_last}]",
        delta,
        f"holds if > 0 on every seed; undecided where neither fit reaches R^2 {R2_MIN:g}",
        holds,
        r2=r2_log,
        opt="gd",
        covers=("gd",) if covered else (),
        undecided=undecided,
        scope="" if covered else "GD outside Sec. 3.3's two-token example",
    )


# The rate of Thm. 1 as we read it (the exponent survived only in our reading of the text).
THM1_SLOPE = -0.75


def _rate_rows(rows: Rows, table, opt, result, t_last) -> None:
    """Thm. 1 (NGD) or Thm. 7 (PS): the bound on the alignment rate, and how close."""
    misalignment = window(series(table, opt, "gap_W"), t_last / 10, t_last)
    misalignment = misalignment[(misalignment > 0).all(axis=1)]
    slopes, r2 = fit_per_seed(misalignment, np.log, np.log)
    ratio = curve_ratio(misalignment, np.log, np.log, THM1_SLOPE)
    note = (
        "Thm. 1's rate t^-3/4 (our reading of the extracted text)"
        if result == "Thm. 1"
        else "Thm. 7's rate was lost in extraction; as Thm. 1's analogue we test Thm. 1's "
        "t^-3/4 form"
    )
    covers = SEC3_NGD if result == "Thm. 1" else SEC3_PS
    holds, undecided = fitted_bound(slopes, r2, np.all(slopes <= THM1_SLOPE) and np.all(ratio <= 1))
    rows.add(
        result,
        f"{opt} rate bound",
        f"the direction converges to W_mm at least at the rate of {result}.",
        f"{result}, Sec. 3.2",
        "slope of ln(1 - cos(W_t, W_mm)) against ln t; window ratio: the largest 1 - cos over "
        "t^-3/4 from the window's first value",
        f"t in [{t_last // 10}, {t_last}]",
        slopes,
        f"{note}; a bound: holds if every slope <= {THM1_SLOPE:g} and the window ratio <= 1 "
        f"(R^2 >= {R2_MIN:g}, else undecided)",
        holds,
        r2=r2,
        predicted=THM1_SLOPE,
        opt=opt,
        covers=covers,
        undecided=undecided,
        window_ratio=float(ratio.max()),
    )
    if result == "Thm. 1":
        close = np.all(np.abs(slopes / THM1_SLOPE - 1) <= CLOSENESS_TOLERANCE)
        holds, undecided = fitted_bound(slopes, r2, close)
        rows.add(
            result,
            f"{opt} rate closeness",
            "the alignment is 'closely predicted by Thm. 1'.",
            "Sec. 3.2 (below Lem. 1), Fig. 2",
            "slope of ln(1 - cos(W_t, W_mm)) against ln t",
            f"t in [{t_last // 10}, {t_last}]",
            slopes,
            f"{note}; holds if measured/predicted is within 1 +- {CLOSENESS_TOLERANCE:g} on "
            f"every seed (R^2 >= {R2_MIN:g}, else undecided)",
            holds,
            r2=r2,
            predicted=THM1_SLOPE,
            opt=opt,
            covers=covers,
            undecided=undecided,
        )


def _softmax_monotone_row(rows: Rows, table, opt, t_last) -> None:
    """Lem. 3 (NGD; for PS in Thm. 7's proof): the optimal token's softmax never decreases."""
    metric = "min_opt_softmax" if has(table, opt, "min_opt_softmax") else "opt_softmax"
    drops = largest_decrease(series(table, opt, metric))
    rows.add(
        "Lem. 3",
        f"{opt} softmax monotone",
        "the optimal token's softmax does not decrease.",
        "Lem. 3 (NGD); App. A, proof of Thm. 7 (PS)",
        f"largest relative decrease of the {metric.replace('_', ' ')} between logged iterations",
        f"t in [0, {t_last}]",
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} (rounding) on every seed",
        np.all(drops <= MONOTONE_TOLERANCE),
        opt=opt,
        covers=SEC3_NGD + SEC3_PS,
    )


def two_token_claims(rows: Rows, table, optimizers) -> None:
    t_last = int(table["iteration"].max())
    for opt, x_of_t, x_text, predicted, tol, law in (
        ("gd", lambda t: np.log(np.log(t)), "ln ln t", -2.0, 0.1, "||W0_perp||^2 / (2 log^2 t)"),
        ("ngd", np.log, "ln t", -2.0, 0.05, "||W0_perp||^2 / (2 lr^2 t^2)"),
    ):
        if opt not in optimizers:
            continue
        misalignment = window(series(table, opt, "gap_W"), t_last / 100, t_last)
        slopes, r2 = fit_per_seed(misalignment, x_of_t, np.log)
        ratio = curve_ratio(misalignment, x_of_t, np.log, predicted)
        holds, undecided = fitted_bound(slopes, r2, np.all(np.abs(slopes / predicted - 1) <= tol))
        rows.add(
            "Sec. 3.3: GD against NGD",
            f"two token {opt} rate",
            f"the alignment gap decays like {law}.",
            "Sec. 3.3, Eq. 3",
            f"slope of ln(1 - cos(W_t, W_mm)) against {x_text}; window ratio: the largest "
            "measured over predicted from the window's first value",
            f"t in [{t_last // 100}, {t_last}]",
            slopes,
            f"{predicted:g} (gap ~ {law}; our derivation from Sec. 3.3's example); holds if "
            f"measured/predicted is within 1 +- {tol:g} on every seed (R^2 >= {R2_MIN:g}, "
            "else undecided)",
            holds,
            r2=r2,
            predicted=predicted,
            opt=opt,
            covers=("gd", "ngd"),
            undecided=undecided,
            window_ratio=float(ratio.max()),
        )
    if "gd" in optimizers and has(table, "gd", "W_norm"):
        _log_norm_row(rows, table, t_last, covered=True)


JOINT_NEEDS = ("ass1", "cond1")
LEMMA11_NEEDS = ("ass1", "cond1", "cond1_sv")
U_MARGIN_MIN = 0.99  # Thm. 4's factor was lost; GD reaches 0.92 on fig3 at 10^4 (measured)
THM2_EXPONENT = 0.4  # -ln L ~ t^k: Eq. 10's u-step (t+1)^-1/2 gives k = 1/2; ours, less 0.1


def joint_claims(rows: Rows, table, optimizers, u_margins: dict | None) -> None:
    t_last = int(table["iteration"].max())
    for opt in optimizers:
        misalignment_u = series(table, opt, "gap_u")
        rows.add(
            "Thm. 4: u's direction",
            f"{opt} u direction",
            "u converges in direction to u_mm.",
            "Thm. 4 (u-SVM), Fig. 3",
            "1 - cos(u_t, u_mm)",
            f"t = {t_last}",
            misalignment_u.iloc[-1].to_numpy(),
            "< 1e-3 (our threshold; Thm. 4's rate constant was lost)",
            np.all(misalignment_u.iloc[-1] < 1e-3),
            needs=JOINT_NEEDS,
            opt=opt,
            covers=EQ10,
        )
        if u_margins and opt in u_margins:
            ratio = np.asarray(u_margins[opt])
            rows.add(
                "Thm. 4: u's margin",
                f"{opt} u margin",
                "the learned u attains a constant factor of u_mm's margin.",
                "Thm. 4",
                "min_i y_i u^T x_opt,i / ||u||, over u_mm's margin 1/||u_mm||",
                f"t = {t_last}",
                ratio,
                f"the factor was lost in extraction; holds if >= {U_MARGIN_MIN:g} on every "
                "seed (ours: GD, which Thm. 4 does not cover, stays below it at 10^4 on fig3)",
                np.all(ratio >= U_MARGIN_MIN),
                needs=JOINT_NEEDS,
                opt=opt,
                covers=EQ10,
            )
        _loss_rows(rows, table, opt, optimizers, t_last)
        if rows.algorithms[opt] in ("gd", "ps", "ps-capped"):
            continue  # Thm. 3 and Lem. 11 concern the normalised updates
        misalignment_W = window(series(table, opt, "gap_W"), t_last / 10, t_last)
        ln_ln = lambda t: np.log(np.log(t))  # noqa: E731
        slopes, r2 = fit_per_seed(misalignment_W, ln_ln, np.log)
        ratio = curve_ratio(misalignment_W, ln_ln, np.log, -1.0)
        holds, undecided = fitted_bound(slopes, r2, np.all(slopes <= -1) and np.all(ratio <= 1))
        rows.add(
            "Thm. 3",
            f"{opt} W rate bound",
            "W converges in direction to W_mm at least at the 1/log t rate.",
            "Thm. 3 (Eq. 10 with its step factors)",
            "slope of ln(1 - cos(W_t, W_mm)) against ln ln t; window ratio: the largest "
            "1 - cos over 1/log t from the window's first value",
            f"t in [{t_last // 10}, {t_last}]",
            slopes,
            "a bound: holds if every slope <= -1 (1/log t) and the window ratio <= 1 "
            f"(R^2 >= {R2_MIN:g}, else undecided); a gap that stalls fails it",
            holds,
            needs=JOINT_NEEDS,
            r2=r2,
            predicted=-1.0,
            opt=opt,
            covers=EQ10,
            undecided=undecided,
            window_ratio=float(ratio.max()),
        )
        _lemma11_rows(rows, table, opt, t_last)
    if "gd" in optimizers:
        gd_gap = window(series(table, "gd", "gap_W"), t_last / BURN_IN, t_last)
        for opt in [o for o in optimizers if o != "gd"]:
            gap = window(series(table, opt, "gap_W"), t_last / BURN_IN, t_last)
            last, holds, undecided = ahead(gap, gd_gap)
            rows.add(
                "Fig. 3: faster than GD",
                f"ahead of gd {opt} W",
                "1 - cos(W_t, W_mm) is below GD's at every logged t after the burn-in.",
                "Sec. 5, Fig. 3 ('all other algorithms are faster than GD')",
                f"last logged t at which it is not below GD's (0: never); {opt} / GD at "
                f"t = {t_last}: {float((gap.iloc[-1] / gd_gap.iloc[-1]).max()):.3g} at most",
                f"t in [{t_last // BURN_IN}, {t_last}]",
                last,
                f"holds if below on every seed at every logged t >= {t_last // BURN_IN}; does "
                f"not hold if at or above GD's at t = {t_last} on a seed",
                holds,
                needs=JOINT_NEEDS,
                opt=opt,
                covers=("per-block-ngd", "ps", "joint-ngd"),  # the figure's algorithms
                undecided=undecided,
            )


def _loss_rows(rows: Rows, table, opt, optimizers, t_last) -> None:
    """Thm. 2 as a rate (-ln L ~ t^k) and as "faster than GD" over the whole run."""
    log_loss = series(table, opt, "log_loss")
    late = window(log_loss, t_last / 10, t_last)
    exponents, r2 = fit_per_seed(late, np.log, lambda v: np.log(-v))
    holds, undecided = fitted_bound(exponents, r2, np.all(exponents >= THM2_EXPONENT))
    rows.add(
        "Thm. 2: loss rate",
        f"{opt} loss rate",
        "the train loss falls fast: -ln L grows like a power t^k of t.",
        "Thm. 2 (rate lost in extraction; 'analogous to linear predictors on separable data', "
        "slower as the steps shrink)",
        f"exponent k of -ln L ~ t^k (slope of ln(-ln L) against ln t; ln L at {t_last}: "
        f"{late.iloc[-1].max():.4g} at most)",
        f"t in [{t_last // 10}, {t_last}]",
        exponents,
        f"holds if k >= {THM2_EXPONENT:g} on every seed (ours: Eq. 10's u-steps (t+1)^-1/2 give "
        f"||u_t|| ~ sqrt t, k = 1/2; GD's -ln L grows like ln t, k near 0), R^2 >= {R2_MIN:g} "
        "(else undecided)",
        holds,
        needs=JOINT_NEEDS,
        r2=r2,
        opt=opt,
        covers=EQ10,
        undecided=undecided,
    )
    if opt == "gd" or "gd" not in optimizers:
        return
    gd_loss = window(series(table, "gd", "log_loss"), t_last / BURN_IN, t_last)
    mine = window(log_loss, t_last / BURN_IN, t_last)
    last, holds, undecided = ahead(mine, gd_loss)
    rows.add(
        "Thm. 2: loss rate",
        f"{opt} loss ahead of gd",
        "the train loss is below GD's at every logged t after the burn-in.",
        "Thm. 2 against GD (Fig. 3)",
        f"last logged t at which ln L is not below GD's (0: never); at t = {t_last}: ln L "
        f"{mine.iloc[-1].max():.4g} at most, GD {gd_loss.iloc[-1].min():.4g} at least",
        f"t in [{t_last // BURN_IN}, {t_last}]",
        last,
        f"holds if below on every seed at every logged t >= {t_last // BURN_IN}; does not "
        f"hold if at or above GD's at t = {t_last} on a seed",
        holds,
        needs=JOINT_NEEDS,
        opt=opt,
        covers=EQ10,
        undecided=undecided,
    )


def _lemma11_rows(rows: Rows, table, opt, t_last) -> None:
    if not has(table, opt, "log_loss_ratio"):
        return
    ratio = series(table, opt, "log_loss_ratio")
    early, late = window(ratio, 0, t_last / 10).max(), window(ratio, t_last / 10, t_last).max()
    growth = (late - early).to_numpy()
    rows.add(
        "Lem. 11",
        f"{opt} loss ratio",
        "the loss ratio across samples stays bounded by a constant.",
        "Lem. 11 (iii), Sec. 4.3",
        f"growth of max_t ln(max_i l_i / min_i l_i) from [0, {t_last // 10}] to "
        f"[{t_last // 10}, {t_last}] (late max {late.max():.3g})",
        f"t in [0, {t_last}]",
        growth,
        "the constant was lost; holds if the late maximum exceeds the early one by at most "
        "1 (a factor e) on every seed (ours)",
        np.all(growth <= 1),
        needs=LEMMA11_NEEDS,
        opt=opt,
        covers=EQ10,
    )
    score_gap = window(series(table, opt, "min_score_gap"), 1, t_last)
    drops = largest_decrease(score_gap)
    rows.add(
        "Lem. 11",
        f"{opt} score gap",
        "the score gap between optimal and non-optimal tokens grows.",
        "Lem. 11 (i), Sec. 4.3",
        "largest relative decrease of min_i (gamma_opt - max non-opt gamma) between logged "
        f"iterations (final gap {score_gap.iloc[-1].min():.3g} at least)",
        f"t in [1, {t_last}]",
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} on every seed and the gap ends positive",
        np.all(drops <= MONOTONE_TOLERANCE) and np.all(score_gap.iloc[-1] > 0),
        needs=JOINT_NEEDS,
        opt=opt,
        covers=EQ10,
    )
    softmax = series(table, opt, "min_opt_softmax")
    drops = largest_decrease(softmax)
    rows.add(
        "Lem. 11",
        f"{opt} softmax monotone",
        "the optimal tokens' softmax does not decrease.",
        "Lem. 11 (ii), Sec. 4.3",
        "largest relative decrease of the min opt softmax between logged iterations",
        f"t in [0, {t_last}]",
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} (rounding) on every seed",
        np.all(drops <= MONOTONE_TOLERANCE),
        needs=JOINT_NEEDS,
        opt=opt,
        covers=EQ10,
    )


def bad_init_claims(rows: Rows, table, optimizers, T_tokens) -> None:
    t_last = int(table["iteration"].max())
    for opt in optimizers:
        softmax = series(table, opt, "opt_softmax")
        misalignment = series(table, opt, "gap_W")
        late = window(misalignment, t_last / 100, t_last)
        rows.add(
            "Global convergence (Thm. 1, App. C.1)",
            f"{opt} global",
            "convergence is global: from a bad stationary direction training reaches W_mm.",
            "Thm. 1, App. C.1, Fig. 8",
            "1 - cos(W_t, W_mm)",
            f"t = {t_last}",
            misalignment.iloc[-1].to_numpy(),
            f"opt softmax starts below 1/T = {1 / T_tokens:.3g} "
            f"(measured {softmax.iloc[0].max():.3g} at most) and ends above 0.99 "
            f"({softmax.iloc[-1].min():.4g} at least); the gap decreases over "
            f"[{t_last // 100}, {t_last}]",
            np.all(softmax.iloc[0] < 1 / T_tokens)
            and np.all(softmax.iloc[-1] > 0.99)
            and bool(np.all(np.diff(late.to_numpy(), axis=0) <= 0)),
            opt=opt,
            covers=GLOBAL,
        )


def bad_init_2d_claims(rows: Rows, table, optimizers, T_tokens) -> None:
    """App. C.1's 2-D instance (fig8): per-sample softmax of the optimal token.

    The "bad" samples are those whose optimal token starts below 1/T (the start favours
    another token); the others start above it.
    """
    t_last = int(table["iteration"].max())
    samples = sorted(
        int(m.rsplit("_", 1)[1]) for m in set(table["metric"]) if m.startswith("opt_softmax_")
    )
    for opt in optimizers:
        softmax = {i: series(table, opt, f"opt_softmax_{i}") for i in samples}
        bad = [i for i in samples if np.all(softmax[i].iloc[0] < 1 / T_tokens)]
        good = [i for i in samples if i not in bad]
        for i in bad:
            s = softmax[i]
            start, first, lowest = s.iloc[0].to_numpy(), s.iloc[1].to_numpy(), s.min().to_numpy()
            when = s.idxmin().to_numpy()
            others_rise = all(np.all(softmax[j].iloc[1] > softmax[j].iloc[0]) for j in good)
            rows.add(
                "Global convergence (Thm. 1, App. C.1)",
                f"{opt} sample {i + 1} dips",
                "from a start that favours a non-optimal token, that sample's optimal "
                "softmax first falls, while the other sample's rises.",
                "App. C.1, Fig. 8 (plots 1-2)",
                f"lowest opt softmax of sample {i + 1} (at t = "
                f"{', '.join(f'{w:g}' for w in when)})",
                f"t in [0, {t_last}]",
                lowest,
                f"starts at {start.max():.3g} < 1/T = {1 / T_tokens:.3g}; holds if it "
                f"falls from t = {s.index[0]:g} to t = {s.index[1]:g} and the opt softmax "
                f"of sample(s) {', '.join(str(j + 1) for j in good) or 'none'} rises",
                bool(np.all(start < 1 / T_tokens) and np.all(first < start) and others_rise),
                opt=opt,
                covers=GLOBAL,
            )
        misalignment = series(table, opt, "gap_W")
        late = window(misalignment, t_last / 100, t_last)
        ends = min(float(softmax[i].iloc[-1].min()) for i in samples)
        loss = series(table, opt, "loss")
        rows.add(
            "Global convergence (Thm. 1, App. C.1)",
            f"{opt} global",
            "convergence is global: from a bad stationary direction training reaches W_mm.",
            "Thm. 1, App. C.1, Fig. 8 (plots 3-4)",
            "1 - cos(W_t, W_mm)",
            f"t = {t_last}",
            misalignment.iloc[-1].to_numpy(),
            f"every sample's opt softmax ends above 0.99 ({ends:.4g} at least); the gap "
            f"decreases over [{t_last // 100}, {t_last}] and the loss at every logged step",
            bool(bad)
            and ends > 0.99
            and bool(np.all(np.diff(late.to_numpy(), axis=0) <= 0))
            and bool(np.all(np.diff(loss.to_numpy(), axis=0) <= 0)),
            opt=opt,
            covers=GLOBAL,
        )


def claims(
    experiments: dict,
    tables: dict,
    W_mm_norms: dict,
    T_tokens: dict,
    hypotheses: dict | None = None,
    u_margins: dict | None = None,
) -> pd.DataFrame:
    """All claims of the configured experiments, as a table (one row per claim)."""
    out = []
    for name, experiment in experiments.items():
        kind, optimizers, table = experiment["layout"], experiment["optimizers"], tables[name]
        rows = Rows(name, (hypotheses or {}).get(name), experiment.get("labels"), optimizers, kind)
        if kind == "fixed_decoder":
            fixed_decoder_claims(rows, table, optimizers, W_mm_norms[name])
        elif kind == "joint":
            joint_claims(rows, table, optimizers, (u_margins or {}).get(name))
        elif kind == "two_token":
            two_token_claims(rows, table, optimizers)
        elif kind == "bad_init":
            bad_init_claims(rows, table, optimizers, T_tokens[name])
        elif kind == "bad_init_2d":
            bad_init_2d_claims(rows, table, optimizers, T_tokens[name])
        out += rows.rows
    return _sorted(_frame(out)).reset_index(drop=True)  # grouped by result, as shown


def _frame(rows: list[Claim]) -> pd.DataFrame:
    """Rows as a table, with their derived columns (category, outcome, verdict)."""
    return pd.DataFrame(
        [asdict(r) | {"category": r.category, "outcome": r.outcome, "verdict": r.verdict}
         for r in rows]
    )  # fmt: skip


def study_claims(runs: pd.DataFrame, assumptions: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Rows of the global-convergence study: per setting and optimizer, the fraction of
    random initial directions at the smallest scale (Lem. 2 asks for a small initial norm;
    its bound was lost) whose direction reached W_mm within the budget. `assumptions` holds
    each setting's measured hypotheses (attnbias.data.hypotheses.report columns)."""
    out = []
    small = runs["scale"].min()
    budget = f"1 - cos(W_t, W_mm) < {settings['threshold']:g} within {settings['iterations']} steps"
    for setting, by_setting in runs.groupby("setting", sort=False):
        row = assumptions[assumptions["setting"] == setting].iloc[0].to_dict()
        hypotheses = {k: v for k, v in row.items() if k.startswith(("ass1", "ass2"))}
        rows = Rows(setting, hypotheses, optimizers=settings.get("optimizers"))
        for opt, group in by_setting.groupby("optimizer", sort=False):
            reached = group[group["scale"] == small]["reached"].to_numpy(dtype=float)
            everywhere = group["reached"].mean()
            rows.add(
                "Global convergence (Thm. 1, Lem. 2; the study)",
                f"study {opt} global",
                "from any initial direction with a small norm, it reaches W_mm's direction.",
                "Thm. 1, Thm. 7, Lem. 2, Sec. 3",
                f"{opt}: fraction of the {len(reached)} random W0 with ||W0|| = {small:g} that "
                f"reach ({budget}); over every scale: {everywhere:.2f}",
                f"t <= {settings['iterations']}",
                reached,
                "holds if every run at the smallest scale reaches; the paper's claim is "
                "asymptotic, so a slow optimizer (GD) may miss a finite budget",
                bool(np.all(reached == 1)),
                opt=opt,
            )
        out += rows.rows
    return _frame(out)


def u_margin_ratio(X, y, opt, u, u_mm) -> float:
    """min_i y_i u^T x_opt,i / ||u||, over u_mm's normalised margin (1 / ||u_mm||)."""
    x_opt = X[np.arange(len(y)), opt]
    margin = np.min(y * (x_opt @ u)) / np.linalg.norm(u)
    return float(margin * np.linalg.norm(u_mm))


TITLE = "The paper's claims, measured"
HOW_TO_READ = (
    "Computed from the aggregate tables of this build, grouped by the paper's result. "
    "value: mean over seeds (smallest to largest); every seed must pass. Each row names the "
    "optimizer it measures; a result proved for another algorithm (Sec. 3: NGD and PS "
    "uncapped; Sec. 4: Eq. 10 with its step factors) reads 'comparison' and is not counted "
    "among the results that do or do not hold. A comparison of two methods is read over the "
    f"whole run after a burn-in of t_last/{BURN_IN}; a threshold that neither method "
    f"reaches, or a fit with R^2 below {R2_MIN:g}, reads 'undecided'. Consistency checks "
    "(near-tautologies) are outside the count. Where a constant was lost in extraction, the "
    "reference says so and tests the form. hypotheses: measured on the run's data; a verdict "
    "outside them says so. ln is the natural log."
)
COLUMNS = (
    "experiment",
    "claim",
    "where",
    "measured",
    "window",
    "value",
    "reference",
    "predicted (ratio)",
    "R^2",
    "hypotheses",
    "algorithm",
    "verdict",
)
COMPACT = ("claim", "where", "value", "verdict")  # the Markdown's columns; CSV and HTML: all


def summary_line(table: pd.DataFrame) -> str:
    """The counts by category (Claim.category): covered and within hypotheses (hold / do
    not hold / undecided), comparisons, outside hypotheses; consistency checks apart."""
    rows = [Claim(**{k: r[k] for k in Claim.__dataclass_fields__}) for _, r in table.iterrows()]
    covered = [r for r in rows if r.category == "covered"]
    count = {
        c: sum(r.category == c for r in rows) for c in ("comparison", "outside", "consistency")
    }
    outcomes = {
        o: sum(r.outcome == o for r in covered) for o in ("holds", "does not hold", "undecided")
    }
    return (
        f"{len(rows)} rows over {table['result'].nunique()} results. On the algorithms and "
        f"data of their hypotheses: {outcomes['holds']} hold, {outcomes['does not hold']} do "
        f"not hold, {outcomes['undecided']} undecided; {count['comparison']} comparisons (an "
        f"algorithm the result is not proved for); {count['outside']} on data outside the "
        f"hypotheses; {count['consistency']} consistency checks (outside the count)."
    )


def _display_rows(table: pd.DataFrame):
    """Each claim as the cells of COLUMNS, as text; and whether it holds."""
    for r in table.itertuples():
        value = r.value_text or f"{r.mean:.4g} ({r.low:.4g} to {r.high:.4g})"
        predicted = "" if math.isnan(r.predicted) else f"{r.predicted:.4g} ({r.ratio:.3g})"
        if not math.isnan(r.window_ratio):
            predicted += f"; window ratio {r.window_ratio:.3g}"
        r2 = "" if math.isnan(r.r2) else f"{r.r2:.4f}"
        cells = (
            r.experiment,
            r.claim,
            r.source,
            r.quantity,
            r.window,
            value,
            r.reference,
            predicted,
            r2,
            r.hypotheses,
            r.algorithm,
            r.verdict,
        )
        yield r.result, cells, bool(r.holds or r.undecided or r.kind == "consistency")


def _groups(table: pd.DataFrame):
    """Rows grouped by result, in order of first appearance."""
    current, group = None, []
    for result, cells, ok in _display_rows(table):
        if result != current and group:
            yield current, group
            group = []
        current = result
        group.append((cells, ok))
    if group:
        yield current, group


def markdown_cell(text: str) -> str:
    """Text safe in a Markdown table cell: | and <...> escaped, as html.escape does."""
    return html.escape(str(text), quote=False).replace("|", "\\|")


def to_markdown(table: pd.DataFrame, backend: str = "") -> str:
    """The claims as compact Markdown tables (COMPACT), one per result, under a summary."""
    table = _sorted(table)
    lines = [f"# {TITLE}", "", f"**{summary_line(table)}**", "", HOW_TO_READ, ""]
    if backend:
        lines += [f"The runs trained on {backend}.", ""]
    lines += ["Every column (measured quantity, window, reference, R^2, hypotheses, algorithm) "
              "is in claims.csv and claims.html.", ""]  # fmt: skip
    for result, group in _groups(table):
        lines += [
            f"## {result}",
            "",
            "| " + " | ".join(COMPACT) + " |",
            "|" + "---|" * len(COMPACT),
        ]
        for cells, ok in group:
            cell = dict(zip(COLUMNS, cells, strict=True))
            cell["where"] = f"{cell['experiment']}; {cell['where']}"  # the paper's and ours
            shown = [markdown_cell(cell[c]) for c in COMPACT]
            if not ok:
                shown[-1] = f"**{shown[-1]}**"
            lines.append("| " + " | ".join(shown) + " |")
        lines.append("")
    return "\n".join(lines)


def to_html(table: pd.DataFrame, backend: str = "") -> str:
    """The same tables with every column, as a standalone HTML page (shown in the report)."""
    table = _sorted(table)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for result, group in _groups(table):
        body.append(f"<h2>{html.escape(result)}</h2>\n<table><thead><tr>{head}</tr></thead><tbody>")
        for cells, ok in group:
            tds = [f"<td>{html.escape(str(c))}</td>" for c in cells[:-1]]
            verdict = html.escape(cells[-1])
            verdict = verdict if ok else f"<strong>{verdict}</strong>"
            body.append("<tr>" + "".join(tds) + f"<td>{verdict}</td></tr>")
        body.append("</tbody></table>")
    style = (
        "body{font-family:sans-serif;font-size:13px;margin:1em}"
        "table{border-collapse:collapse;margin-bottom:1em}th,td{border:1px solid #ccc;"
        "padding:3px 6px;vertical-align:top;text-align:left}th{background:#eee}"
    )
    provenance = f"<p>The runs trained on {html.escape(backend)}.</p>\n" if backend else ""
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(TITLE)}</title>"
        f"<style>{style}</style></head><body>\n<h1>{html.escape(TITLE)}</h1>\n"
        f"<p><strong>{html.escape(summary_line(table))}</strong></p>\n"
        f"<p>{html.escape(HOW_TO_READ)}</p>\n{provenance}" + "\n".join(body) + "\n</body></html>\n"
    )


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    """Rows grouped by result (results in order of first appearance), stable within."""
    order = {r: i for i, r in enumerate(dict.fromkeys(table["result"]))}
    return table.iloc[np.argsort(table["result"].map(order).to_numpy(), kind="stable")]


_DIGITS = "Zero One Two Three Four Five Six Seven Eight Nine".split()


def macro_name(*parts: str) -> str:
    """A LaTeX command name from free text: letters only, CamelCase, digits spelled out."""
    words = re.findall(r"[A-Za-z]+|\d", " ".join(parts))
    return "".join(_DIGITS[int(w)] if w.isdigit() else w[:1].upper() + w[1:] for w in words)


def to_latex(table: pd.DataFrame) -> str:
    """One \\newcommand per measured number (mean, low, high, ratio), so a paper can cite them."""
    lines = [f"% {TITLE}: generated by the attnbias workflow from this build's tables"]
    seen = set()
    for r in table.itertuples():
        values = {"Mean": r.mean, "Low": r.low, "High": r.high, "Ratio": r.ratio}
        for suffix, value in values.items():
            if isinstance(value, float) and math.isnan(value):
                continue
            name = "claim" + macro_name(r.key, suffix)
            if name in seen:
                raise ValueError(f"two claims rows give the LaTeX macro \\{name}")
            seen.add(name)
            text = "not reached" if math.isinf(value) else f"{value:.4g}"
            lines.append(f"\\newcommand{{\\{name}}}{{{text}}}")
        verdict = "claim" + macro_name(r.key, "Verdict")
        lines.append(f"\\newcommand{{\\{verdict}}}{{{r.verdict}}}")
    return "\n".join(lines) + "\n"
