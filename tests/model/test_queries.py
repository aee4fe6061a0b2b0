"""attnbias.model.queries: the query of each sample, cross-attention's Z or the first token,
and the refusal of a Z of the wrong shape."""

from __future__ import annotations

import numpy as np
import pytest
from cross_attention import cross_instance, without_queries

from attnbias.model.queries import (
    check_queries,
    queries_defect,
    queries_of,
    query_rows,
    stacked_queries,
)


def test_the_queries_are_z_where_given_and_the_first_tokens_otherwise():
    data = cross_instance(0)
    np.testing.assert_array_equal(queries_of(data), data["Z"])
    plain = without_queries(data)
    np.testing.assert_array_equal(queries_of(plain), data["X"][:, 0, :])
    assert not np.array_equal(queries_of(data), queries_of(plain))  # the control: Z is read
    # the first tokens are views of X, as before Z existed (no copy, the same bytes)
    assert np.shares_memory(query_rows(data["X"]), data["X"])


def test_a_batch_stacks_its_queries_only_where_some_dataset_has_z():
    a, b = cross_instance(0), cross_instance(1)
    assert stacked_queries([without_queries(a), without_queries(b)]) is None
    both = stacked_queries([a, without_queries(b)])
    assert both.shape == (2, 6, 10) and both.dtype == np.float64
    np.testing.assert_array_equal(both[0], a["Z"])
    np.testing.assert_array_equal(both[1], b["X"][:, 0, :])  # its first tokens


@pytest.mark.parametrize("shape", [(6, 9), (5, 10), (10,), (1, 6, 10)])
def test_a_z_of_the_wrong_shape_is_refused_naming_the_key_and_shapes(shape):
    data = {**cross_instance(0), "Z": np.ones(shape)}
    defect = queries_defect(data["X"], data["Z"])
    assert "'Z'" in defect and str(shape) in defect and "(6, 10)" in defect
    with pytest.raises(ValueError, match=r"dataset seed 0: its queries 'Z' have shape"):
        check_queries(data, "dataset seed 0")
    with pytest.raises(ValueError, match="'Z'"):
        stacked_queries([data])


def test_a_non_finite_z_is_refused_and_a_right_one_passes():
    data = cross_instance(0)
    assert queries_defect(data["X"], data["Z"]) is None
    check_queries(data, "here")  # passes
    check_queries(without_queries(data), "here")  # nothing to check
    data["Z"][2, 3] = np.nan
    assert "non-finite" in queries_defect(data["X"], data["Z"])
