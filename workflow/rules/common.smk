# Validation, wildcard constraints, target lists and code-dependency helpers.

import os
import re
import shlex
import sys

import yaml

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate

from attnbias import configcheck
from attnbias import io as files
from attnbias import job
from attnbias.codedeps import module_files
from attnbias.data import source_note
from attnbias.spec import OptimizerSpec

# NaN and inf, whole floats where integers belong, reserved names, ignored optimizer
# settings, sizes and texts: refused here, naming the key, before any job runs. Then the
# schema once more through Snakemake, which fills in the defaults.
try:
    configcheck.check(
        config,
        yaml.safe_load(
            (Path(workflow.basedir) / "workflow/schemas/config.schema.yaml").read_text()
        ),
    )
except configcheck.ConfigError as err:
    raise WorkflowError(str(err)) from None
validate(config, schema="../schemas/config.schema.yaml", set_default=True)

# Report captions are docutils' reStructuredText: their config texts are escaped (see
# workflow/report/*.rst), and this file turns docutils' `raw` and `include` directives off,
# so no caption can carry markup or a local file into the report.
os.environ.update(
    DOCUTILSCONFIG=str(Path(workflow.basedir) / "workflow/report/docutils.conf")
)

EXPERIMENTS = config["experiments"]
# the experiments of `rule all` and of the claims table (the others are extra targets)
DEFAULT_EXPERIMENTS = {n: e for n, e in EXPERIMENTS.items() if e["default_build"]}
STUDY = config.get("global_convergence", {})
REAL = config["real_data"]
REAL_EXPERIMENTS = REAL["experiments"]
SIMILARITY_FIGURE = "fig10"  # the token-similarity figure of the real-data part
SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"

# Only for `--sdm conda`, where Snakemake creates the envs: every env in envs/ installs this
# project with `pip install --editable ${ATTNBIAS_ROOT}` (conda runs pip beside Snakemake's
# copy of the env file, so a relative path cannot name the project), and takes every
# dependency from conda-forge, none from PyPI (PIP_NO_DEPS). Without conda, no job's
# environment is touched. See envs/README.md.
if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    os.environ.update(ATTNBIAS_ROOT=workflow.basedir, PIP_NO_DEPS="1")


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
        {
            o
            for e in [*EXPERIMENTS.values(), *REAL_EXPERIMENTS.values()]
            for o in e["optimizers"]
        }
        | set(STUDY.get("optimizers", {}))
    ),
    figure=_alternatives({*REAL_EXPERIMENTS, SIMILARITY_FIGURE}),
    dataset="mnli|civilcomments",
    setting=_alternatives(STUDY.get("settings", {}) or {"none"}),
    seed=r"\d+",


def seeds(experiment):
    return range(EXPERIMENTS[experiment]["seeds"])


def figure_targets():
    return expand("results/{experiment}.pdf", experiment=DEFAULT_EXPERIMENTS)


def all_targets():
    """Every figure, and the claims table."""
    return [*figure_targets(), "results/claims.md"]


def code(script):
    """The script and the package modules it imports: a change to any reruns the rule."""
    return [str(SCRIPTS / script), *module_files(str(SCRIPTS / script))]


# The hot rules (data, svm, train: one job per seed) run their script with `shell:`, which
# skips Snakemake's per-job script machinery (~0.3 s of CPU per job; README, "Speed"). The
# script reads the job from the JSON that job_params writes (attnbias.job). Without conda the
# interpreter is Snakemake's own; with --sdm conda, the env's `python`.
PYTHON = (
    "python"
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
    else sys.executable
)


def job_params(**params):
    """Params `job`: the wildcards and `params` (values, or functions of the wildcards), as
    JSON for attnbias.job.load. Of the wildcards only, so a change reruns the job."""

    def get(wildcards):
        values = {k: v(wildcards) if callable(v) else v for k, v in params.items()}
        return job.encode(wildcards, values)

    return get


def job_shell(script, input=(), output=None):
    """The shell command that runs `script` on a job read with attnbias.job.load. `input` and
    `output` name the files it passes; output=None: the one unnamed output file."""

    def files(kind, names):
        return " ".join(f"{kind}.{n}={{{kind}.{n}:q}}" for n in names)

    command = [shlex.quote(PYTHON), shlex.quote(str(SCRIPTS / script))]
    command += ["{params.job:q} {threads} {log:q}", files("input", input)]
    command.append(files("output", output) if output else "output.0={output:q}")
    return " ".join(command)


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


def figure_title(wildcards):
    """The experiment's title, and for real data (fig9's digits) which data it used."""
    e = EXPERIMENTS[wildcards.experiment]
    title = e["title"] or wildcards.experiment
    note = source_note(e["data"]["model"], e["data"]["params"])
    return f"{title}\n({note})" if note else title


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


# ---- file identities: what each intermediate file is (attnbias.io.identity) -----------
# A job stores its output's identity; a job reading a file gets the identity that the file
# must hold (from its own wildcards and the config) and refuses any other.


def _data_section(experiment):
    return canonical(EXPERIMENTS[experiment]["data"])


def data_identity(experiment, seed):
    return files.identity("data", experiment, _data_section(experiment), seed=seed)


def svm_identity(experiment, seed):
    settings = {
        "data": _data_section(experiment),
        "train_u": EXPERIMENTS[experiment]["train"]["train_u"],
    }
    return files.identity("svm", experiment, settings, seed=seed)


def run_identity(experiment, optimizer, seed):
    """A training run's: its data, training and optimizer settings, device and dtype."""
    settings = {
        "data": _data_section(experiment),
        "train": canonical(EXPERIMENTS[experiment]["train"]),
        "optimizer": optimizer_config(experiment, optimizer),
        "device": config["device"],
        "dtype": config["dtype"],
    }
    return files.identity("run", experiment, settings, seed=seed, optimizer=optimizer)


def metrics_identity(experiment):
    """An aggregate table's: the identities of the runs it holds."""
    runs = [
        run_identity(experiment, o, s)
        for o in EXPERIMENTS[experiment]["optimizers"]
        for s in seeds(experiment)
    ]
    return files.identity("metrics", experiment, runs)


def identity_of(kind):
    """Params helper: the identity of a job's output (or of the file it reads) of `kind`."""

    def get(wildcards):
        e, seed = wildcards.experiment, wildcards.get("seed")
        if kind == "data":
            return data_identity(e, seed)
        if kind == "svm":
            return svm_identity(e, seed)
        if kind == "run":
            return run_identity(e, wildcards.optimizer, seed)
        return metrics_identity(e)

    return get


def run_identities(wildcards):
    """Params of aggregate: input run file -> the identity it must hold."""
    e = wildcards.experiment
    return {
        f"results/train/{e}/{o}/seed{s}.parquet": run_identity(e, o, s)
        for o in EXPERIMENTS[e]["optimizers"]
        for s in seeds(e)
    }


def all_seeds(pattern):
    """`pattern` for every default-build experiment and seed, in config order."""
    return [
        path
        for name in DEFAULT_EXPERIMENTS
        for path in expand(pattern, experiment=name, seed=seeds(name))
    ]


def joint_final_files(wildcards):
    """The final parameters of every joint-training run, experiment, optimizer, seed order
    (the claims read the learned u's margin from them)."""
    return [
        f"results/train/{name}/{opt}/seed{seed}.final.npz"
        for name, e in DEFAULT_EXPERIMENTS.items()
        if e["figure"] == "joint"
        for opt in e["optimizers"]
        for seed in seeds(name)
    ]


def claims_settings(wildcards):
    """Claims params: what each experiment is, and its optimizers' settings."""
    return {
        name: {
            "figure": e["figure"],
            "seeds": e["seeds"],
            "optimizers": {o: optimizer_config(name, o) for o in e["optimizers"]},
        }
        for name, e in DEFAULT_EXPERIMENTS.items()
    }


def claims_identities(wildcards):
    """Claims params: input file -> the identity it must hold."""
    out = {
        f"results/{n}/metrics.parquet": metrics_identity(n) for n in DEFAULT_EXPERIMENTS
    }
    for n, e in DEFAULT_EXPERIMENTS.items():
        for s in seeds(n):
            out[f"results/svm/{n}/seed{s}.npz"] = svm_identity(n, s)
            out[f"results/data/{n}/seed{s}.npz"] = data_identity(n, s)
            if e["figure"] == "joint":
                for o in e["optimizers"]:
                    path = f"results/train/{n}/{o}/seed{s}.final.npz"
                    out[path] = dict(run_identity(n, o, s), kind="final")
    return out


def experiment_jobs(wildcards):
    """The wildcard values of the jobs behind an experiment's figure."""
    return {
        "experiment": wildcards.experiment,
        "optimizer": list(EXPERIMENTS[wildcards.experiment]["optimizers"]),
        "seed": seeds(wildcards.experiment),
    }


def run_files(pattern):
    """Input helper: `pattern` for every optimizer and seed of the experiment."""

    def get(wildcards):
        return expand(pattern, **experiment_jobs(wildcards))

    return get


def seed_files(pattern):
    """Input helper: `pattern` for every seed of the experiment."""

    def get(wildcards):
        return expand(
            pattern, experiment=wildcards.experiment, seed=seeds(wildcards.experiment)
        )

    return get


def geometry_files(wildcards):
    """Seed 0's W_mm, for the geometry panel of a bad_init_2d figure (fig8; its tokens
    come from the data input); other kinds get no such input, so they do not rerun."""
    if EXPERIMENTS[wildcards.experiment]["figure"] != "bad_init_2d":
        return {}
    return {"geometry_svm": f"results/svm/{wildcards.experiment}/seed0.npz"}


def benchmarks(*rule_names, jobs=experiment_jobs):
    """Input helper: the benchmark files of the `rule_names` jobs behind a figure.

    Snakemake measures each job's wall time into its `benchmark:` file, which is an output
    of the job, so a figure can take it as input (its provenance reports the times).
    `jobs(wildcards)` gives the wildcard values of those jobs (a pattern ignores the ones
    it lacks). Benchmark paths follow results/benchmarks/<rule>/..., which the provenance
    reads the rule from.
    """

    def get(wildcards):
        values = jobs(wildcards)
        return [
            path
            for name in rule_names
            for path in expand(getattr(rules, name).benchmark, **values)
        ]

    return get


def figure_config(wildcards):
    """Params for a figure's provenance: the config values its jobs used (hashed there).

    The experiment's section (data, training, optimizers, figure) and the global settings
    that reach its training jobs; for the study figure, the study's section.
    """
    if "experiment" not in wildcards.keys():
        return canonical({"global_convergence": STUDY, "device": config["device"]})
    name = wildcards.experiment
    return canonical(
        {
            "experiments": {name: EXPERIMENTS[name]},
            "device": config["device"],
            "dtype": config["dtype"],
        }
    )


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


def _study_identity(kind, setting, optimizer):
    """A study file's identity: its setting, optimizer and every study value its job reads."""
    used = {
        "setting": canonical({**STUDY["data"], **STUDY["settings"][setting]}),
        "optimizer": canonical(spec_settings(STUDY["optimizers"][optimizer])),
        "study": canonical(
            {
                k: v
                for k, v in STUDY.items()
                if k not in ("data", "settings", "optimizers")
            }
        ),
        "device": config["device"],
    }
    ident = files.identity(kind, "global_convergence", used, optimizer=optimizer)
    return {**ident, "setting": setting}


def study_identity(kind):
    """Params helper: the identity of a study job's output of `kind` (runs, assumptions)."""

    def get(wildcards):
        return _study_identity(kind, wildcards.setting, wildcards.optimizer)

    return get


def study_identities(wildcards):
    """Params of study_summary: input file -> the identity it must hold."""
    return {
        f"results/global_convergence/{kind}/{s}/{o}.parquet": _study_identity(
            kind, s, o
        )
        for kind in ("runs", "assumptions")
        for s in STUDY["settings"]
        for o in STUDY["optimizers"]
    }


def study_legend(wildcards):
    return {name: opt.get("label", name) for name, opt in STUDY["optimizers"].items()}


def study_jobs(wildcards):
    """The wildcard values of the study's runs (for `benchmarks`)."""
    return {"setting": list(STUDY["settings"]), "optimizer": list(STUDY["optimizers"])}


# ---- real-data figures --------------------------------------------------------------


def _check_real_experiments():
    """Names and model keys of the real-data part, before any job (the schema checks each
    optimizer's settings against its name)."""
    clash = set(REAL_EXPERIMENTS) & (set(EXPERIMENTS) | {SIMILARITY_FIGURE})
    if clash:
        raise WorkflowError(
            f"config key real_data.experiments: {sorted(clash)} also named elsewhere "
            f"(experiments, or {SIMILARITY_FIGURE}, the token-similarity figure)"
        )
    for name, e in REAL_EXPERIMENTS.items():
        if e["model"] != "vit_small" and e["model"] not in REAL["models"]:
            raise WorkflowError(
                f"config key real_data.experiments.{name}.model: {e['model']!r} is neither "
                f"vit_small nor a key of real_data.models ({sorted(REAL['models'])})"
            )
        text = e["dataset"] in ("mnli", "civilcomments")
        if text == (e["model"] == "vit_small"):
            raise WorkflowError(
                f"config key real_data.experiments.{name}: dataset {e['dataset']} does not go "
                f"with model {e['model']} (text data: a BERT key of real_data.models; "
                "images: vit_small)"
            )
    if REAL["similarity"]["model"] not in REAL["models"]:
        raise WorkflowError(
            f"config key real_data.similarity.model: {REAL['similarity']['model']!r} is not a "
            f"key of real_data.models ({sorted(REAL['models'])})"
        )


def settings_of(opt):
    """A real-data optimizer's keyword settings (without its name and display label)."""
    return {k: v for k, v in opt.items() if k not in ("label", "name")}


_check_real_experiments()
REAL_TRAINING = _alternatives(REAL_EXPERIMENTS or {"none"})


def real_figure_targets():
    figures = expand("results/{figure}.pdf", figure=REAL_EXPERIMENTS)
    if REAL["similarity"]["samples"]:
        figures.append(f"results/{SIMILARITY_FIGURE}.pdf")
    return figures


def _model_path(key):
    return REAL["models"][key]


def real_needs(wildcards):
    """Params of check_real_data: the datasets and the model (path or hub name) a figure needs."""
    if wildcards.figure == SIMILARITY_FIGURE:
        similarity = REAL["similarity"]
        return {
            "datasets": sorted(similarity["samples"]),
            "model": _model_path(similarity["model"]),
        }
    e = REAL_EXPERIMENTS[wildcards.figure]
    model = None if e["model"] == "vit_small" else _model_path(e["model"])
    return {"datasets": [e["dataset"]], "model": model}


def real_gpus(wildcards):
    """Resource `gpu` of the real-data jobs: one, unless the config pins them to the CPU."""
    return 0 if REAL["device"] == "cpu" else 1


def real_experiment_settings(wildcards):
    """Params: what a real-data run depends on (not its title or the optimizers' labels)."""
    e = REAL_EXPERIMENTS[wildcards.figure]
    settings = {k: v for k, v in e.items() if k not in ("title", "optimizers")}
    if e["model"] != "vit_small":
        settings["model_path"] = _model_path(e["model"])
    return canonical(settings)


def real_optimizer_settings(wildcards):
    opt = REAL_EXPERIMENTS[wildcards.figure]["optimizers"][wildcards.optimizer]
    return canonical({k: v for k, v in opt.items() if k != "label"})


def real_run_identity(figure, optimizer, seed):
    """A real-data training run's identity: what its params say it trained."""
    e = REAL_EXPERIMENTS[figure]
    settings = {k: v for k, v in e.items() if k not in ("title", "optimizers")}
    if e["model"] != "vit_small":
        settings["model_path"] = _model_path(e["model"])
    opt = {k: v for k, v in e["optimizers"][optimizer].items() if k != "label"}
    used = {
        "experiment": canonical(settings),
        "optimizer": canonical(opt),
        "data_root": REAL["data_root"],
        "device": REAL["device"],
        "autocast": REAL["autocast"],
    }
    return files.identity("run", figure, used, seed=seed, optimizer=optimizer)


def real_identity_of(kind):
    """Params helper: a real-data run's identity (kind run) or its figure's table's."""

    def get(wildcards):
        f = wildcards.figure
        if kind == "run":
            return real_run_identity(f, wildcards.optimizer, wildcards.seed)
        runs = [
            real_run_identity(f, o, s)
            for o in REAL_EXPERIMENTS[f]["optimizers"]
            for s in range(REAL_EXPERIMENTS[f]["seeds"])
        ]
        return files.identity("metrics", f, runs)

    return get


def real_run_identities(wildcards):
    """Params of aggregate_real: input run file -> the identity it must hold."""
    f = wildcards.figure
    e = REAL_EXPERIMENTS[f]
    return {
        f"results/train/{f}/{o}/seed{s}.parquet": real_run_identity(f, o, s)
        for o in e["optimizers"]
        for s in range(e["seeds"])
    }


def real_run_files(pattern):
    """Input helper: `pattern` for every optimizer and seed of a real-data figure."""

    def get(wildcards):
        e = REAL_EXPERIMENTS[wildcards.figure]
        return expand(
            pattern,
            figure=wildcards.figure,
            optimizer=e["optimizers"],
            seed=range(e["seeds"]),
        )

    return get


def real_title(wildcards):
    return REAL_EXPERIMENTS[wildcards.figure]["title"] or wildcards.figure


def real_legend(wildcards):
    """Figure params: optimizer name -> (label, its settings as text)."""
    legend = {}
    for name, opt in REAL_EXPERIMENTS[wildcards.figure]["optimizers"].items():
        settings = ", ".join(f"{k}={v:g}" for k, v in sorted(settings_of(opt).items()))
        legend[name] = (
            opt.get("label", name),
            f"{opt['name'].upper()} {settings}".strip(),
        )
    return legend


def similarity_settings(wildcards):
    s = REAL["similarity"]
    return canonical(
        {
            "model_path": _model_path(s["model"]),
            "samples": s["samples"][wildcards.dataset],
            "seed": s["seed"],
            "max_length": s["max_length"],
            "band": s["band"],
        }
    )


def real_jobs(wildcards):
    """The wildcard values of the training jobs behind a real-data figure."""
    e = REAL_EXPERIMENTS[wildcards.figure]
    return {
        "figure": wildcards.figure,
        "optimizer": list(e["optimizers"]),
        "seed": list(range(e["seeds"])),
    }


def similarity_jobs(wildcards):
    return {"dataset": list(REAL["similarity"]["samples"])}


def _real_globals():
    return {
        k: REAL[k] for k in ("data_root", "models", "device", "autocast", "download")
    }


def real_figure_config(wildcards):
    """Params for a real-data figure's provenance: its section and the settings its jobs read."""
    name = wildcards.figure
    return canonical(
        {
            "real_data": {
                **_real_globals(),
                "experiments": {name: REAL_EXPERIMENTS[name]},
            }
        }
    )


def similarity_figure_config(wildcards):
    return canonical(
        {"real_data": {**_real_globals(), "similarity": REAL["similarity"]}}
    )
