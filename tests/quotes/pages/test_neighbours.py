"""docs/neighbours.md's registry (attnbias.quotes.pages.neighbours) read on hand-made
neighbours' tables: the numbers their jobs write, the claims rows' outcomes; a table not
built is "not built", naming its target."""

from __future__ import annotations

import json

import numpy as np
import pytest
from neighbour_tables import tables

from attnbias.claims import write
from attnbias.claims.neighbours import measure
from attnbias.quotes.build import Build, Unbuilt
from attnbias.quotes.pages.neighbours import FACTS, PAGE


def _build(tmp_path) -> Build:
    t = tables()
    (tmp_path / "attentionmd_joint.json").write_text(
        json.dumps(
            {"final_cos": {"ours_W": 0.999995, "ours_v": 0.9, "theirs_W": 0.99619, "theirs_v": 0.5}}
        )  # fmt: skip
    )
    t["tfsvm_local"].to_csv(tmp_path / "tfsvm_local_final.csv", index=False)
    write.to_csv(measure(t)).to_csv(tmp_path / "claims_neighbours.csv", index=False)
    return Build(tmp_path)


def test_the_numbers_read_the_tables(tmp_path):
    build = _build(tmp_path)
    assert PAGE.numbers["joint.ours.W"].read(build) == pytest.approx(0.999995)
    assert PAGE.numbers["joint.theirs.v"].read(build) == pytest.approx(0.5)
    np.testing.assert_allclose(PAGE.numbers["tf.range.W.fro"].read(build), [0.998, 0.998])
    assert PAGE.numbers["tf.notlocal.W"].read(build) == 0


def test_the_facts_read_the_claims_rows(tmp_path):
    build = _build(tmp_path)
    assert FACTS["claims.tfsvm-fig-local"].read(build) is True
    assert FACTS["claims.amd-defect-eps"].read(build) is False  # the fixture's step converges


def test_a_table_not_built_names_its_target(tmp_path):
    build = _build(tmp_path)
    source = PAGE.numbers["rank.infeasible"]
    assert source.target == "results/tfsvm_rank.pdf"
    with pytest.raises(Unbuilt):
        source.read(build)
