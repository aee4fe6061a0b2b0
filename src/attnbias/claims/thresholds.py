"""A threshold (a test of kind "threshold"): values at or beyond a threshold on every seed.
The paper's own thresholds are stated as such; for one of ours the verdict says how far it
would have to move to flip."""

from __future__ import annotations

import numpy as np

from attnbias.claims.rows import Measured, Rows, Said, Verdict

# a verdict whose worst seed sits within this fraction of its threshold says so (near_text)
NEAR = 0.01


def threshold_row(rows: Rows, said: Said, measured: Measured, threshold: float, *,
                  above: bool, ours: str) -> None:  # fmt: skip
    """A threshold test (`measured.values` >= threshold if `above`, else <=) on every seed.
    `ours`: why we chose it, or "" for the paper's own; for ours the verdict states the
    factor by which the threshold would have to move to flip (flip_text)."""
    values = np.asarray(measured.values, dtype=float)
    holds = bool(np.all(values >= threshold) if above else np.all(values <= threshold))
    sign = ">=" if above else "<="
    source = f"ours: {ours}" if ours else "the paper's"
    worst = values.min() if above else values.max()
    detail = near_text(worst, threshold)  # the paper's threshold: said only where near
    if ours:
        detail = f"our threshold {threshold:g}; {flip_text(worst, threshold)}"
    reference = f"holds if {sign} {threshold:g} on every seed (threshold {source})"
    rows.add(said, measured, Verdict(reference, holds, kind="threshold", detail=detail))


def flip_text(worst: float, threshold: float) -> str:
    """How far a threshold of ours sits from flipping the verdict: the worst seed's value
    over the threshold, as a factor (or where a sign change makes a factor meaningless)."""
    if worst == 0 or threshold == 0 or np.sign(worst) != np.sign(threshold):
        return f"it flips at {worst:.3g} (the worst seed), not at a factor of it"
    factor = max(worst / threshold, threshold / worst)
    near = f"; {near_text(worst, threshold)}" if factor < 1 + NEAR else ""
    return f"it flips if moved {moved_by(factor)} (to the worst seed's {worst:.4g}){near}"


def moved_by(factor: float) -> str:
    """A factor near 1 as a percentage (a factor 1.004 reads "by 0.4%"), else as a factor."""
    return f"by {100 * (factor - 1):.2g}%" if factor < 1.1 else f"by a factor {factor:.3g}"


def near_text(worst: float, threshold: float) -> str:
    """Where the worst seed's value is within NEAR of the threshold (either side), the words
    that say so; "" elsewhere."""
    if threshold == 0 or not np.isfinite(worst) or abs(worst / threshold - 1) >= NEAR:
        return ""
    return f"within {NEAR:.0%} of its threshold: the worst seed's {worst:.4g} against {threshold:g}"


def band_near_text(ratios, tolerance: float) -> str:
    """near_text of a tolerance band 1 +- `tolerance`: of the ratio farthest from 1 against
    the edge on its side ("" where it sits farther than NEAR from that edge)."""
    ratios = np.asarray(ratios, dtype=float)
    worst = float(ratios[np.argmax(np.abs(ratios - 1))])
    return near_text(worst, 1 + tolerance if worst >= 1 else 1 - tolerance)
