"""The global-convergence study's caption (attnbias.figures.study_figure): how the runs that
did not reach ended, counted per optimizer."""

from __future__ import annotations

import pandas as pd

from attnbias.claims.global_convergence import OUTCOME_WORDS
from attnbias.figures import study_figure


def test_the_caption_counts_each_outcome_per_optimizer():
    runs = pd.DataFrame(
        {
            "label": ["GD", "GD", "GD", "PS", "PS"],
            "outcome": ["undecided", "undecided", "slower", "left_float64", "reached"],
        }
    )
    text = study_figure._outcomes(runs, OUTCOME_WORDS)
    assert (
        "GD: 2 still falling at least like 1/ln t, 1 still falling, more slowly than "
        "1/ln t; PS: 1 left float64's range;" in text
    )
    assert "reached" not in text.split(";")[0]  # reached runs are not counted as missed
    # the control: every run reached
    assert study_figure._outcomes(runs.assign(outcome="reached"), OUTCOME_WORDS) == (
        "Every run reached."
    )
