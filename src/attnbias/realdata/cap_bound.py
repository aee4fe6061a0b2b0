"""Real-data runs whose cap bound at most of their steps: reported as the method they became.

SNGD's cap `max_step` and SPS's `eta_max` turn the step into plain SGD's with the cap for
its learning rate wherever they bind (attnbias.optim.cap_count). The trainer logs the share
of the steps between two log points at which the cap bound (CAP_METRIC). The cap rule
(ours): a cap that bound at more than MAX_CAP_SHARE of a run's steps (over its seeds) made
the run mostly that SGD, not its method. `bound_mostly` is the one reading of that: the
tuning rule never chooses such a setting (attnbias.realdata.tuning), and the figure's
legend, its caption and the claims rows (through `relabel`, and claims.real for the
verdict) report such a run as the SGD it became. A run whose cap bound at fewer steps keeps
its name, and its caption and race rows say at how many (`bound_steps`, `bound_text`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CAP_METRIC = "cap_bound_share"  # the trainer's metric (attnbias.realdata.trainer.fit)
# the cap rule (ours): a cap bound at more than this share of the steps made the run SGD
MAX_CAP_SHARE = 0.5


def bound_steps(table: pd.DataFrame, optimizer: str) -> pd.DataFrame:
    """Per seed of `optimizer`'s runs (the index), the steps at which its cap bound
    (`bound`) and the steps taken (`steps`): each log point's CAP_METRIC times the steps
    since the previous log point, summed. Empty where no cap is logged for it."""
    empty = pd.DataFrame({"bound": [], "steps": []}, dtype=int)
    if "metric" not in table or "optimizer" not in table:
        return empty
    mine = table[(table["optimizer"] == optimizer) & (table["metric"] == CAP_METRIC)]
    if not mine["value"].notna().any():
        return empty
    out = {}
    for seed, run in mine.sort_values("iteration").groupby("seed", observed=True):
        # steps since the previous log point (step 0, where no share is logged, or not)
        window = np.diff(run["iteration"].to_numpy(dtype=float), prepend=0.0)
        share = run["value"].to_numpy(dtype=float)
        logged = ~np.isnan(share)
        # share * window counts whole steps; rint undoes the division's rounding
        out[seed] = (int(np.rint(share[logged] @ window[logged])), int(window[logged].sum()))
    return pd.DataFrame.from_dict(out, orient="index", columns=["bound", "steps"])


def bound_text(table: pd.DataFrame, optimizer: str) -> str | None:
    """At how many steps `optimizer`'s cap bound, in words: "cap bound at 239 of 240 steps
    (seeds 0, 1, 2: 80, 80, 79 of 80)"; None where no cap is logged for it."""
    counts = bound_steps(table, optimizer)
    if counts.empty:
        return None
    total = f"cap bound at {counts['bound'].sum()} of {counts['steps'].sum()} steps"
    if len(counts) == 1:
        return total
    seeds = ", ".join(str(s) for s in counts.index)
    per_seed = ", ".join(str(b) for b in counts["bound"])
    steps = counts["steps"].unique()
    of = f"{steps[0]}" if len(steps) == 1 else ", ".join(str(s) for s in counts["steps"])
    return f"{total} (seeds {seeds}: {per_seed} of {of})"


def bound_share(table: pd.DataFrame, optimizer: str) -> float | None:
    """The share of `optimizer`'s steps, over all its seeds, at which its cap bound
    (bound_steps); None where no cap is logged for it."""
    counts = bound_steps(table, optimizer)
    if counts.empty or counts["steps"].sum() == 0:
        return None
    return float(counts["bound"].sum() / counts["steps"].sum())


def bound_mostly(table: pd.DataFrame, optimizer: str) -> bool:
    """Whether `optimizer`'s cap bound at more than MAX_CAP_SHARE of its steps (over every
    seed of the long run table): the run was mostly the SGD it became. False where no cap is
    logged for it."""
    share = bound_share(table, optimizer)
    return share is not None and share > MAX_CAP_SHARE


def became(settings: dict) -> str | None:
    """The plain method a run with `settings` (the config entry: rule and its settings) is
    where its cap binds, in words; None for a rule without a cap."""
    rule = settings.get("rule")
    if rule == "sps" and settings.get("eta_max") is not None:
        return f"SGD with lr {settings['eta_max']:g}"
    if rule == "sngd" and settings.get("max_step") is not None:
        momentum = settings.get("momentum", 0.0)
        with_momentum = f", momentum {momentum:g}" if momentum else ""
        return f"SGD with lr {settings['max_step']:g}{with_momentum}"
    return None


def became_runs(optimizers: dict, table: pd.DataFrame) -> dict[str, str]:
    """optimizer -> the method it became, for each run of `optimizers` (name -> settings)
    whose cap bound at most of its steps (bound_mostly) in `table`."""
    out = {}
    for name, settings in optimizers.items():
        plain = became(settings)
        if plain is not None and bound_mostly(table, name):
            out[name] = plain
    return out


def run_text(name: str, settings: dict, table: pd.DataFrame, label: str) -> str | None:
    """At how many steps run `name` (its config entry `settings`; `label` in words) had its
    cap bind in `table`, and whose step a bound one is: "SPS's cap bound at 239 of 240 steps
    (seeds 0, 1, 2: 80, 80, 79 of 80): a bound step is SGD with lr 0.1's". None for a rule
    without a cap or a table without its share. The caption and the claims' races say it."""
    plain, text = became(settings), bound_text(table, name)
    if plain is None or text is None:
        return None
    return f"{label}'s {text}: a bound step is {plain}'s"


def caption_text(optimizers: dict, table: pd.DataFrame) -> str:
    """For the caption: `run_text` for every capped run of `optimizers` (name -> config
    entry, with its label), one sentence each; "" where no run is capped."""
    texts = (run_text(n, s, table, s.get("label", n)) for n, s in optimizers.items())
    return " ".join(f"{t}." for t in texts if t)


def label(name: str, plain: str, share: float) -> str:
    """The label of a run that became `plain`, its cap bound at `share` of its steps: "SPS
    (cap bound at 99% of its steps: SGD with lr 0.1)"."""
    return f"{name} (cap bound at {share:.0%} of its steps: {plain})"


def relabel(labels: dict | None, optimizers: dict, table: pd.DataFrame) -> dict | None:
    """`labels` (optimizer -> label; the name where missing) with each run that became
    plain SGD named so; `labels` itself where none did."""
    found = became_runs(optimizers, table)
    if not found:
        return labels
    labels = dict(labels or {})
    for name, plain in found.items():
        labels[name] = label(labels.get(name, name), plain, bound_share(table, name))
    return labels
