"""The whole claims table (attnbias.claims.layouts): one hypotheses verdict per run and the
figure and labels a table cites.
"""

from __future__ import annotations

from claims_tables import (
    EQ10,
    GOOD,
    JOINT_GOOD,
    fixed_table,
    gd_like,
    joint_curves,
    long_table,
    ngd_like,
    row,
    rows_of,
)

from attnbias.claims import layouts
from attnbias.claims.statements import by_key


def test_results_proved_together_share_one_hypotheses_verdict_per_run():
    """Thm. 2 to 4 and Lem. 11 rest on one proof: on data where Lem. 11's support-vector
    condition fails, every Sec. 4 row is outside (not only Lem. 11 (iii)); on data where it
    holds (the control), every one is inside. Fig. 3's remarks are about its run: no proof's
    hypotheses apply to them."""
    curves = {(o, m): f for o in ("gd", "eq10") for m, f in joint_curves().items()}
    optimizers = {"gd": {"rule": "gd"}, "eq10": EQ10}
    few = dict(JOINT_GOOD, cond1_sv_fraction=0.6, cond1_sv_holds=False, cond1_u_margin_max=1.3)
    for summary, inside in ((few, False), (JOINT_GOOD, True)):
        margins = {"eq10": [1.0, 1.0], "gd": [0.9, 0.9]}
        rows = rows_of(long_table(curves), optimizers, summary=summary, kind="joint",
                       figure="Fig. 3", u_margins={"x": margins})  # fmt: skip
        sec4 = [r for r in rows if by_key(r.statement).section == "Sec. 4"]
        assert len({r.statement for r in sec4}) >= 7
        assert {r.in_hypotheses for r in sec4} == {inside}
        assert len({r.hypotheses for r in sec4}) == 1
        remarks = [r for r in rows if r.statement.startswith("fig3-")]
        assert remarks and all(r.in_hypotheses and not r.hypotheses for r in remarks)
    assert "60% of samples" in row(rows_of(long_table(curves), optimizers, summary=few,
                                           kind="joint"), "eq10 loss ratio").hypotheses  # fmt: skip


def test_a_table_cites_the_configured_figure_and_the_legends_labels():
    table = fixed_table(gd=gd_like(), ngd=ngd_like())
    optimizers = {"gd": {"rule": "gd", "lr": 1.0}, "ngd": {"rule": "ngd", "lr": 0.1}}
    experiment = {"layout": "fixed_decoder", "optimizers": optimizers, "seeds": 2,
                  "labels": {"gd": "plain GD", "ngd": "normalized GD"}}  # fmt: skip

    def table_of(**extra):
        out = layouts.claims({"fig2": {**experiment, **extra}}, {"fig2": table},
                            {"fig2": [2.0, 2.0]}, {"fig2": 3}, {"fig2": GOOD})  # fmt: skip
        return out.set_index("key")

    cited = table_of(paper_figure="Fig. 2")
    ahead = cited.loc["fig2 ahead of gd ngd"]
    assert ahead["source"] == "Sec. 3.2, Fig. 2"
    assert ahead["claim"].startswith("normalized GD: ")
    assert "normalized GD's and plain GD's" in ahead["quantity"]
    assert "normalized GD" in ahead["value_text"] and "plain GD" in ahead["value_text"]
    measured = cited[cited["kind"] != "not measured"]
    assert not measured["claim"].str.contains(r"\bngd\b").any()  # no config name is shown
    uncited = table_of()  # a name like fig2 makes no experiment Fig. 2's: no remark rows
    assert "fig2 ahead of gd ngd" not in uncited.index


def test_a_statement_about_the_data_reads_bit_identical_data_once():
    """fig2 and fig2_uncapped share their data and W-SVM bit for bit: footnote 4 and Lem. 6
    give their rows once, on the first experiment, which names the other. The identity is
    the arrays' checksum (ExperimentInputs.data_identity); the control, data that differ in
    one entry, gives rows on each."""
    import numpy as np

    from attnbias.claims.inputs import ExperimentInputs

    def inputs(x00: float) -> ExperimentInputs:
        X = np.ones((2, 3, 4))
        X[0, 0, 0] = x00
        data = {0: {"X": X, "y": np.ones(2), "opt": np.zeros(2, dtype=int)}}
        return ExperimentInputs(None, data, {0: {"W_mm": np.eye(4)}}, [], None)

    same, other = inputs(1.0).data_identity, inputs(1.0 + 2**-40).data_identity
    assert same == inputs(1.0).data_identity and same != other
    table = fixed_table(gd=gd_like(), ngd=ngd_like())
    optimizers = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}
    experiment = {"layout": "fixed_decoder", "optimizers": optimizers, "data": "Example 1"}
    feasible = {"n": [2], "T": [3], "d": [4], "min_constraint": [1.0]}

    def data_rows(second_id):
        names = ("a", "b")
        out = layouts.claims({n: experiment for n in names}, {n: table for n in names},
                             {n: [2.0] for n in names}, {n: 3 for n in names},
                             {n: GOOD for n in names}, None, {n: feasible for n in names},
                             {"a": same, "b": second_id})  # fmt: skip
        return out[out["statement"].isin(["footnote4", "lem6"])]

    once = data_rows(same)
    assert len(once) == 2 and (once["experiment"] == "a (= b: bit-identical data and W-SVM)").all()
    twice = data_rows(other)
    assert len(twice) == 4 and sorted(set(twice["experiment"])) == ["a", "b"]
    # a statement about the runs still reads both experiments' (different) runs
    tables = {"a": table, "b": fixed_table(gd=gd_like(), ngd=ngd_like(-1.2))}
    runs = layouts.claims({n: experiment for n in "ab"}, tables,
                          {n: [2.0] for n in "ab"}, {n: 3 for n in "ab"},
                          {n: GOOD for n in "ab"}, None, None, {"a": same, "b": same})  # fmt: skip
    lem3 = runs.loc[runs["statement"] == "lem3", "experiment"]
    assert {"a", "b"} <= {e.split(" ")[0] for e in lem3}
