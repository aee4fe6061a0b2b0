"""The global-convergence study's summary (attnbias.studies.global_convergence_summary)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.studies import global_convergence_summary


def test_summary_on_a_hand_made_table():
    table = pd.DataFrame(
        {
            "setting": ["a"] * 5 + ["b"] * 3,
            "optimizer": ["gd", "gd", "ngd", "ngd", "ngd", "gd", "gd", "gd"],
            "reached": [True, False, True, True, False, False, False, False],
            "final_gap": [1e-4, 0.2, 1e-5, 3e-5, 0.5, 0.1, 0.3, np.nan],
            "outcome": ["reached", "failed", "reached", "reached", "undecided"]
            + ["undecided", "failed", "left_float64"],
        }
    )
    out = global_convergence_summary.summary(table)
    assert out[["setting", "optimizer"]].values.tolist() == [["a", "gd"], ["a", "ngd"], ["b", "gd"]]
    assert out["runs"].tolist() == [2, 3, 3]
    assert out["reached"].tolist() == [1, 2, 0]
    np.testing.assert_allclose(out["fraction_reached"], [0.5, 2 / 3, 0.0])
    np.testing.assert_allclose(out["median_final_gap"], [(1e-4 + 0.2) / 2, 3e-5, 0.2])
    # one column per outcome other than reached, zero where none ended so
    assert out["undecided"].tolist() == [0, 1, 1]
    assert out["left_float64"].tolist() == [0, 0, 1]
    assert out["failed"].tolist() == [1, 0, 1]
    assert "median_final_effective_gap" not in out
    plain = global_convergence_summary.summary(table.drop(columns="outcome"))
    assert "failed" not in plain
    pd.testing.assert_series_equal(plain["fraction_reached"], out["fraction_reached"])
    with_effective = global_convergence_summary.summary(
        table.assign(final_effective_gap=np.arange(8.0))
    )
    np.testing.assert_allclose(with_effective["median_final_effective_gap"], [0.5, 3.0, 6.0])
