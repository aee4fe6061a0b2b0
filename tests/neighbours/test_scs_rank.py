"""What TF-as-SVM's svm_rank would report (attnbias.neighbours.scs_rank): cvxpy's SCS at
its default settings on the nuclear W-SVM, its rank at their absolute 1e-7, beside the
exact rank; an infeasible instance has no SCS answer and no exact rank."""

import numpy as np

from attnbias.neighbours import scs_rank


def test_their_absolute_threshold_counts_a_solvers_residual_as_rank():
    S = np.diag([1.0, 0.5, 1e-6, 1e-8])
    assert scs_rank.their_rank(S) == 3  # theirs: the 1e-6 residual is a rank
    assert scs_rank.their_rank(np.diag([1.0, 0.5, 1e-9, 0.0])) == 2  # control
    assert scs_rank.their_rank(None) == 1  # cvxpy's W.value on an infeasible instance


def test_scs_answer_beside_the_exact_one():
    row = scs_rank.instance_row(0, {"n": 6, "T": 8, "d": 10})
    assert row["scs_status"] == "optimal" and not row["infeasible"]
    # SCS meets the constraints to its tolerance only, and reads a rank at least the exact
    assert 0.999 < row["scs_min_margin"] < 1 + 1e-3
    assert row["scs_rank"] >= row["exact_rank"] >= 1


def test_an_infeasible_instance_has_no_rank():
    row = scs_rank.instance_row(0, {"n": 6, "T": 8, "d": 1})
    assert row["infeasible"] and row["scs_status"] == "infeasible"
    assert row["scs_rank"] == 1  # what svm_rank.ipynb records for it
    assert np.isnan(row["scs_min_margin"]) and np.isnan(row["exact_rank"])


def test_one_row_per_instance_per_cell():
    table = scs_rank.table({"seeds": 2, "n": [3, 3], "T": [4, 4], "d": [5, 1]})
    assert len(table) == 4 and sorted(set(table["d"])) == [1, 5]
