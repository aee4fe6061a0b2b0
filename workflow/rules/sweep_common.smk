# Config and params helpers of the fig3 sweep (workflow/rules/sweep.smk), apart from its
# rules (attnbias.configcheck.check_sweep checks its optimizers).

from attnbias import sweep as fig3_sweep_grid
from attnbias.spec import OptimizerSpec
from attnbias.workflow_config import spec_settings

SWEEP = config.get("fig3_sweep", {})
SWEEP_POINTS = fig3_sweep_grid.points(SWEEP) if SWEEP else {}


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
