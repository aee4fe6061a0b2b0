# Validation, wildcard constraints, target lists and code-dependency helpers.

import re

from snakemake.utils import validate

from attnbias.codedeps import module_files
from attnbias.optimizers import OptimizerSpec

validate(config, schema="../schemas/config.schema.yaml", set_default=True)

EXPERIMENTS = config["experiments"]
STUDY = config.get("global_convergence", {})
SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"


def spec_settings(opt):
    """An optimizer's settings without its display label (a label change retrains nothing)."""
    return {k: v for k, v in opt.items() if k != "label"}


def _all_optimizers():
    """(config key, optimizer settings, trains u) for every optimizer in the config."""
    for name, experiment in EXPERIMENTS.items():
        for opt_name, opt in experiment["optimizers"].items():
            yield f"experiments.{name}.optimizers.{opt_name}", opt, experiment["train"][
                "train_u"
            ]
    for opt_name, opt in STUDY.get("optimizers", {}).items():
        yield f"global_convergence.optimizers.{opt_name}", opt, False


def _check_optimizers():
    """Build every OptimizerSpec now, so a bad combination fails before any job runs."""
    for key, opt, train_u in _all_optimizers():
        try:
            OptimizerSpec(**spec_settings(opt))
        except ValueError as err:
            raise WorkflowError(f"config key {key}: {err}") from None
        if opt.get("f_star", "opt") == "opt" and opt["rule"] == "polyak" and train_u:
            raise WorkflowError(
                f"config key {key}: f_star 'opt' needs a fixed decoder, but the "
                "experiment's train.train_u is true; set f_star: 0"
            )


_check_optimizers()


def _alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


wildcard_constraints:
    experiment=_alternatives(EXPERIMENTS),
    optimizer=_alternatives(
        {o for e in EXPERIMENTS.values() for o in e["optimizers"]}
        | set(STUDY.get("optimizers", {}))
    ),
    setting=_alternatives(STUDY.get("settings", {}) or {"none"}),
    seed=r"\d+",


def seeds(experiment):
    return range(EXPERIMENTS[experiment]["seeds"])


def figure_targets():
    return expand("results/{experiment}.pdf", experiment=EXPERIMENTS)


def all_targets():
    """Every figure, and the claims table."""
    return [*figure_targets(), "results/claims.md"]


def code(script):
    """The script and the package modules it imports: a change to any reruns the rule."""
    return [str(SCRIPTS / script), *module_files(str(SCRIPTS / script))]


def canonical(value):
    """Dicts with sorted keys, recursively: reordering a config file reruns nothing."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    return value


def _at(value, keys):
    for key in keys:
        value = value[key]
    return canonical(value)


def experiment_config(*keys):
    """Params helper: the value at `keys` in the experiment's config section."""

    def get(wildcards):
        return _at(EXPERIMENTS[wildcards.experiment], keys)

    return get


def optimizer_config(experiment, optimizer):
    return canonical(spec_settings(EXPERIMENTS[experiment]["optimizers"][optimizer]))


def optimizer_settings(wildcards):
    return optimizer_config(wildcards.experiment, wildcards.optimizer)


def optimizer_legend(wildcards):
    """Figure params: optimizer name -> (label, caption)."""
    legend = {}
    for name, opt in EXPERIMENTS[wildcards.experiment]["optimizers"].items():
        spec = OptimizerSpec(**spec_settings(opt))
        legend[name] = (opt.get("label", name), spec.caption())
    return legend


def all_seeds(pattern):
    """`pattern` for every experiment and seed, experiment by experiment in config order."""
    return [
        path
        for name in EXPERIMENTS
        for path in expand(pattern, experiment=name, seed=seeds(name))
    ]


def claims_settings(wildcards):
    """Claims params: what each experiment is, and its optimizers' settings."""
    return {
        name: {
            "figure": e["figure"],
            "seeds": e["seeds"],
            "optimizers": {o: optimizer_config(name, o) for o in e["optimizers"]},
        }
        for name, e in EXPERIMENTS.items()
    }


def run_files(pattern):
    """Input helper: `pattern` for every optimizer and seed of the experiment."""

    def get(wildcards):
        experiment = EXPERIMENTS[wildcards.experiment]
        return expand(
            pattern,
            experiment=wildcards.experiment,
            optimizer=experiment["optimizers"],
            seed=seeds(wildcards.experiment),
        )

    return get


def study_config(*keys):
    """Params helper: the value at `keys` in the global_convergence config section."""

    def get(wildcards):
        return _at(STUDY, keys)

    return get


def study_setting(wildcards):
    """Params: the data of one study setting (the common sizes and its knobs)."""
    return canonical({**STUDY["data"], **STUDY["settings"][wildcards.setting]})


def study_optimizer(wildcards):
    return canonical(spec_settings(STUDY["optimizers"][wildcards.optimizer]))


def study_runs(kind):
    """Input helper: the per-(setting, optimizer) files of the study."""
    return expand(
        f"results/global_convergence/{kind}/{{setting}}/{{optimizer}}.parquet",
        setting=STUDY.get("settings", {}),
        optimizer=STUDY.get("optimizers", {}),
    )


def study_legend(wildcards):
    return {name: opt.get("label", name) for name, opt in STUDY["optimizers"].items()}
