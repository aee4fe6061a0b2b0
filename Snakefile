# Reproduces "Implicit Bias and Fast Convergence Rates for Self-attention" (arXiv 2402.05738).
# Every figure is a target: `snakemake -c2 results/fig3.pdf`. Stages, one rule file each:
# data -> svm -> train -> aggregate -> figures. See README.md.

from snakemake.utils import min_version

from attnbias.workflow import configfiles

min_version("9.0")


# The default config, unless one is given with --configfile: that one then replaces it
# (Snakemake would otherwise deep-merge the two, mixing experiments of both files). The
# default is config/config.yaml of the working directory where it has one (the workflow
# catalog's `--directory .test` reads .test/config/config.yaml), else the repository's.
DEFAULT_CONFIG = Path("config/config.yaml")
if not DEFAULT_CONFIG.exists():
    DEFAULT_CONFIG = Path(workflow.basedir) / "config" / "config.yaml"
# A config file is code where it is a YTE template (`__use_yte__: true`): refused by name,
# the default before Snakemake loads (and would evaluate) it; a --configfile Snakemake has
# loaded already, before this file runs (attnbias.workflow.configfiles, docs/running.md).
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
include: "workflow/rules/study.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/realdata.smk"


rule all:
    default_target: True
    input:
        all_targets(),


# Before any job (`-n` runs none of this), on the console: every missing real-data item of
# this run, in one message; the config files that write the results folder, its one owner
# (attnbias.workflow.results_folder: any other config is refused there); then, where it
# has synthetic jobs, which backend trains them, and why when it is not the compiled kernel
# (a missing C compiler would otherwise show only in the jobs' logs; building it here also
# spares the jobs the race).
onstart:
    check_real_data_first()
    results_folder.claim(config, workflow.overwrite_configfiles, DEFAULT_CONFIG)
    if synthetic_jobs():
        from attnbias.training import dispatch

        print(
            dispatch.backend_line(config["device"], config["dtype"]),
            file=sys.stderr,
        )
