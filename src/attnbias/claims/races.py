"""A race (a test of kind "race"): one method's quantity below another's at every logged t
after the burn-in, on every seed (measure.ahead), with both methods' numbers and the
margin at the last t. Fig. 2's and Fig. 3's remarks are races; the real-data "faster than
SGD" is a paired race (claims.paired_race)."""

from __future__ import annotations

import math

import numpy as np

from attnbias.claims.caps import caps_note
from attnbias.claims.measure import BURN_IN, after_burn_in, ahead
from attnbias.claims.rows import Measured, Rows, Said, Verdict, mean_spread
from attnbias.claims.thresholds import NEAR


def race_row(rows: Rows, opt: str, rival: str, metric: str, what: str, said: Said,
             higher: bool = False, note: str = "") -> None:  # fmt: skip
    """A race: `metric` (lower is ahead, or higher where `higher`, as a norm; `what`, in
    words) of `opt` below (above) `rival`'s at every logged t after the burn-in
    (measure.ahead), on every seed. Shows both methods' numbers at the last t, the margin
    (a ratio; a difference for logs), how often `opt` was not ahead, on how many seeds the
    two ended equal (the same run: a tie is not ahead, and not the rival ahead either) and
    `note` (what else the measured value must say: a capped run's bound steps), and the
    caps of either run where it has one (claims.caps: App. C's, where they bound)."""
    t_last = rows.run.t_last
    note = "; ".join(n for n in (note, caps_note(rows, [opt, rival])) if n)
    mine = after_burn_in(rows.run.table, opt, metric, t_last)
    theirs = after_burn_in(rows.run.table, rival, metric, t_last)
    mine, theirs = mine.align(theirs, join="inner")
    sign = -1 if higher else 1  # ahead: below, or above where higher is ahead
    last, holds, undecided = ahead(sign * mine, sign * theirs)
    a, b = rows.label(opt), rows.label(rival)
    logs = metric.startswith("log")
    margin = (mine.iloc[-1] - theirs.iloc[-1]) if logs else (mine.iloc[-1] / theirs.iloc[-1])
    margin_text = f"{a} - {b}" if logs else f"{a} / {b}"
    behind = sign * mine.to_numpy() >= sign * theirs.to_numpy()
    tied = int((mine.iloc[-1] == theirs.iloc[-1]).sum())  # the same run: neither ahead
    seeds_behind = int(behind[-1].sum())
    n = behind.shape[1]
    if holds:
        detail = f"{a} ahead on every seed at every logged t >= {t_last // BURN_IN}"
    elif undecided:
        detail = (
            f"ahead at t = {t_last} on every seed, not ahead at {behind.mean():.0%} of the "
            f"logged points (last at t = {last.max():g})"
        )
    else:
        detail = f"{b} ahead at t = {t_last} on {seeds_behind} of {n} seeds"
        if tied:
            detail = (
                f"{a} not ahead at t = {t_last} on {seeds_behind} of {n} seeds ({b} ahead "
                f"on {seeds_behind - tied}, equal to it on {tied})"
            )
    # the race's threshold is a tie: a margin within NEAR of it (not on it) at the end says so
    off_tie = np.abs(margin.to_numpy()) if logs else np.abs(np.log(margin.to_numpy()))
    near = (off_tie > 0) & (off_tie < math.log(1 + NEAR))
    if near.any():
        detail += (
            f"; within {NEAR:.0%} of a tie at t = {t_last} on {int(near.sum())} of {n} seeds "
            f"(margin {margin_text} {mean_spread(margin[near])})"
        )
    measured = Measured(
        f"{what} at t = {t_last}: {a}'s and {b}'s; margin {margin_text}",
        f"t in [{t_last // BURN_IN}, {t_last}]",
        margin.to_numpy(),
        opt=opt,
        value_text=f"at t = {t_last}, mean (min to max) over seeds: {a} "
        f"{mean_spread(mine.iloc[-1])}, {b} {mean_spread(theirs.iloc[-1])}; margin {margin_text} "
        f"{mean_spread(margin)}; {a} not ahead at {behind.mean():.0%} of the {behind.size} "
        f"(t, seed) points{f'; equal at t = {t_last} on {tied} of {n} seeds' if tied else ''}"
        + (f"; {note}" if note else ""),
    )
    below, above = ("above", "below") if higher else ("below", "above")
    verdict = Verdict(
        f"holds if {below} {b}'s at every logged t after the burn-in (t >= {t_last // BURN_IN}) "
        f"on every seed; does not hold if at or {above} it at t = {t_last} on a seed; "
        f"undecided if {below} at the end but not throughout",
        holds,
        undecided=undecided,
        kind="race",
        detail=detail,
    )
    rows.add(said, measured, verdict)
