"""The fig3 sweep: does Fig. 3's order of the optimizers hold across Condition 1's range?

The paper (Sec. 5, App. C) says of joint training on data model DM: every algorithm is
faster than GD, PS is the fastest, the train loss falls at a similar rate under NGD and
joint NGD, and in the other metrics NGD is slightly faster than joint NGD. Condition 1 asks
for W0 = 0 and u0 = 0, an optimal token longer than the others, d large next to n and a
small step size. The sweep varies the separation (mu_norm, noise_scale), d and the NGDs'
step size over that range (attnbias.sweep_runs trains), and this module judges, per
setting, each part of the order from the final numbers, and draws them.

"Faster" means a smaller final value at the same iteration: of 1 - cos(W_t, W_mm) (W),
1 - cos(u_t, u_mm) (u) and log L (loss). Per setting, each optimizer's value is the mean
over seeds of log10 of the gap (the geometric mean of the gaps) and the mean of log L; the
verdicts compare these. A NaN (a diverged run) makes every comparison with it fail.

No torch here: this module runs in the plotting env.
"""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pandas as pd

from attnbias.io import atomic_path
from attnbias.provenance import savefig

TITLE = "Fig. 3's order of the optimizers across Condition 1's range (joint training on DM)"
# the sweep's optimizers (config keys) in their roles in the paper's statement
GD, NGD, PS, JOINT = "gd", "ngd", "ps", "joint-ngd"
OPTIMIZERS = (GD, NGD, PS, JOINT)
# metric -> (column of the runs, how a seed's value enters the setting's mean)
# metric -> the runs' column; gaps are compared in log10, log L as it is, and the first
# iteration with 1 - cos(W_t, W_mm) < 1e-2 with "not reached" (NaN) as infinitely late
METRICS = {"W": "gap_W", "u": "gap_u", "loss": "log_loss", "W_early": "first_W_below_1e-2"}
MEAN_NAMES = {
    "W": "log10_gap_W",
    "u": "log10_gap_u",
    "loss": "log_loss",
    "W_early": "first_W_below_1e-2",
}
VERDICTS = {
    "gd_slowest_W": "GD slowest in W",
    "gd_slowest_u": "GD slowest in u",
    "gd_slowest_loss": "GD slowest in loss",
    "ps_fastest_W": "PS fastest in W",
    "ps_fastest_u": "PS fastest in u",
    "ps_fastest_loss": "PS fastest in loss",
    "ngd_ahead_W": "NGD ahead of joint-NGD in W",
    "ngd_ahead_u": "NGD ahead of joint-NGD in u",
    "ngd_joint_loss_close": "NGD ~ joint-NGD in loss",
    # not a part of the paper's sentence: PS's head start, read off the first crossings
    "ps_first_W_1e-2": "PS first to 1e-2 in W (early)",
}
DATA_KEYS = ("mu_norm", "noise_scale", "d")


# ---- the grid ----------------------------------------------------------------------------


def point_name(mu_norm: float, noise_scale: float, d: int) -> str:
    return f"mu{mu_norm:g}_noise{noise_scale:g}_d{d}"


def setting_name(point: str, lr: float) -> str:
    return f"{point}_lr{lr:g}"


def points(cfg: dict) -> dict[str, dict]:
    """The sweep's data points, name -> DM params (n, T, d, mu_norm, noise_scale), in the
    order separation-major, then d; each is one training job."""
    out = {}
    for sep, d in itertools.product(cfg["separations"], cfg["d"]):
        name = point_name(sep["mu_norm"], sep["noise_scale"], d)
        if name in out:
            raise ValueError(f"fig3_sweep: data point {name} appears twice in the grid")
        out[name] = {
            **cfg["data"],
            "d": d,
            "mu_norm": sep["mu_norm"],
            "noise_scale": sep["noise_scale"],
        }
    return out


# ---- the verdicts ------------------------------------------------------------------------


def _seed_values(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, seed): columns (metric, optimizer) with the values the verdicts compare."""
    values = runs[["setting", "seed", "optimizer"]].copy()
    for metric, column in METRICS.items():
        v = runs[column].astype(float) if column in runs else pd.Series(np.nan, runs.index)
        if metric in ("W", "u"):
            with np.errstate(divide="ignore"):
                v = np.log10(v)
        elif metric == "W_early":
            v = v.fillna(np.inf)  # not reached within the run
        values[metric] = v
    wide = values.pivot_table(
        index=["setting", "seed"], columns="optimizer", values=list(METRICS), dropna=False
    )
    missing = [o for o in OPTIMIZERS if o not in wide.columns.get_level_values(1)]
    if missing:
        raise ValueError(f"the sweep's runs lack optimizer(s) {missing}; need {list(OPTIMIZERS)}")
    return wide


def _faster(v: pd.DataFrame, first: str, others: list[str], sign: int) -> np.ndarray:
    """sign=-1: v[first] below every other; +1: above. Strict (a tie is no order); a NaN
    among them gives False."""
    rest = v[others]
    valid = rest.notna().all(axis=1) & v[first].notna()
    beyond = v[first].lt(rest.min(axis=1)) if sign < 0 else v[first].gt(rest.max(axis=1))
    return (valid & beyond).to_numpy()


def _holds(values: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """The verdicts, one column each, for every row of `values` (columns (metric, optimizer))."""
    out = pd.DataFrame(index=values.index)
    for metric in ("W", "u", "loss"):
        v = values[metric]
        out[f"gd_slowest_{metric}"] = _faster(v, GD, [NGD, PS, JOINT], +1)
        out[f"ps_fastest_{metric}"] = _faster(v, PS, [GD, NGD, JOINT], -1)
    for metric in ("W", "u"):
        out[f"ngd_ahead_{metric}"] = _faster(values[metric], NGD, [JOINT], -1)
    ngd, joint = values["loss"][NGD].abs(), values["loss"][JOINT].abs()
    ratio = np.maximum(ngd, joint) / np.minimum(ngd, joint)
    out["ngd_joint_loss_close"] = ratio.le(tolerance).to_numpy()
    out["ps_first_W_1e-2"] = _faster(values["W_early"], PS, [GD, NGD, JOINT], -1)
    return out[list(VERDICTS)]


def _order(means: pd.DataFrame, metric: str) -> list[str]:
    """Per row: the optimizers from fastest to slowest in `metric` ("=" for a tie)."""
    orders = []
    for _, row in means[metric][list(OPTIMIZERS)].iterrows():
        ranked = row.sort_values(kind="stable")
        text = ranked.index[0]
        for prev, (name, value) in zip(ranked.to_numpy(), list(ranked.items())[1:], strict=False):
            text += f" {'=' if value == prev else '<'} {name}"
        orders.append(text if row.notna().all() else "undefined (a run diverged)")
    return orders


def verdicts(runs: pd.DataFrame, tolerance: float = 2.0) -> pd.DataFrame:
    """One row per setting: which parts of the paper's order hold, from the runs' numbers.

    runs: one row per (setting, optimizer, seed) with gap_W, gap_u, log_loss and
    first_W_below_1e-2 (the columns of sweep_runs.run_point, plus `setting`). Each verdict is
    computed on the setting's seed means (mean log10 gap, mean log L, median first crossing)
    and is True/False; `{verdict}_seeds` counts the seeds for which it holds on that seed's
    own numbers. NGD ~ joint-NGD in loss: their |log L| within a factor `tolerance`. Also:
    `order_{W,u,loss}` (fastest first), NGD's lead over joint NGD in decades of the gaps,
    the NGD / joint-NGD ratio of log L, and the means themselves, `{mean}_{optimizer}` with
    mean log10_gap_W, log10_gap_u, log_loss, first_W_below_1e-2 (median; inf: not reached).
    """
    if tolerance < 1:
        raise ValueError(f"the loss tolerance is a factor >= 1, got {tolerance}")
    per_seed = _seed_values(runs)
    order = list(dict.fromkeys(runs["setting"]))  # the runs' order (pivot_table sorts)
    per_seed = per_seed.reindex(order, level="setting")
    by_setting = per_seed.groupby(level="setting", sort=False)
    means = by_setting.mean().reindex(order)
    # the first crossing: the median seed (a mean is infinite when one seed never crosses)
    means["W_early"] = by_setting.median().reindex(order)["W_early"]
    out = _holds(means, tolerance)
    counts = _holds(per_seed, tolerance).groupby(level="setting", sort=False).sum().reindex(order)
    for name in VERDICTS:
        out[f"{name}_seeds"] = counts[name].astype(int)
    out["seeds"] = per_seed.groupby(level="setting", sort=False).size().reindex(order)
    for metric in ("W", "u", "loss"):
        out[f"order_{metric}"] = _order(means, metric)
    out["ngd_lead_W_decades"] = means[("W", JOINT)] - means[("W", NGD)]
    out["ngd_lead_u_decades"] = means[("u", JOINT)] - means[("u", NGD)]
    out["loss_ratio_ngd_joint"] = means[("loss", NGD)] / means[("loss", JOINT)]
    for metric, optimizer in itertools.product(METRICS, OPTIMIZERS):
        out[f"{MEAN_NAMES[metric]}_{optimizer}"] = means[(metric, optimizer)]
    return out.reset_index()


def _ordered(runs: pd.DataFrame) -> pd.DataFrame:
    """Settings in grid order: points as they first appear, then lr ascending."""
    runs = runs.reset_index(drop=True)
    runs = runs.assign(
        setting=[setting_name(p, lr) for p, lr in zip(runs["point"], runs["lr"], strict=True)]
    )
    point_rank = {p: i for i, p in enumerate(dict.fromkeys(runs["point"]))}
    opt_rank = {o: i for i, o in enumerate(OPTIMIZERS)}
    key = pd.DataFrame(
        {
            "p": runs["point"].map(point_rank),
            "lr": runs["lr"],
            "o": runs["optimizer"].map(lambda o: opt_rank.get(o, len(opt_rank))),
            "s": runs["seed"],
        }
    )
    return runs.loc[key.sort_values(["p", "lr", "o", "s"]).index].reset_index(drop=True)


LEAD_COLUMNS = [
    "setting",
    "point",
    "mu_norm",
    "noise_scale",
    "n",
    "T",
    "d",
    "lr",
    "optimizer",
    "seed",
]


def table(runs: pd.DataFrame, tolerance: float = 2.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(long, per_setting): the runs with a `setting` column and their setting's verdicts,
    one row per (setting, optimizer, seed), in grid order; and `verdicts`, led by each
    setting's parameters and its data's Condition-1 quantities (the smallest
    opt_norm_ratio over its seeds, d_over_n)."""
    runs = _ordered(runs)
    per_setting = verdicts(runs, tolerance)
    long = runs.merge(per_setting[["setting", *VERDICTS]], on="setting", how="left")
    rest = [c for c in long.columns if c not in LEAD_COLUMNS]
    grouped = runs.groupby("setting", sort=False)
    lead = grouped[["mu_norm", "noise_scale", "n", "T", "d", "lr", "d_over_n"]].first()
    lead["min_opt_norm_ratio"] = grouped["opt_norm_ratio"].min()
    per_setting = lead.reset_index().merge(per_setting, on="setting", how="right")
    return long[LEAD_COLUMNS + rest], per_setting


def tally(per_setting: pd.DataFrame) -> pd.DataFrame:
    """In how many settings each part of the order holds."""
    return pd.DataFrame(
        {
            "part": list(VERDICTS.values()),
            "holds": [int(per_setting[v].sum()) for v in VERDICTS],
            "settings": len(per_setting),
        }
    )


# ---- the figure -------------------------------------------------------------------------


def _caption(long: pd.DataFrame, legend: dict, tolerance: float) -> str:
    seeds = long["seed"].nunique()
    iterations = int(long["iterations"].iloc[0])
    n, T = int(long["n"].iloc[0]), int(long["T"].iloc[0])
    settings = "; ".join(f"{label}: {caption}" for label, caption in legend.values())
    return (
        f"Final values at t = {iterations} of joint training on DM (n={n}, T={T}, W0 = 0, "
        f"u0 = 0), {seeds} seeds per setting. Markers: geometric mean over seeds of the gaps "
        f"(for L, the mean of log L); bars: min to max over seeds. Smaller is faster in (a) "
        f"and (b), larger in (c). The NGDs take the setting's lr; GD and PS do not depend "
        f"on it (one run per data point, shown under each lr). (d): whether each part of the "
        f"paper's order holds on the seed means (tick: holds; cross: does not; the number: "
        f"seeds for which it holds on their own numbers); NGD ~ joint-NGD in loss: their "
        f"log L within a factor {tolerance:g}. The last row is not in the paper's sentence: "
        f"which optimizer is first to 1 - cos(W_t, W_mm) < 1e-2 (exact first crossings, median "
        f"seed). "
        f"{settings}."
    )


def draw(
    long: pd.DataFrame,
    per_setting: pd.DataFrame,
    *,
    legend: dict,
    tolerance: float,
    outputs,
    provenance: dict | None = None,
) -> None:
    """Panels: final 1 - cos(W, W_mm), 1 - cos(u, u_mm), -log10 L per setting and
    optimizer, and the verdicts as a grid. legend: optimizer -> (label, caption)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.colors import ListedColormap

    sns.set_theme(context="paper", style="whitegrid", font_scale=1.05)
    from attnbias.figures import MARKERS as LINE_MARKERS
    from attnbias.figures import optimizer_colours

    # the line figures' colours and markers, so that an optimizer looks the same everywhere
    colours = dict(zip(OPTIMIZERS, optimizer_colours(len(OPTIMIZERS)), strict=True))
    markers = dict(zip(OPTIMIZERS, LINE_MARKERS, strict=False))
    settings = list(per_setting["setting"])
    x = {s: i for i, s in enumerate(settings)}
    first = long.drop_duplicates("setting").set_index("setting").loc[settings]
    fig, axes = plt.subplots(
        4,
        1,
        figsize=(max(9.0, 0.42 * len(settings) + 3.0), 14.5),
        sharex=True,
        gridspec_kw={"height_ratios": [1, 1, 1, 0.95]},
    )
    # column, label, its transform, averaged in logs (geometric mean) or not
    panels = [
        ("gap_W", r"final $1 - \cos(W_t, W_{mm})$", lambda v: v, True),
        ("gap_u", r"final $1 - \cos(u_t, u_{mm})$", lambda v: v, True),
        ("log_loss", r"final $-\log_{10} L(W_t, u_t)$", lambda v: -v / np.log(10), False),
    ]
    offsets = dict(zip(OPTIMIZERS, np.linspace(-0.27, 0.27, len(OPTIMIZERS)), strict=True))
    for ax, (column, ylabel, transform, geometric) in zip(axes, panels, strict=False):
        for opt in OPTIMIZERS:
            rows = long[long["optimizer"] == opt]
            values = transform(rows[column].astype(float)).where(lambda v: v > 0)
            back = np.exp if geometric else (lambda v: v)
            stats = (
                (np.log(values) if geometric else values)
                .groupby(rows["setting"])
                .agg(["mean", "min", "max"])
                .reindex(settings)
                .apply(back)
            )
            ax.errorbar(
                np.arange(len(settings)) + offsets[opt],
                stats["mean"],
                yerr=[stats["mean"] - stats["min"], stats["max"] - stats["mean"]],
                fmt=markers[opt],
                color=colours[opt],
                markersize=5.5,
                markeredgecolor="black",
                markeredgewidth=0.4,
                elinewidth=1,
                capsize=0,
                label=legend.get(opt, (opt, ""))[0],
            )
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(False, axis="x")  # the group lines below separate the settings
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        ncol=len(OPTIMIZERS),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.975),
        frameon=False,
    )
    # (d) the verdicts
    ax = axes[3]
    grid = per_setting[list(VERDICTS)].to_numpy(dtype=float).T
    blue, orange = sns.color_palette("colorblind")[0], sns.color_palette("colorblind")[1]
    ax.imshow(
        grid,
        aspect="auto",
        cmap=ListedColormap([orange, blue]),
        vmin=0,
        vmax=1,
        alpha=0.55,
        extent=(-0.5, len(settings) - 0.5, len(VERDICTS) - 0.5, -0.5),
        interpolation="nearest",
    )
    for (row, name), col in itertools.product(enumerate(VERDICTS), range(len(settings))):
        mark = "\u2713" if grid[row, col] else "\u2717"
        count = int(per_setting[f"{name}_seeds"].iloc[col])
        ax.text(col, row, f"{mark}{count}", ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(VERDICTS)), list(VERDICTS.values()), fontsize=8)
    ax.axhline(len(VERDICTS) - 1.5, color="black", lw=1.5)  # the paper's parts | the extra row
    ax.grid(False)
    holds = per_setting[list(VERDICTS)].sum().astype(int)
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(
        range(len(VERDICTS)), [f"{holds[v]}/{len(settings)}" for v in VERDICTS], fontsize=8
    )
    right.grid(False)
    # x axis: lr per setting; the data points as groups, separated by lines
    ax.set_xticks(range(len(settings)), [f"{lr:g}" for lr in first["lr"]], fontsize=7)
    ax.set_xlabel("NGD / joint-NGD step size lr, grouped by data point (d; mu_norm, noise_scale)")
    ax.set_xlim(-0.6, len(settings) - 0.4)
    groups = first.reset_index().groupby(["mu_norm", "noise_scale", "d"], sort=False)["setting"]
    for (mu, noise, d), members in groups:
        idx = [x[s] for s in members]
        lo, hi = min(idx) - 0.5, max(idx) + 0.5
        seps_change = idx[0] == 0 or (
            first["noise_scale"].iloc[idx[0] - 1] != noise
            or first["mu_norm"].iloc[idx[0] - 1] != mu
        )
        for a in axes:
            a.axvline(lo, color="black", lw=1.4 if seps_change else 0.5, alpha=0.8)
        mid = (lo + hi) / 2
        axes[0].text(
            mid,
            1.0,
            f"d={d}",
            transform=axes[0].get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=8,
        )
        if seps_change:
            text = f"mu_norm={mu:g}, noise_scale={noise:g}"
            axes[0].text(
                lo + 0.1,
                1.09,
                text,
                transform=axes[0].get_xaxis_transform(),
                ha="left",
                va="bottom",
                fontsize=8.5,
                fontweight="bold",
            )
    for i, a in enumerate(axes):
        a.set_title(f"({chr(97 + i)})", loc="left", fontsize="medium", x=-0.06, y=0.98)
    note = _caption(long, legend, tolerance)
    fig.suptitle(TITLE, fontsize="large", y=0.995)
    width = fig.get_size_inches()[0]
    fig.text(
        0.01,
        0.004,
        "\n".join(textwrap.wrap(note, int(16 * width))),
        fontsize=7.5,
        va="bottom",
        ha="left",
    )
    fig.tight_layout(rect=(0, 0.055, 1, 0.955))
    for path in outputs:
        with atomic_path(path) as tmp:
            savefig(fig, tmp, str(path).rsplit(".", 1)[-1], provenance, dpi=150)
    plt.close(fig)
