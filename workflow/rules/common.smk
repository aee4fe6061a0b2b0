# Validation, wildcard constraints, targets, code dependencies. A job's params and inputs
# are methods of JOB (attnbias.workflow.job_params), functions of its wildcards.

import os
import re

import yaml

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate

from attnbias.workflow import checked_config, configcheck
from attnbias.workflow.configkeys import ConfigError
from attnbias.workflow import results_folder, results_links
from attnbias.workflow import codedeps
from attnbias.workflow.codedeps import module_files
from attnbias.data.models import data_model
from attnbias.figures.algorithm_style import algorithms_of
from attnbias.figures.config_check import check_decoders
from attnbias.figures.panels import describe
from attnbias.realdata.config_check import check_real
from attnbias.studies import robustness_check, sweep_check
from attnbias.studies.robustness_config import RobustnessConfig
from attnbias.studies.sweep_config import SweepConfig
from attnbias.workflow.config import WorkflowConfig, at
from attnbias.workflow.job_params import JobParams

# each module's imports, parsed once per text (codedeps; the kernel's cache folder): the
# rules' code inputs
codedeps.remember_imports(checked_config.cache_folder() / "imports.json")

# Bad values refused by key before any job (configcheck); then the schema through
# Snakemake, which fills in the defaults, and the checks that read those: run once per
# config, schema and checking code (attnbias.workflow.checked_config; this file's text is
# in its key).
SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"


def run_checks(config):
    schema = yaml.safe_load(SCHEMA.read_text())
    configcheck.check(config, schema)
    validate(config, schema=str(SCHEMA), set_default=True)
    configcheck.check_workflow(config, schema)
    check_real(config)
    check_decoders(config)
    sweep_check.check_sweeps(config, schema)
    robustness_check.check(config, schema)


try:
    checked_config.check(
        config,
        SCHEMA,
        run_checks,
        [Path(workflow.basedir) / "workflow/rules/common.smk"],
    )
    results_folder.check(config, workflow.overwrite_configfiles, DEFAULT_CONFIG)
    results_links.check(config)
except (ConfigError, results_links.LinkInResultsError) as err:
    raise WorkflowError(str(err)) from None

# no report caption may carry markup or a local file (docs/workflow.md)
os.environ.update(
    DOCUTILSCONFIG=str(Path(workflow.basedir) / "workflow/report/docutils.conf")
)
# `--sdm conda` only: how the envs install this project (envs/README.md)
if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    os.environ.update(ATTNBIAS_ROOT=workflow.basedir, PIP_NO_DEPS="1")

WF = WorkflowConfig(config)
EXPERIMENTS = WF.experiments
DEFAULT_EXPERIMENTS = WF.default
STUDY = WF.study
REAL = WF.real
SWEEPS = SweepConfig(config)
JOB = JobParams(WF, SWEEPS, RobustnessConfig(WF))
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
    dataset=_alternatives(
        {d for s in REAL["similarity"].values() for d in s["samples"]}
    ),
    setting=_alternatives(STUDY.get("settings", {})),
    seed=r"\d+",


def all_targets():
    """Every default-build figure (the geometry figure where a geometry experiment is of
    the default build), and the claims table."""
    return [
        *expand(rules.figure.output.pdf, experiment=DEFAULT_EXPERIMENTS),
        *JOB.geometry.targets(rules.geometry_figure.output.pdf),
        *JOB.robustness.targets(rules.claims_robustness.output.md),
        rules.claims.output.md,
    ]


def in_report(path, caption, category, subcategory=None):
    """`path` in the HTML report (`snakemake --report`), captioned by workflow/report/."""
    caption = f"../report/{caption}"
    return report(path, caption=caption, category=category, subcategory=subcategory)


def code(script):
    """The script and the package modules it imports: a change to any reruns the rule."""
    files = [str(SCRIPTS / script), *module_files(str(SCRIPTS / script))]
    codedeps.save_imports()
    return files


def benchmarks(*rule_names, jobs=JOB.training_jobs):
    """Input: the benchmark files (each job's wall time, which the figure's provenance
    reports) of the `rule_names` jobs behind a figure; `jobs(wildcards)`: their wildcard
    values (a pattern ignores those it lacks)."""

    def get(wildcards):
        values = {**dict(wildcards.items()), **jobs(wildcards)}
        paths = (
            path
            for name in rule_names
            for path in expand(getattr(rules, name).benchmark, **values)
        )
        return list(dict.fromkeys(paths))  # a job of all seeds: one file, named once

    return get


def get_figure_description(wildcards):
    """The report caption's description of a synthetic figure's panels (figures.panels),
    opened by its data model's (its registry entry)."""
    experiment = EXPERIMENTS[wildcards.experiment]
    model = data_model(experiment["data"]["model"])
    keys = algorithms_of(WF.specs(wildcards.experiment), experiment["layout"])
    legend = WF.legend(wildcards.experiment)
    curves = {label: keys[name] for name, (label, _) in legend.items()}
    return describe(experiment["layout"], model.description, curves)


def synthetic_jobs():
    """Whether this run has a job outside realdata.smk (only those name the kernel)."""
    real = {r.name for r in workflow.rules if str(r.snakefile).endswith("realdata.smk")}
    return any(job.rule.name not in real for job in workflow.dag.needrun_jobs())


def check_real_data_first():
    """Every missing dataset and model of the real-data figures this run builds, in one
    message before any job starts (their check jobs would each stop with their part)."""
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
        from attnbias.realdata import errors, sources

        sources.check_build(
            {figure: JOB.real.real_needs(figure) for figure in figures},
            REAL["data_root"],
            download=REAL["download"],
            fetch=REAL["fetch_wheels"],
        )
    except ImportError:  # `--sdm conda`: transformers is in the jobs' env; they check
        return
    except errors.MissingRealDataError as err:
        raise WorkflowError(str(err)) from None


def announce_svm_costs():
    """Before any job: each svm_geometry job of this run, and each neighbours' job, that
    will take long (by its size, from measured costs: workflow.svm_cost_lines) says so.
    """
    from attnbias.workflow.svm_cost_lines import (
        NEIGHBOURS_PER_SEED,
        announcement,
        neighbours_announcement,
    )

    for job in workflow.dag.needrun_jobs():
        line = None
        if job.rule.name == "svm_geometry":
            name = job.wildcards_dict["experiment"]
            line = announcement(name, EXPERIMENTS[name])
        elif job.rule.name in NEIGHBOURS_PER_SEED:  # the neighbours' minutes-long jobs
            section = NEIGHBOURS_PER_SEED[job.rule.name][0]
            line = neighbours_announcement(job.rule.name, config["neighbours"][section])
        if line:
            print(line, file=sys.stderr)
