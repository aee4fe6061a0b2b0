"""AttentionMD's joint run (attnbias.neighbours.joint_run): ours and theirs restated agree
while their 2.2e-16 is negligible, then theirs stalls and ours goes on."""

from __future__ import annotations

import numpy as np

from attnbias.neighbours import joint_run


def test_log_iterations_start_at_0_and_end_at_the_last_epoch():
    logged = joint_run.log_iterations(2000, 50)
    assert logged[0] == 0 and logged[-1] == 2000 and np.all(np.diff(logged) > 0)


def test_svm_norm_names():
    assert joint_run.svm_norm(2) == "fro" and joint_run.svm_norm(1.75) == "l1.75"


def test_ours_and_theirs_agree_early_then_theirs_stalls():
    curves, summary = joint_run.run({"p": 2, "lr": 0.1, "epochs": 300, "log_points": 30})
    assert summary["tokens"] == summary["their_tokens"] == [1, 0]
    wide = curves.pivot_table(index=["iteration", "block"], columns="run", values="cos")
    early = wide[wide.index.get_level_values("iteration") <= 20].dropna()
    np.testing.assert_allclose(early["ours"], early["theirs"], rtol=0, atol=1e-10)
    final = summary["final_cos"]
    assert 0.0038 < 1 - final["theirs_W"] < 0.0039  # their stall: cos 0.99619
    assert 1 - final["ours_W"] < (1 - final["theirs_W"]) / 10  # the control: ours goes on
