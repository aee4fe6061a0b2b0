"""The Sources the docs' numbers come from: a claims row's numbers or words, a metric of an
aggregate table (each seed's value), a crossing, a race, a data hypothesis, a sweep's
points. Each says in words what it reads, for the check's report."""

from __future__ import annotations

import re

import numpy as np

from attnbias.claims.measure import after_burn_in, ahead
from attnbias.claims.write import optional_line, summary_line
from attnbias.optim import cap_rule
from attnbias.quotes.build import ROBUSTNESS, Build
from attnbias.quotes.numbers import NUMBER, value_of
from attnbias.quotes.quote import Source

RANGE = ("low", "high")  # a claims row's measured values over seeds: its lowest and highest


def row(key: str, column: str | tuple = RANGE, target: str | None = None) -> Source:
    """A claims row's number(s): `column` (low, high, mean, r2, ...) or, by default, its
    measured range over the seeds (low to high)."""
    columns = list(column) if isinstance(column, tuple) else [column]
    return Source(
        f"claims row {key!r}, {' to '.join(columns)}",
        lambda b: np.array([float(b.row(key)[c]) for c in columns]),
        target,
    )


def said(key: str, words: str, column: str = "detail", target: str | None = None) -> Source:
    """The number that follows `words` in a claims row's text (`column`): for numbers that
    the table states only in words, such as a fit's span or a threshold's flip factor."""

    def read(b: Build) -> float:
        text = str(b.row(key)[column])
        found = re.search(re.escape(words) + r"\s*(" + NUMBER + ")", text)
        if not found:
            raise ValueError(f"claims row {key!r} no longer says {words!r} in its {column}")
        return value_of(found[1])

    return Source(f"claims row {key!r}: the number after {words!r}", read, target)


def robust_race(constant: str, value: float, key: str, who: str) -> Source:
    """The race row `key`'s values of `who` (as the row names the algorithm: "Eq. 10",
    "GD") at its last t, lowest and highest over seeds, as the robustness target measured
    them with `constant` (config's claims_robustness.constants) at `value`: from the row's
    "<who> mean (low to high)"."""

    def read(b: Build) -> np.ndarray:
        text = str(b.robustness_row(constant, value, key)["value_text"])
        found = re.search(re.escape(who) + rf" {NUMBER} \(({NUMBER}) to ({NUMBER})\)", text)
        if not found:
            raise ValueError(f"claims row {key!r} at {constant} = {value:g} names no {who!r}")
        return np.array([value_of(found[1]), value_of(found[2])])

    what = f"claims_robustness: row {key!r} at {constant} = {value:g}, {who}'s range over seeds"
    return Source(what, read, ROBUSTNESS)


def outcome(key: str, *outcomes: str, target: str | None = None) -> Source:
    """True where the claims row's outcome is one of `outcomes` (holds, does not hold,
    undecided)."""
    return Source(
        f"claims row {key!r} reads {' or '.join(outcomes)}",
        lambda b: b.row(key)["outcome"] in outcomes,
        target,
    )


def robust_cell(key: str, words: str) -> Source:
    """True where the claims row `key`'s robustness cell says `words` (a measured range,
    e.g. "holds for PS's cap (eta_max) in [1e148, 1e308]": fig2's caps, of the default
    build)."""
    return Source(
        f"claims row {key!r}'s robustness cell says {words!r}",
        lambda b: words in str(b.row(key)["robustness"]),
    )


def every(*sources: Source) -> Source:
    """True where every (bool) source is."""
    return Source(
        "; ".join(s.what for s in sources),
        lambda b: all(s.read(b) for s in sources),
        next((s.target for s in sources if s.target), None),
    )


def default_summary(b: Build) -> str:
    """The claims table's summary line as the default build alone gives it: where the build
    also holds optional targets, the counts without their rows (the claims header's
    optional line)."""
    table = b.claims()
    extra = optional_line(table, optional_experiments(b))
    return extra.split("gives them: ", 1)[1] if extra else summary_line(table)


def summary(index: int) -> Source:
    """The index-th number of the claims table's summary line, the default build's."""
    return Source(
        f"number {index + 1} of the claims summary, the default build's",
        lambda b: value_of(re.findall(NUMBER, default_summary(b))[index]),
    )


def summary_kind(label: str) -> Source:
    """The summary's count of the rows of one kind (claims.summary.kinds_line): the number
    after `label` ("race", "a data check"), the default build's."""

    def read(b: Build) -> float:
        found = re.search(rf"(?:: |; ){re.escape(label)} (\d+)[;.]", default_summary(b))
        if not found:
            raise ValueError(f"the claims summary counts no rows of the kind {label!r}")
        return float(found[1])

    return Source(f"the claims summary's count of rows of the kind {label!r}", read)


def optional_experiments(b: Build) -> list[str]:
    """The experiments of optional targets whose tables the claims job read (as
    workflow/scripts/claims.py names them from its params, recorded in its provenance)."""
    config = b.provenance("claims")["config"]
    names = [*config.get("real", {})]
    names += [panel["figure"] for panel in config.get("similarity", {}).values()]
    return names + [n for n, e in config.get("geometry", {}).items() if e.get("optional")]


def created(name: str = "claims") -> Source:
    return Source(f"the day results/{name} was built", lambda b: b.created(name), day=True)


def final(experiment: str, optimizer: str, metric: str = "gap_W", target=None) -> Source:
    """Each seed's value at the last logged t."""
    return Source(
        f"{experiment} {optimizer}: {metric} at the last t, over seeds",
        lambda b: b.final(experiment, optimizer, metric),
        target,
    )


def at(experiment: str, optimizer: str, metric: str, t: int, target=None) -> Source:
    """Each seed's value at the first logged iteration >= t."""

    def read(b: Build) -> np.ndarray:
        values = b.series(experiment, optimizer, metric)
        return values[values.index >= t].iloc[0].to_numpy()

    return Source(f"{experiment} {optimizer}: {metric} at t = {t}, over seeds", read, target)


def series(experiment, optimizer, metric, reduce, what: str, target=None) -> Source:
    """`reduce` of the (iteration x seed) values of one metric."""
    return Source(
        f"{experiment} {optimizer}: {what}",
        lambda b: reduce(b.series(experiment, optimizer, metric)),
        target,
    )


def first(experiment: str, optimizer: str, threshold: float) -> Source:
    """Each seed's exact first t with 1 - cos(W_t, W_mm) < threshold."""
    return Source(
        f"{experiment} {optimizer}: first t with 1 - cos(W_t, W_mm) < {threshold:g}, over seeds",
        lambda b: b.first_below(experiment, optimizer, threshold),
    )


def never(experiment: str, optimizer: str, threshold: float) -> Source:
    """True where no seed crosses 1 - cos(W_t, W_mm) < threshold within the run."""
    return Source(
        f"{experiment} {optimizer}: no seed reaches 1 - cos(W_t, W_mm) < {threshold:g}",
        lambda b: bool(np.all(np.isnan(b.first_below(experiment, optimizer, threshold)))),
    )


def ratio(experiment: str, a: str, b_: str, metric: str = "gap_W") -> Source:
    """Each seed's a / b of `metric` at the last t."""
    return Source(
        f"{experiment}: {a} / {b_} of {metric} at the last t, over seeds",
        lambda b: b.final(experiment, a, metric) / b.final(experiment, b_, metric),
    )


def seeds_behind(experiment: str, a: str, b_: str, metric: str = "gap_W", of=False) -> Source:
    """On how many seeds `b_` ends ahead of (below) `a` (of=True: the number of seeds)."""

    def read(b: Build) -> int:
        mine, theirs = b.final(experiment, a, metric), b.final(experiment, b_, metric)
        return len(mine) if of else int(np.sum(theirs < mine))

    what = "seeds" if of else f"seeds on which {b_} ends below {a} in {metric}"
    return Source(f"{experiment}: {what}", read)


def behind(experiment: str, a: str, rival: str, metric: str = "gap_W", target=None) -> Source:
    """The share of the logged (t, seed) points after the burn-in at which `a` is not below
    `rival` (the race rows' "not ahead at x%")."""

    def read(b: Build) -> float:
        mine, theirs = _race(b, experiment, a, rival, metric)
        return float((mine.to_numpy() >= theirs.to_numpy()).mean())

    what = f"{experiment}: share of logged points after the burn-in where {a} is not below {rival}"
    return Source(what, read, target)


def last_behind(experiment: str, a: str, rival: str, metric: str, target=None) -> Source:
    """The last logged t at which `a` is not below `rival`, latest over seeds."""

    def read(b: Build) -> float:
        last, _, _ = ahead(*_race(b, experiment, a, rival, metric))
        return float(last.max())

    what = f"{experiment}: last logged t at which {a} is not below {rival} in {metric}"
    return Source(what, read, target)


def below_throughout(experiment: str, a: str, rival: str, metric: str = "gap_W") -> Source:
    """True where `a` is below `rival` at every logged t after the burn-in, every seed."""

    def read(b: Build) -> bool:
        _, holds, _ = ahead(*_race(b, experiment, a, rival, metric))
        return bool(holds)

    return Source(f"{experiment}: {a} below {rival} in {metric} after the burn-in", read)


def _race(b: Build, experiment: str, a: str, rival: str, metric: str):
    table = b.metrics(experiment)
    t_last = int(table["iteration"].max())
    mine = after_burn_in(table, a, metric, t_last)
    theirs = after_burn_in(table, rival, metric, t_last)
    return mine.align(theirs, join="inner")


def step_reaches(experiment: str, optimizer: str, step: float | None = None) -> Source:
    """Each seed's first logged t by which the adaptive step has reached `step` (None: the
    optimizer's cap in the build's config) at SOME step, every step tracked
    (max_log_step_W, attnbias.optim.cap_rule.binding): where a cap that large binds."""

    def read(b: Build) -> np.ndarray:
        cap = step or b.cap(experiment, optimizer)
        return cap_rule.binding(b.series(experiment, optimizer, "max_log_step_W"), cap)

    what = f"a step of {step:g}" if step else "its cap"
    return Source(f"{experiment} {optimizer}: first t at which the step reaches {what}", read)


def hypothesis(experiment: str, name: str, reduce=None) -> Source:
    """A measured hypothesis of the data (attnbias.data.hypotheses), each seed's or reduced."""

    def read(b: Build):
        values = np.array([seed[name] for seed in b.hypotheses(experiment)], dtype=float)
        return reduce(values) if reduce else values

    return Source(f"{experiment}'s data: {name}", read)


def seeds(*experiments: str) -> Source:
    return Source(
        f"the seeds of {', '.join(experiments)}",
        lambda b: np.array([len(b.seeds(e)) for e in experiments]),
    )


def computed(what: str, read, target: str | None = None) -> Source:
    return Source(what, read, target)


def support_vectors(experiment: str) -> Source:
    return hypothesis(experiment, "cond1_sv_fraction")


def gap_u_union(experiment: str, *optimizers: str) -> Source:
    return computed(
        f"{experiment}: 1 - cos(u_t, u_mm) at the last t of {', '.join(optimizers)}, over seeds",
        lambda b: np.concatenate([b.final(experiment, o, "gap_u") for o in optimizers]),
    )


def slope_loglog(experiment: str, optimizer: str, metric: str, lo: float, hi: float) -> Source:
    """The largest slope over seeds of ln(metric) against ln t over [lo, hi]."""

    def read(b: Build) -> float:
        values = b.series(experiment, optimizer, metric)
        window = values[(values.index >= lo) & (values.index <= hi)]
        t = np.log(window.index.to_numpy(dtype=float))
        return max(np.polyfit(t, np.log(window[s].to_numpy()), 1)[0] for s in window)

    return computed(
        f"{experiment} {optimizer}: largest log-log slope of {metric} over [{lo:g}, {hi:g}]", read
    )


def opt_softmax(optimizer: str, sample: int, what: str, reduce) -> Source:
    """fig8's optimal-token softmax of one sample, reduced over t."""
    return series(
        "fig8", optimizer, f"opt_softmax_{sample}", reduce, f"sample {sample + 1}: {what}"
    )


def cap_never_binds(experiment: str, optimizer: str) -> Source:
    return computed(
        f"{experiment} {optimizer}: the step never reaches its cap",
        lambda b: bool(np.all(np.isnan(step_reaches(experiment, optimizer).read(b)))),
    )


def step_reaches_latest(experiment: str, optimizer: str, step: float) -> Source:
    what = f"first t at which the step reaches {step:.0e}".replace("e+", "e")
    return computed(
        f"{experiment} {optimizer}: {what}, latest seed",
        lambda b: np.max(step_reaches(experiment, optimizer, step).read(b)),
    )
