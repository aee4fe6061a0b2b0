"""Real-data runs whose cap bound at every step: reported as the method they became.

SNGD's cap `max_step` and SPS's `eta_max` turn the step into plain SGD's with the cap for
its learning rate wherever they bind (attnbias.optim.cap_count). The trainer logs the share
of the steps between two log points at which the cap bound (CAP_METRIC). A run whose share
is 1 at every log point on every seed was that SGD throughout: `bound_throughout` is the one
reading of that, and the figure's legend, its caption and the claims rows (through
`relabel`, and claims.real for the verdict) all take it from here. A run whose cap bound at
only some steps keeps its name, and its caption and race rows say at how many
(`bound_steps`, `bound_text`): 239 of 240 is SGD but for one step.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CAP_METRIC = "cap_bound_share"  # the trainer's metric (attnbias.realdata.trainer.fit)


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


def bound_throughout(table: pd.DataFrame, optimizer: str) -> bool:
    """Whether `optimizer`'s cap bound at every step of its runs: on every seed of the long
    run table (optimizer, seed, iteration, metric, value), steps were logged and all were
    bound (bound_steps). False where the table has no such metric for it (no cap logged)."""
    counts = bound_steps(table, optimizer)
    return bool(
        not counts.empty
        and (counts["steps"] > 0).all()
        and (counts["bound"] == counts["steps"]).all()
    )


def became(settings: dict) -> str | None:
    """The plain method a run with `settings` (the config entry: rule and its settings) is
    where its cap binds at every step, in words; None for a rule without a cap."""
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
    whose cap bound at every step on every seed of `table`."""
    out = {}
    for name, settings in optimizers.items():
        plain = became(settings)
        if plain is not None and bound_throughout(table, name):
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


def label(name: str, plain: str) -> str:
    """The label of a run that became `plain`: "SPS (cap bound at every step: SGD with lr
    0.1)"."""
    return f"{name} (cap bound at every step: {plain})"


def relabel(labels: dict | None, optimizers: dict, table: pd.DataFrame) -> dict | None:
    """`labels` (optimizer -> label; the name where missing) with each run that became
    plain SGD named so; `labels` itself where none did."""
    found = became_runs(optimizers, table)
    if not found:
        return labels
    labels = dict(labels or {})
    for name, plain in found.items():
        labels[name] = label(labels.get(name, name), plain)
    return labels
