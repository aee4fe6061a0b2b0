"""The seeds of the rows beyond the paper in words (attnbias.claims.beyond_seeds): the tuning
seed and the reported ones, and the refusal of a tuning seed that is reported."""

import pytest
from geometry_tables import NORMS, OPTIMIZERS, geometry_table

from attnbias.claims import layouts, write
from attnbias.claims.beyond_seeds import seeds_sentence


def test_the_section_names_the_tuning_seed_and_the_reported_seeds():
    final = {o: {n: 0.9 if n == "max" else 0.5 for n in NORMS} for o in OPTIMIZERS}
    table = geometry_table(final, {"sign": 0.95, "kq": 0.95}, seeds=(1, 2, 3))
    experiments = {
        "geo": {"layout": "geometry", "tuning_seed": 0, "data": "Example 1"},
        "dm": {"layout": "geometry", "tuning_seed": None, "data": "data model DM"},
    }
    said = seeds_sentence(experiments, {"geo": table, "dm": table})
    assert said == (
        "Seeds: the step lengths (the constants of ours) were chosen on the tuning seed, seed "
        "0 of geo (Example 1), which is never reported. The rows report geo's seeds 1 to 3 and "
        "dm's seeds 1 to 3, which chose nothing."
    )
    rows = layouts.claims({"geo": {"layout": "geometry", "optimizers": OPTIMIZERS}},
                          {"geo": table})  # fmt: skip
    assert said in write.to_markdown(rows, seeds=said)
    # controls: a tuning seed among the reported ones is refused; none named says so
    with pytest.raises(ValueError, match="tuning_seed 1 chose constants"):
        seeds_sentence({"geo": dict(experiments["geo"], tuning_seed=1)}, {"geo": table})
    untuned = seeds_sentence({"dm": experiments["dm"]}, {"dm": table})
    assert "names no tuning seed" in untuned and "chose nothing" not in untuned
    assert seeds_sentence(experiments, {}) == ""  # no geometry table built
