"""docs/geometry.md's registry: the counts its section "How robust" quotes from the
robustness target (results/claims_robustness.md, an optional target) as the claims table
reads it: the rows beyond the paper, those whose verdict depends on one of the geometry
experiments' constants, those fragile. Where the build's claims table was measured without
those constants' points, they read "not built here"."""

from __future__ import annotations

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.write import beyond_rows
from attnbias.quotes.build import ROBUSTNESS, Build, Unbuilt
from attnbias.quotes.quote import Page
from attnbias.quotes.sources import computed

GEOMETRY_DOC = "docs/geometry.md"


def beyond(b: Build) -> pd.DataFrame:
    """The claims table's rows beyond the paper, with their robustness cells measured on the
    geometry constants (the config's claims_robustness entries geometry_*); Unbuilt where
    the build lacks their points or the claims table was measured without them."""
    claims = b.claims()
    rows = claims[beyond_rows(claims)]
    constants = [
        n for n in b.provenance("claims")["config"]["constants"] if n.startswith("geometry_")
    ]
    if not constants or robustness.unmeasured(robustness.cells(rows)).any():
        raise Unbuilt(f"the geometry constants' robustness ({ROBUSTNESS})")
    for name in constants:
        b.path(f"claims_robustness/{name}.parquet")
    return rows


NUMBERS = {
    "robust.beyond-rows": computed(
        "the claims rows beyond the paper", lambda b: len(beyond(b)), ROBUSTNESS
    ),
    "robust.beyond-depend": computed(
        "the rows beyond the paper whose verdict depends on a constant (a robustness cell)",
        lambda b: int((robustness.cells(beyond(b)) != "").sum()),
        ROBUSTNESS,
    ),
    "robust.beyond-fragile": computed(
        "the rows beyond the paper whose verdict flips inside a constant's plausible range",
        lambda b: int((beyond(b)["fragile"] == True).sum()),  # noqa: E712 (NaN: not fragile)
        ROBUSTNESS,
    ),
}

PAGE = Page(GEOMETRY_DOC, NUMBERS)
