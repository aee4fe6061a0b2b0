# Validation, wildcard constraints, target lists and the thin wrappers that hand a job's
# wildcards to attnbias.workflow.config (the plain logic: identities, legends, settings).

import inspect
import os
import re
from types import SimpleNamespace

import yaml

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate

from attnbias.workflow import configcheck
from attnbias.workflow import results_folder
from attnbias.workflow.codedeps import module_files, package_module_files
from attnbias.data.models import data_model
from attnbias.figures.panels import describe
from attnbias.studies import sweep_check
from attnbias.studies.sweep_config import SweepConfig
from attnbias.workflow.config import WorkflowConfig, at, canonical

# NaN and inf, whole floats where integers belong, renamed keys, reserved names, ignored
# optimizer settings, sizes and texts: refused here, naming the key, before any job runs.
# Then the schema once more through Snakemake, which fills in the defaults, and the checks
# that read those.
SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
try:
    schema = yaml.safe_load(SCHEMA.read_text())
    configcheck.check(config, schema)
    validate(config, schema=str(SCHEMA), set_default=True)
    configcheck.check_workflow(config, schema)
    sweep_check.check_sweeps(config, schema)
    results_folder.check(config, workflow.overwrite_configfiles, DEFAULT_CONFIG)
except configcheck.ConfigError as err:
    raise WorkflowError(str(err)) from None

# Report captions are docutils' reStructuredText: their config texts are escaped (see
# workflow/report/*.rst), and this file turns docutils' `raw` and `include` directives off,
# so no caption can carry markup or a local file into the report.
os.environ.update(
    DOCUTILSCONFIG=str(Path(workflow.basedir) / "workflow/report/docutils.conf")
)

# Only for `--sdm conda`, where Snakemake creates the envs: every env in envs/ installs this
# project with `pip install --editable ${ATTNBIAS_ROOT}` (conda runs pip beside Snakemake's
# copy of the env file, so a relative path cannot name the project), and takes every
# dependency from conda-forge, none from PyPI (PIP_NO_DEPS). Without conda, no job's
# environment is touched. See envs/README.md.
if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    os.environ.update(ATTNBIAS_ROOT=workflow.basedir, PIP_NO_DEPS="1")

WF = WorkflowConfig(config)
EXPERIMENTS = WF.experiments
DEFAULT_EXPERIMENTS = WF.default
STUDY = WF.study
REAL = WF.real
# the datasets of the token-similarity figures (Fig. 10 and its variants)
SIMILARITY_DATASETS = {d for s in REAL["similarity"].values() for d in s["samples"]}
SWEEPS = SweepConfig(config)
SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"


def results(path):
    """`path` under the config's results folder (key `results`), where every output goes."""
    return os.path.join(config["results"], path)


def _alternatives(names):
    return (
        "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "none"
    )


wildcard_constraints:
    experiment=_alternatives(EXPERIMENTS),
    optimizer=_alternatives(
        {
            o
            for e in [*EXPERIMENTS.values(), *WF.real_experiments.values()]
            for o in e["optimizers"]
        }
        | set(STUDY.get("optimizers", {}))
    ),
    figure=_alternatives({*WF.real_experiments, *REAL["similarity"]}),
    dataset=_alternatives(SIMILARITY_DATASETS),
    setting=_alternatives(STUDY.get("settings", {})),
    seed=r"\d+",


def all_targets():
    """Every default-build figure, and the claims table."""
    return [
        *expand(rules.figure.output.pdf, experiment=DEFAULT_EXPERIMENTS),
        rules.claims.output.md,
    ]


def code(script):
    """The script and the package modules it imports: a change to any reruns the rule."""
    return [str(SCRIPTS / script), *module_files(str(SCRIPTS / script))]


def data_code(experiment):
    """code("data.py"), plus the module of a data model whose generator lives apart
    (data.SEPARATE_GENERATORS: bad_direction's SVM), for that model's experiments only.
    """
    from attnbias.data.models import SEPARATE_GENERATORS

    model = EXPERIMENTS[experiment]["data"]["model"]
    own = SEPARATE_GENERATORS.get(model)
    return [*code("data.py"), *(package_module_files(own) if own else [])]


def synthetic_jobs():
    """Whether this run has a job outside the real-data rules (workflow/rules/realdata.smk):
    a run of real-data figures only says nothing about the synthetic runs' kernel."""
    real = {r.name for r in workflow.rules if str(r.snakefile).endswith("realdata.smk")}
    return any(job.rule.name not in real for job in workflow.dag.needrun_jobs())


def check_real_data_first():
    """Every missing dataset and model of the real-data figures that this run builds (those
    with a check_real_data job to run), in one message before any job starts: their check
    jobs would each stop with their part of it, and the first failures end the run."""
    figures = sorted(
        {
            job.wildcards_dict["figure"]
            for job in workflow.dag.needrun_jobs()
            if job.rule.name == "check_real_data"
        }
    )
    if not figures:
        return
    try:
        from attnbias.realdata import sources

        needs = {figure: WF.real_needs(figure) for figure in figures}
        sources.check_build(
            needs,
            REAL["data_root"],
            download=REAL["download"],
            fetch=REAL["fetch_wheels"],
        )
    except ImportError:  # `--sdm conda`: transformers is in the jobs' env; they check
        return
    except sources.MissingRealDataError as err:
        raise WorkflowError(str(err)) from None


# ---- a job's wildcards -> attnbias.workflow.config ----------------------------------


def _values(wildcards):
    """A job's wildcards by name; a real-data figure's `figure` is its experiment."""
    values = dict(wildcards.items())
    if "figure" in values:
        values.setdefault("experiment", values["figure"])
    return values


def of_job(method, *args):
    """Params helper: `method(*args, ...)` given the job's wildcards that it names."""
    names = inspect.signature(method).parameters

    def get(wildcards):
        values = _values(wildcards)
        return method(*args, **{k: v for k, v in values.items() if k in names})

    return get


def section(*keys):
    """Params helper: the canonical value at `keys` in the experiment's config section."""
    return lambda wildcards: at(WF.section(_values(wildcards)["experiment"]), *keys)


def config_value(dpath):
    """Params: the plain config value at `dpath` (None where its section is absent)."""
    return lookup(dpath=dpath, within=config, default=None)


def figure_description(wildcards):
    """The report caption's description of a synthetic figure's panels (figures.panels)."""
    experiment = EXPERIMENTS[wildcards.experiment]
    # the data model's description: part of its registry entry
    data = data_model(experiment["data"]["model"])
    return describe(experiment["layout"], data.description)


def geometry_files(wildcards):
    """Seed 0's W_mm, for the geometry panel of a bad_init_2d figure (fig8; its tokens
    come from the data input); other kinds get no such input, so they do not rerun."""
    if EXPERIMENTS[wildcards.experiment]["layout"] != "bad_init_2d":
        return {}
    return {"geometry_svm": expand(rules.svm.output[0], seed=0, **wildcards)[0]}


def run_files(pattern):
    """Input helper: `pattern` for every optimizer and seed of the job's experiment."""

    def get(wildcards):
        values = _values(wildcards)
        return expand(pattern, **values, **WF.jobs(values["experiment"]))

    return get


def seed_files(pattern):
    """Input helper: `pattern` for every seed of the job's experiment."""
    return lambda wildcards: expand(
        pattern, experiment=wildcards.experiment, seed=WF.seeds(wildcards.experiment)
    )


def all_seeds(pattern):
    """`pattern` for every default-build experiment and seed, in config order."""
    return [
        path
        for name in DEFAULT_EXPERIMENTS
        for path in expand(pattern, experiment=name, seed=WF.seeds(name))
    ]


def benchmarks(*rule_names, jobs=None):
    """Input helper: the benchmark files of the `rule_names` jobs behind a figure.

    Snakemake measures each job's wall time into its `benchmark:` file, which is an output
    of the job, so a figure can take it as input (its provenance reports the times).
    `jobs(wildcards)` gives the wildcard values of those jobs (default: the experiment's
    optimizers and seeds; a pattern ignores the ones it lacks). Benchmark paths follow
    <results>/benchmarks/<rule>/..., which the provenance reads the rule from.
    """

    def get(wildcards):
        values = _values(wildcards)
        values.update(jobs(wildcards) if jobs else WF.jobs(values["experiment"]))
        paths = (
            path
            for name in rule_names
            for path in expand(getattr(rules, name).benchmark, **values)
        )
        return list(dict.fromkeys(paths))  # a job of all seeds: one file, named once

    return get


# ---- the synthetic stages: a job per experiment (data, svm) and optimizer (train) ------
#
# A job makes every seed of its experiment (its start costs more than its work: README,
# "Speed"), one file per seed. Seeds vary by experiment, so each experiment has its own
# rules (data_<experiment>, svm_<experiment>, train_<experiment>, made in a loop), and the
# per-seed file patterns keep the names that the downstream rules read them by:
# rules.data.output[0], rules.svm.output[0], rules.train.output.metrics and .final, and
# each stage's benchmark file, for `benchmarks`.


# A SLURM job's minutes and memory (profiles/slurm names the other rules; these have a rule
# per experiment): all seeds of an experiment (and optimizer) in one job.
RESOURCES = {
    "data": {"runtime": 10, "mem_mb": 1000},
    "svm": {"runtime": 10, "mem_mb": 1000},
    "train": {"runtime": 30, "mem_mb": 2000},
}


def per_seed_files(stage, benchmark, pattern=None, **named):
    """Register `rules.<stage>`: the per-seed file pattern of a stage whose jobs make all
    seeds (`pattern`: rules.<stage>.output[0]; or named ones: rules.<stage>.output.<name>),
    and its jobs' benchmark file pattern."""
    output = SimpleNamespace(**named) if named else [pattern]
    setattr(rules, stage, SimpleNamespace(output=output, benchmark=benchmark))


def every_seed(pattern, experiment):
    """`pattern` for each seed of `experiment`, in seed order (other wildcards kept)."""
    return expand(
        pattern, experiment=experiment, seed=WF.seeds(experiment), allow_missing=True
    )


def sweep_files(pattern):
    """Input helper: `pattern` for every point of the job's sweep."""
    return lambda wildcards: expand(
        pattern, sweep=wildcards.sweep, point=SWEEPS.points(wildcards.sweep)
    )


# ---- the token-similarity figures (realdata.smk) -----------------------------------


def similarity_datasets(wildcards):
    """The datasets of a token-similarity figure: one panel and one job each."""
    return {"dataset": list(WF.similarity_section(wildcards.figure)["samples"])}


def similarity_values(wildcards):
    """The histogram files of a token-similarity figure, one per dataset."""
    datasets = similarity_datasets(wildcards)["dataset"]
    return expand(
        rules.token_similarity.output[0], figure=wildcards.figure, dataset=datasets
    )
