"""The names under which a geometry run logs its measures (attnbias.geometry.measures):
a leaf, so the claims and the figure read them without the measures' SVM imports."""

from __future__ import annotations

PREFIXES = ("align", "margin", "margin_ratio", "face_cos")


def metric_name(prefix: str, norm: str) -> str:
    """The logged name of a measure (align, margin, margin_ratio) in norm `norm`."""
    return f"{prefix}_{norm}"


# how many sequences' optimal token (Def. 1, with the run's decoder) is not the data's, and
# which (sum of 2^i): geometry.measures
OPT_MOVED = "opt_moved"
OPT_MOVED_SAMPLES = "opt_moved_samples"
