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
