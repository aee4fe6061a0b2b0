# Reproduces "Implicit Bias and Fast Convergence Rates for Self-attention" (arXiv 2402.05738).
# Every figure is a target: `snakemake -c2 results/fig3.pdf`. Stages, one rule file each:
# data -> svm -> train -> aggregate -> figures. See README.md.

from snakemake.utils import min_version

from attnbias.workflow import configfiles

min_version("9.0")


# The default config (the working directory's config/config.yaml, else the repository's),
# unless --configfile names one, which then replaces it (no deep merge); a YTE template
# config is refused by name before it is evaluated (docs/workflow.md, docs/running.md).
DEFAULT_CONFIG = Path("config/config.yaml")
if not DEFAULT_CONFIG.exists():
    DEFAULT_CONFIG = Path(workflow.basedir) / "config" / "config.yaml"
try:
    configfiles.refuse_templates(workflow.overwrite_configfiles or [DEFAULT_CONFIG])
except configfiles.ConfigFileError as err:
    raise WorkflowError(str(err)) from None
if not workflow.overwrite_configfiles:

    configfile: DEFAULT_CONFIG


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/svm.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/geometry.smk"
include: "workflow/rules/study.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/realdata.smk"
include: "workflow/rules/neighbours.smk"


rule all:
    default_target: True
    input:
        all_targets(),


# Before any job (not with -n): every missing real-data item, in one message; the estimate
# of each svm_geometry or neighbours' job that will take long (workflow.svm_cost_lines); the results folder's
# owner (attnbias.workflow.results_folder); which backend trains the synthetic jobs.
onstart:
    check_real_data_first()
    announce_svm_costs()
    results_folder.claim(config, workflow.overwrite_configfiles, DEFAULT_CONFIG)
    if synthetic_jobs():
        from attnbias.training import dispatch

        print(
            dispatch.backend_line(config["device"], config["dtype"]),
            file=sys.stderr,
        )
