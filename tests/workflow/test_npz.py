"""npz files (attnbias.workflow.npz)."""

from __future__ import annotations

from stored_files import claiming_shape, write_data

from attnbias.workflow import npz


def test_an_npz_header_rewritten_to_its_own_shape_still_reads(tmp_path):
    """The negative control of tests/workflow/test_store.py::test_an_npz_header_claiming_more_
    than_its_member_holds_is_refused: the same rewrite, claiming what is there."""
    path = tmp_path / "fig2.npz"
    write_data(path)
    claiming_shape(path, "seed1/X.npy", (4, 3, 5))
    assert npz.load_data(path)[1]["X"].shape == (4, 3, 5)
