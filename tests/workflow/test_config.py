"""attnbias.workflow.config: the plain logic behind the rules' params."""

from __future__ import annotations

import yaml
from project import REPO

# ---- attnbias.workflow.config: the plain logic behind the rules' params -----------------


def _workflow_config(change=None):
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig

    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    if change:
        change(config)
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return WorkflowConfig(config)


def test_one_accessor_serves_synthetic_and_real_experiments():
    wf = _workflow_config()
    assert wf.jobs("fig2") == {"optimizer": ["gd", "ngd", "ps", "ngd-mom"], "seed": [0, 1]}
    assert wf.jobs("fig4") == {"optimizer": ["sgd", "sps"], "seed": [0]}
    assert wf.title("fig1") == "tiny BERT on fixture MNLI"
    assert wf.legend("fig2")["ngd"] == ("NGD", "NGD lr=0.1")
    assert wf.legend("fig4")["sps"] == ("SPS", "SPS c=0.5, eta_max=0.5")
    for name in ("fig2", "fig1"):  # an aggregate table's identity: its runs'
        pattern = "x/{experiment}/{optimizer}/{seed}"
        runs = wf.run_identities(pattern, name)
        assert len(runs) == len(wf.jobs(name)["optimizer"]) * len(wf.jobs(name)["seed"])
        assert (
            wf.identity("metrics", name)["config_sha256"]
            != wf.identity("metrics", "fig3")["config_sha256"]
        )
    # the data and SVM files serve every optimizer; a run's seed is a number
    assert wf.identity("data", "fig2", "0", "ngd") == wf.identity("data", "fig2", 0)
    assert wf.identity("run", "fig2", "1", "ngd")["seed"] == 1


def test_identities_ignore_labels_and_key_order():
    def relabel_and_reorder(config):
        fig2 = config["experiments"]["fig2"]
        fig2["optimizers"]["ngd"] = dict(reversed(fig2["optimizers"]["ngd"].items()))
        fig2["optimizers"]["ngd"]["label"] = "another label"
        fig1 = config["real_data"]["experiments"]["fig1"]
        fig1["optimizers"]["sgd"]["label"] = "another label"

    plain, changed = _workflow_config(), _workflow_config(relabel_and_reorder)
    for args in [("run", "fig2", 0, "ngd"), ("metrics", "fig2"), ("run", "fig1", 0, "sgd")]:
        assert plain.identity(*args) == changed.identity(*args)
    assert plain.legend("fig2") != changed.legend("fig2")
    lr = _workflow_config(lambda c: c["experiments"]["fig2"]["optimizers"]["ngd"].update(lr=0.2))
    assert lr.identity("run", "fig2", 0, "ngd") != plain.identity("run", "fig2", 0, "ngd")
    assert lr.identity("run", "fig2", 0, "gd") == plain.identity("run", "fig2", 0, "gd")
