"""attnbias.workflow.config: the plain logic behind the rules' params."""

from __future__ import annotations

from tiny_configs import workflow_config

# ---- attnbias.workflow.config: the plain logic behind the rules' params -----------------


def test_one_accessor_serves_synthetic_and_real_experiments():
    wf = workflow_config()
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

    plain, changed = workflow_config(), workflow_config(relabel_and_reorder)
    for args in [("run", "fig2", 0, "ngd"), ("metrics", "fig2"), ("run", "fig1", 0, "sgd")]:
        assert plain.identity(*args) == changed.identity(*args)
    assert plain.legend("fig2") != changed.legend("fig2")
    lr = workflow_config(lambda c: c["experiments"]["fig2"]["optimizers"]["ngd"].update(lr=0.2))
    assert lr.identity("run", "fig2", 0, "ngd") != plain.identity("run", "fig2", 0, "ngd")
    assert lr.identity("run", "fig2", 0, "gd") == plain.identity("run", "fig2", 0, "gd")


def test_an_identity_asked_again_is_the_one_computed_first_and_a_copy():
    """Identities are kept once computed (the rules ask for each many times): the same
    values as computing afresh, and a caller that changes its copy changes no other."""
    wf = workflow_config()
    asked = [("run", "fig2", 1, "ngd"), ("data", "fig3", "0"), ("metrics", "fig2"),
             ("svm", "fig3", 1), ("run", "fig1", 0, "sgd"), ("metrics", "fig1")]  # fmt: skip
    first = [wf.identity(*args) for args in asked]
    fresh = workflow_config()._identity  # the uncached computation, on another instance
    for args, ident in zip(asked, first, strict=True):
        padded = (*args, None, None)[:4]
        optimizer = padded[3] if padded[0] == "run" else None
        assert ident == fresh(padded[0], padded[1], padded[2], optimizer)
        ident["config_sha256"] = "changed by a caller"
        assert wf.identity(*args)["config_sha256"] != "changed by a caller"
