"""attnbias.workflow.job: the command line that common.smk's job_shell writes, read back."""

import pytest

from attnbias.workflow import job


def _argv(*files):
    return [job.encode({"experiment": "fig2"}, {"seeds": [0, 1]}), "1", "r/log", *files]


def test_single_files_by_name_and_position():
    got = job.load(_argv("input.data=r/d.npz", "output.0=r/sweep/lr=0.1.npz"))
    assert got.input.data == "r/d.npz" and got.input == ["r/d.npz"]
    assert got.output == ["r/sweep/lr=0.1.npz"]  # a "=" after the path's "/" is the path's
    assert got.params.seeds == [0, 1] and got.wildcards.experiment == "fig2"


def test_lists_of_files_one_per_seed():
    got = job.load(
        _argv(
            "input.data[]", "r/d0.npz", "r/d1.npz",
            "input.svm=r/s.npz",
            "output.metrics[]", "r/m0.parquet",
            "output.final[]", "r/f0.npz", "r/f1.npz",
        )
    )  # fmt: skip
    assert got.input.data == ["r/d0.npz", "r/d1.npz"] and got.input.svm == "r/s.npz"
    assert got.input == ["r/d0.npz", "r/d1.npz", "r/s.npz"]
    assert got.output.metrics == ["r/m0.parquet"]  # a list, even of one path
    assert got.output.final == ["r/f0.npz", "r/f1.npz"]
    assert got.output == ["r/m0.parquet", "r/f0.npz", "r/f1.npz"]


def test_a_path_outside_any_list_is_refused():
    with pytest.raises(SystemExit, match="r/stray.npz"):
        job.load(_argv("input.data=r/d.npz", "r/stray.npz"))
