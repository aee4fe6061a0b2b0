"""attnbias.svm.check: a stored W_mm checked against its data, the queries Z included."""

from __future__ import annotations

from cross_attention import cross_instance, without_queries

from attnbias.svm import check, max_margin


def test_a_cross_attention_w_mm_passes_against_its_queries_only():
    """The W-SVM of a dataset with queries Z has smallest margin 1 over (x_opt - x_t)^T W z_i
    and passes its check; against the same tokens read as self-attention it fails (the
    control: the check reads Z)."""
    data = cross_instance(0)
    solution = max_margin.solve_for_dataset(data, False, "cross")["W_mm"]
    low = check.smallest_margin(data["X"], data["opt"], solution.W, data["Z"])
    assert abs(low - 1.0) < 1e-9
    assert check.w_mm_defect(solution.W, data, solution.kkt_residual) is None
    defect = check.w_mm_defect(solution.W, without_queries(data), solution.kkt_residual)
    assert defect.startswith("W_mm is not the max-margin solution of its data")
