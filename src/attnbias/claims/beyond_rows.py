"""The rows of the statements beyond the paper (claims.beyond's registry): for each run of a
covered optimizer, its own norm first and its margin, and the optimal tokens kept under a
trained decoder; the measures and thresholds claims.beyond's docstring describes."""

from __future__ import annotations

import numpy as np

from attnbias.claims.measure import has, rising_at_horizon, series
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread
from attnbias.claims.thresholds import flip_text, near_text
from attnbias.svm.norm_values import parse_norm
from attnbias.training.geometry_names import (
    OPT_MOVED,
    OPT_MOVED_SAMPLES,
    TOKENS_LOCAL,
    is_unique,
    metric_name,
)

# On cross-attention data (queries Z apart from the tokens, a data model with queries: the
# neighbours' cross_gaussian), measured against the tokens each run's attention selects:
# the algorithms a published proof covers there, for the statements whose proof is for
# attention (the linear-model statements are conjecture tests on either). geo-fro: GD by
# Tarzanagh et al. 2023 (arXiv 2308.16898; their model is cross-attention, convergence
# to the locally optimal tokens' SVM); this paper's Thm. 1 (NGD) is for self-attention, so
# NGD's rows there are comparisons. geo-mirror and geo-kq keep their covers: Julistiono et
# al. and Tarzanagh et al. state them for cross-attention.
CROSS_COVERS = {"geo-fro": ("gd",)}

# "approaches the optimal margin": at least this fraction of 1 / ||W*_N||_N at the last t
MARGIN_FRACTION = 0.9
GEOMETRY_LAYOUTS = ("geometry",)  # the layouts its statements are made for
MISSING = "build results/geometry.pdf (snakemake -c2 results/geometry.pdf)"
LINEAR = "linear models only (a conjecture test on attention)"


def norms_of(table) -> list[str]:
    """The norms a geometry table was measured in (its align_<norm> metrics)."""
    prefix = metric_name("align", "")
    return sorted({m[len(prefix) :] for m in set(table["metric"]) if m.startswith(prefix)})


def final(table, optimizer: str, metric: str) -> np.ndarray:
    """A metric's value at the last logged iteration, per seed."""
    values = series(table, optimizer, metric)
    return values.iloc[-1].to_numpy(dtype=float)


def cross_attention(rows: Rows) -> bool:
    """Whether the experiment's data carry queries Z (its data model's registry entry)."""
    from attnbias.data.models import MODELS, data_model

    if rows.run.dataset not in MODELS:
        return False
    queries = data_model(rows.run.dataset).queries
    return bool(queries({}) if callable(queries) else queries)


def covers_here(rows: Rows) -> tuple | None:
    """The algorithms the statement is proved for on this experiment's regime: on
    cross-attention data, CROSS_COVERS's where the statement has an entry there (the others'
    rows become comparisons), else the statement's own (None: Said's default)."""
    if cross_attention(rows) and rows.statement.key in CROSS_COVERS:
        return CROSS_COVERS[rows.statement.key]
    return None


def geometry_rows(rows: Rows, *, kind: str) -> None:
    """The two rows (own norm first, margin) of every covered run whose expected norm is
    of `kind` (parse_norm's: fro, max, lp, spectral, nuclear)."""
    table = rows.run.table
    norms = norms_of(table)
    for opt in rows.runs(*rows.statement.covers):
        norm = rows.specs[opt].implicit_norm()
        if norm is None or parse_norm(norm).kind != kind or norm not in norms:
            continue
        _own_norm_first(rows, opt, norm, norms)
        _margin(rows, opt, norm)


def tokens_text(table, opt: str) -> str:
    """Where a run was measured against the tokens its attention selects (tokens:
    selected), which those are at the last t, per seed: "" where it was not."""
    if not has(table, opt, TOKENS_LOCAL):
        return ""
    moved, local = final(table, opt, OPT_MOVED), final(table, opt, TOKENS_LOCAL)
    seeds = series(table, opt, TOKENS_LOCAL).columns
    others = [
        f"seed {seed}: {int(m)} sequence(s) not globally optimal, "
        + ("locally optimal" if ok == 1 else "NOT locally optimal (Tarzanagh et al.'s check)")
        for seed, m, ok in zip(seeds, moved, local, strict=True)
        if m > 0
    ]
    return "; measured against the SVMs of the tokens its attention selects at the last t: " + (
        "globally optimal on every seed"
        if not others
        else f"globally optimal on {len(seeds) - len(others)} of {len(seeds)} seeds ("
        + "; ".join(others)
        + ")"
    )


def _own_norm_first(rows: Rows, opt: str, norm: str, norms: list[str]) -> None:
    """Its own norm's solution the closest (the alignment lead over every other norm's),
    where that solution is unique on every seed. Where it is not (svm.uniqueness: an
    optimal solution far from the solver's), the alignment measures which optimum the
    solver returned, so the row is judged by the margin ratios instead, which depend on the
    optimal values alone: its own norm's ahead of every other norm's."""
    table = rows.run.table
    face = metric_name("face_cos", norm)  # NaN (not probed) rows are not written
    faces = final(table, opt, face) if has(table, opt, face) else np.array([np.nan])
    unique = all(is_unique(c) for c in faces)
    measure = "align" if unique else "margin_ratio"
    value = {n: final(table, opt, metric_name(measure, n)) for n in norms}
    others = [n for n in norms if n != norm]
    rival = np.max([value[n] for n in others], axis=0)  # per seed, the closest other norm
    closest = [others[k] for k in np.argmax([value[n] for n in others], axis=0)]
    lead = value[norm] - rival
    holds = bool(np.all(lead > 0))
    label = rows.label(opt)
    missed = sorted({c for c, d in zip(closest, lead, strict=True) if d <= 0})
    what = "solution" if unique else "margin (as a fraction of each optimum)"
    detail = (
        f"{label} is closest to its own {norm} {what} on every seed"
        if holds
        else f"a finding: on {int(np.sum(lead <= 0))} of {lead.size} seeds {label} is closer "
        f"to the {', '.join(missed)} {what} than to its own {norm} {what}"
    )
    probed = np.isfinite(faces)
    doubt = "optimum is not unique" if probed.all() else "uniqueness was not probed"
    if not unique:
        cosine = f" (an optimal solution has cosine {spread(faces)} with the solver's)"
        detail += f"; judged by the margin ratios: the {norm}-norm SVM's {doubt}" + (
            cosine if probed.all() else ""
        )
    detail += "; " + _implied_by_geometry(table, opt, measure, norm, norms, lead)
    detail += tokens_text(table, opt)
    quantity = (
        f"alignment with W*_{norm} minus the largest alignment with another norm's W* "
        if unique
        else f"margin ratio in {norm} minus the largest margin ratio in another norm "
    )
    rows.add(
        Said(
            f"{opt} own norm first",
            f"W_t aligns with the {norm}-norm SVM solution more than with any other norm's.",
            covers=covers_here(rows),
        ),
        Measured(
            quantity + f"({', '.join(others)})",
            f"t = {rows.run.t_last}",
            lead,
            opt=opt,
            value_text=f"own ({norm}) {spread(value[norm])}; closest other "
            f"{spread(rival)}; lead {spread(lead)}"
            + ("" if unique else f" (margin ratios: the {norm} SVM's {doubt})"),
        ),
        Verdict(
            "holds if the lead is > 0 on every seed (its own norm's solution the closest; "
            "where that solution is not unique, its own norm's margin ratio the largest)",
            holds,
            detail=detail,
        ),
    )


def _implied_by_geometry(
    table, opt: str, measure: str, norm: str, norms: list[str], lead: np.ndarray
) -> str:
    """Whether the SVMs' geometry alone implies an own-norm-first lead: the lead of their
    centroid (the same measure, per seed), and on how many seeds the run's lead is above
    it. Tables logged before the centroid measures say so."""
    names = {n: metric_name(f"centroid_{measure}", n) for n in norms}
    if not all(has(table, opt, name) for name in names.values()):
        return "whether the SVMs' geometry alone implies it: not measured in this table"
    value = {n: final(table, opt, name) for n, name in names.items()}
    centroid_lead = value[norm] - np.max([v for n, v in value.items() if n != norm], axis=0)
    implied = int(np.sum(centroid_lead > 0))
    above = int(np.sum(lead > centroid_lead))
    says = (
        "the SVMs' geometry alone implies it"
        if implied == lead.size
        else "the SVMs' geometry alone does not imply it"
        if implied == 0
        else f"the SVMs' geometry alone implies it on {implied} of {lead.size} seeds"
    )
    return (
        f"{says} (the norms' centroid, a direction favouring none, has lead "
        f"{spread(centroid_lead)}); the run's lead is above the centroid's on {above} of "
        f"{lead.size} seeds"
    )


def _margin(rows: Rows, opt: str, norm: str) -> None:
    """The margin row: holds at MARGIN_FRACTION of the optimum at the last t. Below it, a
    run still rising at the horizon is undecided at this horizon (the results are
    asymptotic, and GD's own rate is 1/log t): its margin positive and above its value at
    the previous logged t (the last logged interval) and at t/10 (the last decade), on
    every seed (rising_at_horizon). Otherwise a finding, said with its numbers: where it
    fell, on which seeds, from what to what."""
    values = series(rows.run.table, opt, metric_name("margin_ratio", norm))
    ratio = values.iloc[-1].to_numpy(dtype=float)
    t_last = int(values.index[-1])
    rising, t_before, before, t_prev, prev = rising_at_horizon(values)
    short = ratio < MARGIN_FRACTION
    holds = bool(not short.any())
    undecided = bool(not holds and rising.all())
    label = rows.label(opt)
    near = near_text(ratio.min(), MARGIN_FRACTION)
    if holds:
        detail = f"our threshold {MARGIN_FRACTION:g}; {flip_text(ratio.min(), MARGIN_FRACTION)}"
    elif undecided:
        detail = (
            f"at this horizon: {label} reaches {spread(ratio)} of its {norm} margin, up from "
            f"{spread(prev)} at t = {t_prev} and {spread(before)} at t = {t_before} on every "
            f"seed; a longer run decides (our threshold {MARGIN_FRACTION:g})"
        ) + (f"; {near}" if near else "")
    else:
        fell = [
            f"seed {seed}: {a:.3g} at t = {t_prev} to {b:.3g}"
            for seed, a, b, up in zip(values.columns, prev, ratio, rising, strict=True)
            if not up
        ]
        detail = (
            f"a finding: {label} reaches {spread(ratio)} of its {norm} margin at t = {t_last}, "
            f"short of {MARGIN_FRACTION:g} on {int(short.sum())} of {ratio.size} seeds; not "
            f"positive and rising at the horizon (over the last logged interval, t = {t_prev} "
            f"to {t_last}, and the last decade, from t = {t_before}) on {len(fell)} of "
            f"{ratio.size} seeds ({'; '.join(fell)}) (our threshold {MARGIN_FRACTION:g})"
        ) + (f"; {near}" if near else "")
    rows.add(
        Said(
            f"{opt} own margin",
            f"its normalized margin in the {norm} norm approaches the optimum 1/||W*_{norm}||.",
            covers=covers_here(rows),
        ),
        Measured(
            f"normalized {norm} margin times ||W*_{norm}||_{norm} (1: the optimum)",
            f"t = {t_before} to {t_last}",
            ratio,
            opt=opt,
            value_text=f"{spread(ratio)} of the optimal {norm} margin at t = {t_last} "
            f"({spread(before)} at t = {t_before}); {spread(prev)} at the previous logged "
            f"t = {t_prev}",
        ),
        Verdict(
            f"holds if >= {MARGIN_FRACTION:g} on every seed at the last t (threshold ours: "
            "'approaches' read at a finite horizon); undecided where short of it but positive "
            "and rising at the horizon on every seed: above its value at the previous logged t "
            "and at t/10",
            holds,
            undecided=undecided,
            kind="threshold",
            detail=detail,
        ),
    )


def _moved_samples(masks) -> list[int]:
    """The sequences whose bits are set in any of the logged masks (sum of 2^i)."""
    union = 0
    for mask in masks:
        union |= int(mask)
    return [i for i in range(union.bit_length()) if union >> i & 1]


def optimal_tokens_rows(rows: Rows) -> None:
    """Where u trains: does every sequence keep the data's optimal token (Def. 1 with the
    run's own decoder), at every logged t, on every seed? One row per optimizer; where not,
    which sequences moved, on which seeds, from which logged t (training.geometry_measures)."""
    table = rows.run.table
    for opt in rows.runs():
        if not has(table, opt, OPT_MOVED) or has(table, opt, TOKENS_LOCAL):
            # a fixed decoder: its optimal tokens cannot move (where its runs are measured
            # against their selected tokens, opt_moved counts those: tokens_text says it)
            continue
        counts = series(table, opt, OPT_MOVED)
        masks = series(table, opt, OPT_MOVED_SAMPLES)
        final_counts = counts.iloc[-1].to_numpy(dtype=float)
        moved = {}
        for seed in counts.columns:
            ever = counts[seed] > 0
            if ever.any():
                over_run = ", ".join(map(str, _moved_samples(masks[seed])))
                at_end = ", ".join(map(str, _moved_samples(masks[seed].iloc[-1:]))) or "none"
                moved[seed] = (
                    f"seed {seed}: from t = {ever.idxmax()}, sequence(s) {over_run} at some "
                    f"logged t, {at_end} at the last"
                )
        label = rows.label(opt)
        holds = not moved
        # a rule no published result places (no expected norm): a comparison, not a claim
        unplaced = rows.specs[opt].implicit_norm() is None
        detail = (
            f"{label} keeps every sequence's optimal token on every seed"
            if holds
            else f"a finding: {label}'s decoder makes another token optimal ("
            + "; ".join(moved.values())
            + "); its margins and alignments are measured against the SVM of those tokens"
        )
        rows.add(
            Said(
                f"{opt} optimal tokens kept",
                "with W and u trained, every sequence's optimal token (Def. 1, under the "
                "run's own u) stays the data's, the tokens the SVMs are first solved for.",
                covers=() if unplaced else None,
            ),
            Measured(
                "sequences whose optimal token under u_t is not the data's (at the last t)",
                f"every logged t up to {rows.run.t_last}",
                final_counts,
                opt=opt,
                value_text=f"{spread(final_counts)} sequence(s) at the last t"
                + ("" if holds else "; " + "; ".join(moved.values())),
            ),
            Verdict("holds if none moves at any logged t on any seed", holds, detail=detail),
        )
