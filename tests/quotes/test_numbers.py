"""A quoted number written at its precision (attnbias.quotes.numbers)."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.quotes.numbers import render


@pytest.mark.parametrize(
    ("phrase", "built", "written"),
    [
        ("467 to 1,188", [375, 1241, 900], "375 to 1,241"),  # the stale crossing
        ("1e-5 to 3e-5", [9.99e-6, 2.63e-5], "1e-5 to 3e-5"),  # rounds to the quoted digits
        ("1.0e-5 to 2.6e-5", [9.99e-6, 2.64e-5], "1.0e-5 to 2.6e-5"),
        ("−0.18 to −0.41", [-0.407, -0.176], "−0.18 to −0.41"),  # the phrase's order
        ("0.51", [0.5054, 0.5096], "0.51"),  # one number where every seed writes it
        ("0.506", [0.5054, 0.5096], "0.505 to 0.510"),  # else the range
        ("100 to 131", [100, 117, 131], "100 to 131"),  # an integer is exact
        ("10¹¹⁹ to 10¹³⁵", [10**119.3, 10**134.4], "10¹¹⁹ to 10¹³⁴"),
        ("10^11.5", [10**11.46], "10^11.5"),
        ("40% to 75%", [0.4, 0.75], "40% to 75%"),
        ("−10⁴", [-10000.8], "−10⁴"),
        ("11 to\n  37", [11.516, 37.29], "12 to\n  37"),  # a range broken across lines
        ("2e-3", [np.nan], None),  # the build has no value
    ],
)
def test_a_number_is_written_at_its_quoted_precision(phrase, built, written):
    assert render(phrase, built) == written


def test_a_round_number_is_rounded_only_where_the_words_say_so():
    assert render("1,300", [1292]) == "1,292"
    assert render("1,300", [1292], approximate=True) == "1,300"
    assert render("1,100", [1072, 1177], approximate=True) == "1,100 to 1,200"
