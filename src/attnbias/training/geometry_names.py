"""The names under which a geometry run logs its measures (attnbias.training.geometry_measures),
and how a face cosine is read: a leaf, so the claims and the figure read them without the
measures' SVM imports."""

from __future__ import annotations

PREFIXES = (
    "align",
    "margin",
    "margin_ratio",
    "face_cos",
    "centroid_align",
    "centroid_margin_ratio",
)


def metric_name(prefix: str, norm: str) -> str:
    """The logged name of a measure (align, margin, margin_ratio) in norm `norm`."""
    return f"{prefix}_{norm}"


# how many sequences' optimal token (Def. 1, with the run's decoder) is not the data's, and
# which (sum of 2^i): geometry_measures
OPT_MOVED = "opt_moved"
OPT_MOVED_SAMPLES = "opt_moved_samples"
# where a run is measured against the tokens its attention selects (tokens: selected): 1 if
# they are locally optimal (Tarzanagh et al.'s check, neighbours.local_tokens), 0 if not;
# opt_moved then counts the sequences whose selected token is not globally optimal
TOKENS_LOCAL = "tokens_locally_optimal"


# below this cosine with the solver's solution, an optimal W (svm.uniqueness) is another
# solution: the optimum is not unique, and alignment with W* is not evidence of anything
UNIQUE_COSINE = 0.99


def is_unique(cosine: float) -> bool:
    """Whether a face cosine says the optimum is unique (NaN: not known, so not unique)."""
    return bool(cosine >= UNIQUE_COSINE)
