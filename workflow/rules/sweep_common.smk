# Config and params helpers of the fig3 sweep (workflow/rules/sweep.smk), apart from its
# rules; they use common.smk's helpers (spec_settings, canonical, _at, OptimizerSpec).

from attnbias import sweep as fig3_sweep_grid

SWEEP = config.get("fig3_sweep", {})
SWEEP_POINTS = fig3_sweep_grid.points(SWEEP) if SWEEP else {}


def _check_sweep_optimizers():
    """The NGDs take their lr from fig3_sweep.lr; every optimizer builds an OptimizerSpec."""
    for name, opt in SWEEP.get("optimizers", {}).items():
        key = f"fig3_sweep.optimizers.{name}"
        settings = spec_settings(opt)
        if settings["rule"] == "ngd" and "lr" in settings:
            raise WorkflowError(
                f"config key {key}: an ngd optimizer of the sweep takes its lr from "
                "fig3_sweep.lr; remove its lr"
            )
        try:
            for lr in SWEEP["lr"] if settings["rule"] == "ngd" else [None]:
                OptimizerSpec(**settings, **({} if lr is None else {"lr": lr}))
        except ValueError as err:
            raise WorkflowError(f"config key {key}: {err}") from None


_check_sweep_optimizers()


def sweep_config(*keys):
    """Params helper: the value at `keys` in the fig3_sweep config section."""

    def get(wildcards):
        return _at(SWEEP, keys)

    return get


def sweep_point(wildcards):
    return canonical(SWEEP_POINTS[wildcards.sweep_point])


def sweep_optimizers(wildcards):
    """The optimizers' settings without labels, in config order (the table's order)."""
    return {
        name: canonical(spec_settings(opt)) for name, opt in SWEEP["optimizers"].items()
    }


def sweep_legend(wildcards):
    """Figure params: optimizer -> (label, caption); the NGDs' lr is the sweep's."""
    legend = {}
    for name, opt in SWEEP["optimizers"].items():
        settings = spec_settings(opt)
        if settings["rule"] == "ngd":
            caption = (
                OptimizerSpec(**settings, lr=1.0)
                .caption()
                .replace("lr=1", "lr=the setting's lr")
            )
            if settings.get("normalize", "global") == "global":
                caption += " (one norm over W, u)"
        else:
            caption = OptimizerSpec(**settings).caption()
        legend[name] = (opt.get("label", name), caption)
    return legend


def sweep_jobs(wildcards):
    return {"sweep_point": list(SWEEP_POINTS)}


def sweep_figure_config(wildcards):
    """The figure's provenance: the sweep's section and the settings that reach training."""
    return canonical(
        {"fig3_sweep": SWEEP, "device": config["device"], "dtype": config["dtype"]}
    )
