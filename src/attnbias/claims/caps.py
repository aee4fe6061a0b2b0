"""What a row on a capped run must say of its caps (App. C caps NGD's and NGD-mom's step,
`max_step`, and PS's, `eta_max`; the paper's values were lost): each cap, whether it bound
(read off the run's largest step over EVERY step, max_log_step_W, not only the logged
steps), and so over which caps the row's runs, and with them its verdict, are the ones
measured: a cap a run never reaches gives the uncapped run, so every larger cap gives the
same one; a cap that bound was measured at its own value only (and, on fig2, without caps:
fig2_uncapped), smaller or other ones by the optional robustness target."""

from __future__ import annotations

import math

import numpy as np

from attnbias.claims.measure import has, series
from attnbias.claims.robustness import number  # 1e148, as the robustness table writes it
from attnbias.claims.rows import Rows
from attnbias.optim import cap_rule

CAP_KEYS = ("max_step", "eta_max")  # NGD's (and NGD-mom's), PS's
LOST = (
    "App. C's cap values were lost; ours by the rule of docs/regime.md (attnbias.optim."
    "cap_rule: the smallest power of ten the uncapped step never reaches, else 1e308)"
)
ROBUSTNESS = "other caps: column robustness (measured in the default build)"


def cap_of(settings: dict) -> tuple[str, float] | None:
    """(key, value) of a run's step cap, None where it has none."""
    for key in CAP_KEYS:
        if settings.get(key) is not None:
            return key, float(settings[key])
    return None


def bound_at(rows: Rows, opt: str) -> np.ndarray:
    """Per seed, the first logged t by which `opt`'s cap had bound (NaN: never bound)."""
    _, cap = cap_of(rows.run.optimizers[opt])
    return cap_rule.binding(series(rows.run.table, opt, "max_log_step_W"), cap)


def _log10_range(values) -> str:
    values = np.asarray(values, dtype=float) / math.log(10)
    return f"10^{values.min():.2f} to 10^{values.max():.2f}"


def cap_text(rows: Rows, opt: str) -> str:
    """One capped run's cap in words: never bound (its largest step; every larger cap gives
    this run), or where it first bound (logged t, over seeds)."""
    key, cap = cap_of(rows.run.optimizers[opt])
    label = rows.label(opt)
    largest = series(rows.run.table, opt, "max_log_step_W").iloc[-1].to_numpy()
    bound = bound_at(rows, opt)
    if np.isnan(bound).all():
        return (f"{label}'s {key} {number(cap)} never bound (largest step {_log10_range(largest)} "
                f"over every step: every {key} above 10^{largest.max() / math.log(10):.2f} "
                "gives this run)")  # fmt: skip
    if np.isnan(bound).any():
        where = f"bound on {int((~np.isnan(bound)).sum())} of {len(bound)} seeds"
    else:
        low, high = np.nanmin(bound), np.nanmax(bound)
        where = f"bound by t = {low:g}" + ("" if low == high else f" to {high:g}")
    return f"{label}'s {key} {number(cap)} {where} (this cap only; uncapped: its own row)"


def caps_note(rows: Rows, opts: list[str]) -> str:
    """The caps of the runs `opts` a row reads (those without a cap aside), the range of
    caps its runs stand for, and that the paper's values were lost; "" where none has a
    cap (or the table lacks the largest steps)."""
    capped = [o for o in dict.fromkeys(opts) if o in rows.run.optimizers
              and cap_of(rows.run.optimizers[o])
              and has(rows.run.table, o, "max_log_step_W")]  # fmt: skip
    if not capped:
        return ""
    texts = "; ".join(cap_text(rows, o) for o in capped)
    return f"caps: {texts}; {LOST}; {ROBUSTNESS}"


def binding_effect(rows: Rows, opt: str, since: float) -> str:
    """For a row whose effect is the cap's binding (PS slowing down: once its cap binds PS is
    GD with step eta_max): where `opt`'s cap bound against the window starting at `since`;
    "" where it never bound."""
    if cap_of(rows.run.optimizers[opt]) is None or not has(rows.run.table, opt, "max_log_step_W"):
        return ""
    bound = bound_at(rows, opt)
    if np.isnan(bound).all():
        return ""
    key, cap = cap_of(rows.run.optimizers[opt])
    before = bool(np.all(bound <= since))
    return (f"the effect is the cap's: {rows.label(opt)}'s {key} {number(cap)} bound by "
            f"t = {np.nanmax(bound):g}{' before' if before else ', not all before'} the late "
            f"window (t >= {since:g}), after which {rows.label(opt)} is GD with step {number(cap)} "
            "(an uncapped run's row reads the algorithm without it)")  # fmt: skip
