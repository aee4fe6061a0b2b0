"""A sweep's grid (attnbias.studies.sweep_grid): its points, their names and experiments."""

from __future__ import annotations

import pytest
from tiny_sweep import GRID, tiny

from attnbias.studies import sweep_grid

# ---- the grid ---------------------------------------------------------------------------


def test_points_are_the_product_with_zip_as_one_axis_and_readable_names():
    points = sweep_grid.points(GRID)
    assert list(points) == ["d~8_lr~0.1", "d~8_lr~0.3", "d~12_lr~0.1", "d~12_lr~0.3"]
    assert points["d~12_lr~0.3"] == {
        "train.iterations": 100,
        "data.params.d": 12,
        "optimizers.ngd.lr": 0.3,
        "optimizers.joint-ngd.lr": 0.3,
    }


def test_labels_grow_until_they_tell_keys_apart():
    grid = {"optimizers.gd.lr": [1.0, 2.0], "optimizers.ngd.lr": [0.1, 1e10]}
    assert list(sweep_grid.points(grid))[-1] == "gd.lr~2_ngd.lr~1e+10"


def test_two_values_with_one_name_are_refused():
    with pytest.raises(sweep_grid.GridError, match="two points have the name"):
        sweep_grid.points({"optimizers.ngd.lr": [0.1, 0.1000000001]})


def test_a_point_is_the_base_with_its_values_without_texts():
    base = tiny()["experiments"]["fig3"]
    values = sweep_grid.points(GRID)["d~12_lr~0.3"]
    point = sweep_grid.point_experiment({"seeds": 1}, base, values)
    assert point["data"]["params"]["d"] == 12 and point["optimizers"]["ngd"]["lr"] == 0.3
    assert point["seeds"] == 1 and "title" not in point
    assert all("label" not in opt for opt in point["optimizers"].values())
    assert base["data"]["params"]["d"] == 12 and base["optimizers"]["ngd"]["lr"] == 0.1


# ---- claims -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["d~12_label~" + "ab" * 20, "x" + "ab" * 19, "lr~1e-" + "0" * 19, "n~" + "1" * 25, "d~12"],
)
def test_the_periodic_name_check_is_snakemakes(name):
    from snakemake.io import PeriodicityDetector

    assert bool(sweep_grid.PERIODIC.search(name)) == bool(PeriodicityDetector().is_periodic(name))


def test_a_sweep_trains_the_optimizers_it_names_in_its_order():
    base = {"optimizers": {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd"}, "ps": {"rule": "polyak"}}}
    point = sweep_grid.point_experiment({"optimizers": ["ps", "gd"]}, base, {})
    assert list(point["optimizers"]) == ["ps", "gd"]
    assert list(sweep_grid.point_experiment({}, base, {})["optimizers"]) == ["gd", "ngd", "ps"]


def test_an_optimizers_setting_is_titled_by_whose_it_is():
    """The figure's axis and caption said `lr` for fig3's zip of the two NGDs' lr; point
    names keep their short labels (file names of built points)."""
    assert sweep_grid.labels(GRID)[-1] == "lr"
    assert sweep_grid.titles(GRID)[-1] == "lr of ngd and joint-ngd"
    assert sweep_grid.titles({"optimizers.ngd.lr": [0.1, 0.3]}) == ["lr of ngd"]
    both = {"optimizers.gd.lr": [1.0, 2.0], "optimizers.ngd.lr": [0.1, 0.3]}
    assert sweep_grid.titles(both) == ["lr of gd", "lr of ngd"]
    three = {"zip": {f"optimizers.{o}.lr": [0.1, 0.3] for o in ("a", "b", "c")}}
    assert sweep_grid.titles(three) == ["lr of a, b and c"]
    assert sweep_grid.titles({"data.params.d": [8, 16]}) == ["d"]  # the control: no owner
