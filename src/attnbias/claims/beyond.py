"""Beyond the paper: which norm's max-margin each optimizer finds on self-attention (the
geometry experiments, layout `geometry`; SPEC, "Beyond the paper"). A registry of its own
(BEYOND), counted apart from the paper's statements: one entry per published result, each
saying what it was proved for. A result proved for linear models only is a conjecture test
on attention; one that fails on attention is a finding, reported with its numbers.

Each run of an optimizer the entry covers, whose expected norm N (its rule's
implicit_norm, attnbias.geometry.expected) is the entry's, gets two rows, at the last
logged iteration, every seed:
  own norm first   its alignment with W*_N above its alignment with every other norm's
                   solution (a race between the norms' solutions)
  margin           its normalized margin in N at least MARGIN_FRACTION of the optimum
                   1 / ||W*_N||_N (logged as margin_ratio_N; a threshold of ours)
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from attnbias.claims.claim import Statement
from attnbias.claims.measure import series
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread
from attnbias.claims.thresholds import threshold_row
from attnbias.geometry.expected import expected_norm
from attnbias.geometry.measures import metric_name
from attnbias.svm.norms import parse_norm

# "approaches the optimal margin": at least this fraction of 1 / ||W*_N||_N at the last t
MARGIN_FRACTION = 0.9
GEOMETRY = ("geometry",)
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


def geometry_rows(rows: Rows, *, kind: str) -> None:
    """The two rows (own norm first, margin) of every covered run whose expected norm is
    of `kind` (parse_norm's: fro, max, lp, spectral, nuclear)."""
    table = rows.run.table
    norms = norms_of(table)
    for opt in rows.runs(*rows.statement.covers):
        norm = expected_norm(rows.run.optimizers[opt])
        if parse_norm(norm).kind != kind or norm not in norms:
            continue
        _own_norm_first(rows, opt, norm, norms)
        _margin(rows, opt, norm)


def _own_norm_first(rows: Rows, opt: str, norm: str, norms: list[str]) -> None:
    table = rows.run.table
    align = {n: final(table, opt, metric_name("align", n)) for n in norms}
    others = [n for n in norms if n != norm]
    rival = np.max([align[n] for n in others], axis=0)  # per seed, the closest other norm
    closest = [others[k] for k in np.argmax([align[n] for n in others], axis=0)]
    lead = align[norm] - rival
    holds = bool(np.all(lead > 0))
    label = rows.label(opt)
    missed = sorted({c for c, d in zip(closest, lead, strict=True) if d <= 0})
    detail = (
        f"{label} is closest to its own {norm} solution on every seed"
        if holds
        else f"a finding: on {int(np.sum(lead <= 0))} of {lead.size} seeds {label} is closer "
        f"to the {', '.join(missed)} solution than to its own {norm} solution"
    )
    rows.add(
        Said(
            f"{opt} own norm first",
            f"W_t aligns with the {norm}-norm SVM solution more than with any other norm's.",
        ),
        Measured(
            f"alignment with W*_{norm} minus the largest alignment with another norm's W* "
            f"({', '.join(others)})",
            f"t = {rows.run.t_last}",
            lead,
            opt=opt,
            value_text=f"own ({norm}) {spread(align[norm])}; closest other "
            f"{spread(rival)}; lead {spread(lead)}",
        ),
        Verdict(
            "holds if the lead is > 0 on every seed (its own norm's solution the closest)",
            holds,
            detail=detail,
        ),
    )


def _margin(rows: Rows, opt: str, norm: str) -> None:
    ratio = final(rows.run.table, opt, metric_name("margin_ratio", norm))
    said = Said(
        f"{opt} own margin",
        f"its normalized margin in the {norm} norm approaches the optimum 1/||W*_{norm}||.",
    )
    measured = Measured(
        f"normalized {norm} margin times ||W*_{norm}||_{norm} (1: the optimum)",
        f"t = {rows.run.t_last}",
        ratio,
        opt=opt,
        value_text=f"{spread(ratio)} of the optimal {norm} margin",
    )
    threshold_row(
        rows, said, measured, MARGIN_FRACTION, above=True,
        ours=f"'approaches' read as at least {MARGIN_FRACTION:.0%} of the optimum at the last t",
    )  # fmt: skip
    row = rows.rows[-1]
    if not row.holds:  # a surprise on attention: said as one, with its numbers
        found = f"a finding: {rows.label(opt)} reaches {spread(ratio)} of its {norm} margin"
        rows.rows[-1] = replace(row, detail=f"{found}; {row.detail}")


def _entry(key, result, quote, where, covers, kind, proved_for) -> Statement:
    return Statement(
        key=key,
        result=f"Beyond the paper: {result}",
        quote=quote,
        where=where,
        section="beyond",
        layouts=GEOMETRY,
        covers=covers,
        data=f"proved for {proved_for}; measured on the geometry experiments' data",
        kind="race",
        measure=partial(geometry_rows, kind=kind),
        missing=MISSING,
    )


BEYOND: tuple[Statement, ...] = (
    _entry(
        "geo-fro",
        "GD and NGD find the Frobenius margin (control)",
        "GD and NGD converge in direction to W_mm, the Frobenius-norm attention SVM",
        "this paper, Thm. 1 (NGD); Tarzanagh et al. 2023, arXiv 2308.16898 (GD)",
        ("gd", "ngd"),
        "fro",
        "attention (Example 1 under Ass. 1 and 2 here; the control of the section)",
    ),
    _entry(
        "geo-max",
        "sign descent and Adam find the max-norm margin",
        "sign descent, normalized l_inf steepest descent and Adam converge in direction to "
        "the max-norm (entrywise l_inf) max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664",
        ("sign", "nsd", "adam"),
        "max",
        LINEAR,
    ),
    _entry(
        "geo-lp-nsd",
        "l_p steepest descent finds the l_p margin",
        "normalized steepest descent in the entrywise l_p norm converges in direction to "
        "the l_p max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664",
        ("nsd",),
        "lp",
        LINEAR,
    ),
    _entry(
        "geo-spectral",
        "spectral descent and Muon find the spectral margin",
        "spectral descent and Muon (W <- W - eta U V^T of the gradient's SVD) converge in "
        "direction to the spectral-norm max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664",
        ("muon",),
        "spectral",
        LINEAR,
    ),
    _entry(
        "geo-mirror",
        "l_p mirror descent finds the l_p attention SVM",
        "mirror descent with potential ||W||_p^p / p converges in direction to the l_p-norm "
        "attention SVM",
        "Julistiono, Tarzanagh, Azizan 2024, arXiv 2410.14581",
        ("mirror",),
        "lp",
        "attention (one softmax-attention layer, W trained; under their conditions on the "
        "data and the start)",
    ),
    _entry(
        "geo-kq",
        "separate K, Q find the nuclear-norm margin",
        "training K and Q separately (W = K Q^T) biases W toward the nuclear-norm attention SVM",
        "Tarzanagh et al. 2023, arXiv 2308.16898 (the regularization path of (K, Q)); Sheen "
        "et al. 2024, arXiv 2403.08699 (gradient flow on K, Q)",
        ("kq",),
        "nuclear",
        "attention (Tarzanagh et al.: the regularization path, and gradient descent locally; "
        "Sheen et al.: gradient flow under conditions on the data and the start)",
    ),
)
KEYS = frozenset(s.key for s in BEYOND)
