# Validation, wildcard constraints, target lists and the thin wrappers that hand a job's
# wildcards to attnbias.workflow.config (the plain logic: identities, legends, settings).

import inspect
import os
import re

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


def in_report(path, caption, category, subcategory=None):
    """`path` in the HTML report (`snakemake --report`), captioned by workflow/report/."""
    caption = f"../report/{caption}"
    return report(path, caption=caption, category=category, subcategory=subcategory)


def code(script):
    """The script and the package modules it imports: a change to any reruns the rule."""
    return [str(SCRIPTS / script), *module_files(str(SCRIPTS / script))]


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


# ---- params and inputs: functions of a job's wildcards ------------------------------


def config_value(dpath):
    """Params: the plain config value at `dpath` (None where its section is absent)."""
    return lookup(dpath=dpath, within=config, default=None)


def benchmarks(*rule_names, jobs=None):
    """Input helper: the benchmark files of the `rule_names` jobs behind a figure.

    Snakemake measures each job's wall time into its `benchmark:` file, which is an output
    of the job, so a figure can take it as input (its provenance reports the times).
    `jobs(wildcards)` gives the wildcard values of those jobs (default: the experiment's
    optimizers and seeds; a pattern ignores the ones it lacks). Benchmark paths follow
    <results>/benchmarks/<rule>/..., which the provenance reads the rule from.
    """

    def get(wildcards):
        values = dict(wildcards.items())
        values.update(jobs(wildcards) if jobs else WF.jobs(job_experiment(wildcards)))
        paths = (
            path
            for name in rule_names
            for path in expand(getattr(rules, name).benchmark, **values)
        )
        return list(dict.fromkeys(paths))  # a job of all seeds: one file, named once

    return get


# ---- the synthetic stages: a job per experiment (data, svm) and optimizer (train) ------
# A job makes every seed of its experiment into one file with a seed axis (its start costs
# more than its work: docs/speed.md); the params below are each a function of the job's
# wildcards, so a changed seed count or setting reruns that experiment's jobs only.


def get_data_code(wildcards):
    """code("data.py"), plus the module of a data model whose generator lives apart
    (data.SEPARATE_GENERATORS: bad_direction's SVM), for that model's experiments only.
    """
    from attnbias.data.models import SEPARATE_GENERATORS

    own = SEPARATE_GENERATORS.get(EXPERIMENTS[wildcards.experiment]["data"]["model"])
    return [*code("data.py"), *(package_module_files(own) if own else [])]


def get_seeds(wildcards):
    return list(WF.seeds(wildcards.experiment))


def get_data_settings(wildcards):
    return at(EXPERIMENTS[wildcards.experiment], "data")


def get_train_settings(wildcards):
    return at(EXPERIMENTS[wildcards.experiment], "train")


def get_optimizer(wildcards):
    return WF.optimizer(job_experiment(wildcards), wildcards.optimizer)


def get_data_identities(wildcards):
    return WF.seed_identities("data", wildcards.experiment)


def get_svm_identities(wildcards):
    return WF.seed_identities("svm", wildcards.experiment)


def get_run_identities(wildcards):
    return WF.seed_identities("run", wildcards.experiment, wildcards.optimizer)


def get_train_tables(wildcards):
    optimizers = EXPERIMENTS[wildcards.experiment]["optimizers"]
    return expand(rules.train.output.metrics, optimizer=optimizers, **wildcards)


def get_train_table_identities(wildcards):
    return WF.run_identities(rules.train.output.metrics, wildcards.experiment)


# ---- figures and claims: each reads the aggregate, which carries its runs' record ------


def job_experiment(wildcards):
    """The experiment of a job: its `experiment`, or a real-data figure's `figure`."""
    return wildcards.get("experiment") or wildcards.get("figure")


def get_metrics_identity(wildcards):
    return WF.identity("metrics", job_experiment(wildcards))


def get_title(wildcards):
    return WF.title(job_experiment(wildcards))


def get_legend(wildcards):
    return WF.legend(job_experiment(wildcards))


def get_figure_config(wildcards):
    return WF.figure_config(job_experiment(wildcards))


def get_figure_description(wildcards):
    """The report caption's description of a synthetic figure's panels (figures.panels)."""
    experiment = EXPERIMENTS[wildcards.experiment]
    # the data model's description: part of its registry entry
    return describe(
        experiment["layout"], data_model(experiment["data"]["model"]).description
    )


def get_claims_inputs(wildcards):
    """The claims' inputs, named by experiment: metrics/<name>, data/<name>, svm/<name>
    and, for joint training, final/<name>/<optimizer> (scripts/claims.py reads them so).
    """
    inputs = {}
    for name in DEFAULT_EXPERIMENTS:
        for kind, pattern in [
            ("metrics", rules.aggregate.output[0]),
            ("data", rules.data.output[0]),
            ("svm", rules.svm.output[0]),
        ]:
            inputs[f"{kind}/{name}"] = expand(pattern, experiment=name)[0]
    for name in WF.joint():
        for optimizer in EXPERIMENTS[name]["optimizers"]:
            final = expand(
                rules.train.output.final, experiment=name, optimizer=optimizer
            )
            inputs[f"final/{name}/{optimizer}"] = final[0]
    return inputs


# ---- the global-convergence study (study.smk) and the sweeps (sweep.smk) -------------


def get_study_jobs(wildcards):
    return WF.study_jobs()


def get_sweep_points(wildcards):
    return {"point": list(SWEEPS.points(wildcards.sweep))}


def get_study_setting(wildcards):
    return WF.study_setting(wildcards.setting)


def get_study_optimizer(wildcards):
    return WF.study_optimizer(wildcards.optimizer)


def get_study_identity(wildcards):
    return WF.study_identity("runs", wildcards.setting, wildcards.optimizer)


def get_study_assumptions_identity(wildcards):
    return WF.study_identity("assumptions", wildcards.setting, wildcards.optimizer)


def get_sweep_experiment(wildcards):
    return SWEEPS.experiment(wildcards.sweep, wildcards.point)


def get_sweep_identity(wildcards):
    return SWEEPS.identity(wildcards.sweep, wildcards.point)


def get_sweep_metrics(wildcards):
    return SWEEPS.metrics(wildcards.sweep)


def get_sweep_summary(wildcards):
    """What a sweep's summary reads of its config: the grid, the points' identities, the
    axes, the claims and their texts, the legend."""
    sweep = wildcards.sweep
    return {
        "grid": SWEEPS.grid_table(sweep),
        "identities": SWEEPS.identities(sweep),
        "axes": SWEEPS.axes(sweep),
        "claims": SWEEPS.claims(sweep),
        "claim_texts": SWEEPS.claim_texts(sweep),
        "legend": SWEEPS.legend(sweep),
    }


def get_sweep_config(wildcards):
    return SWEEPS.figure_config(wildcards.sweep)


def sweep_files(pattern):
    """Input helper: `pattern` for every point of the job's sweep."""
    return lambda wildcards: expand(
        pattern, sweep=wildcards.sweep, point=SWEEPS.points(wildcards.sweep)
    )


# ---- the real-data figures (realdata.smk): a training job per optimizer and seed ---


def get_real_needs(wildcards):
    return WF.real_needs(wildcards.figure)


def get_real_threads(wildcards):
    return WF.real_threads(wildcards.figure)


def get_real_settings(wildcards):
    return WF.real_settings(wildcards.figure)


def get_real_optimizers(wildcards):
    return at(WF.real_experiments[wildcards.figure], "optimizers")


def get_real_run_identity(wildcards):
    return WF.identity("run", wildcards.figure, wildcards.seed, wildcards.optimizer)


def get_real_run_identities(wildcards):
    return WF.run_identities(rules.train_real.output.metrics, wildcards.figure)


def get_real_runs(wildcards):
    """Every optimizer's and seed's run table of a real-data figure."""
    return expand(
        rules.train_real.output.metrics, **wildcards, **WF.jobs(wildcards.figure)
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


def get_similarity_settings(wildcards):
    return WF.similarity_settings(wildcards.figure, wildcards.dataset)


def get_similarity_title(wildcards):
    return WF.similarity_title(wildcards.figure)


def get_similarity_config(wildcards):
    return WF.similarity_config(wildcards.figure)
