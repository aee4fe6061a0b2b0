"""attnbias.quotes.robustness_points: the sources that read a robustness point of a constant
(its range, its outcome at the values tried, a margin row's words)."""

from __future__ import annotations

import pandas as pd
import pytest


def test_a_robustness_point_is_matched_at_its_own_value():
    """eps 1e-12 is not eps 1e-8 (an absolute tolerance would make them one), and a margin
    row's words read back as attnbias.claims.beyond writes them."""
    from attnbias.quotes.robustness_points import held, margin_text, measured

    class Points:
        def robustness_points(self, constant):
            return pd.DataFrame(
                {"value": [1e-12, 1e-8, 1e-6], "key": "r", "low": [0.1, 0.2, 0.3],
                 "high": [0.15, 0.25, 0.35], "outcome": ["does not hold", "holds", "holds"]}
            )  # fmt: skip

    assert measured("eps", "r", 1e-12).read(Points()).tolist() == [0.1, 0.15]
    assert held("eps", "r", "holds", 1e-8, 1e-6, only=True).read(Points())
    assert not held("eps", "r", "holds", 1e-12).read(Points())
    assert margin_text("0.6 of the optimal l3 margin at t = 300 (0.5 to 0.55 at t = 30)") == {
        "late": [0.6], "t_last": 300, "early": [0.5, 0.55], "t_before": 30
    }  # fmt: skip
    with pytest.raises(ValueError, match="no longer reads"):
        margin_text("0.6 of the optimum")


def test_a_margin_rows_words_as_the_claims_write_them_read_back():
    """The words attnbias.claims.beyond writes now (with the previous logged t after the
    decade's) read back as before."""
    from geometry_tables import NORMS, OPTIMIZERS, geometry_table

    from attnbias.claims import layouts
    from attnbias.quotes.robustness_points import fell_at_end, margin_text, moved

    final = {o: {n: 0.9 if n in ("max", "nuclear") else 0.5 for n in NORMS} for o in OPTIMIZERS}
    table = geometry_table(final, {"sign": 0.95, "kq": (0.0, 0.05, 0.3, 0.5)})
    out = layouts.claims({"geo": {"layout": "geometry", "optimizers": OPTIMIZERS}}, {"geo": table})
    text = out[(out["statement"] == "geo-kq") & (out["kind"] == "threshold")]["value_text"].item()
    assert margin_text(text) == {"late": [0.499, 0.5], "t_last": 1000, "early": [0.299, 0.3],
                                 "t_before": 100}  # fmt: skip
    assert moved(text, rising=True)
    # the last logged interval: 0.3 at t = 100 to 0.5, rising; the control, falling at the end
    assert not fell_at_end(text)
    assert fell_at_end("0.684 of the optimal max margin at t = 300 (0.6 at t = 30); 0.738 at "
                       "the previous logged t = 210")  # fmt: skip
    with pytest.raises(ValueError, match="no previous logged t"):
        fell_at_end("0.6 of the optimal l3 margin at t = 300 (0.5 to 0.55 at t = 30)")


def test_every_row_of_an_optimizer_kept_but_one():
    """kept(optimizer=, but=): every row of the optimizer but the named one has one outcome
    at every value tried; the control: without `but`, the row that flips makes it false."""
    from attnbias.quotes.robustness_points import kept

    class Points:
        def robustness_points(self, constant):
            return pd.DataFrame(
                {"value": [0.1, 0.3, 1.0] * 2, "key": ["dm spectral first"] * 3
                 + ["dm spectral margin"] * 3,
                 "outcome": ["holds"] * 3 + ["holds", "holds", "does not hold"]}
            )  # fmt: skip

    assert kept("lr", optimizer="spectral", but="dm spectral margin").read(Points())
    assert not kept("lr", optimizer="spectral").read(Points())
