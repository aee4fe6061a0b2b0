"""A job's params and inputs as functions of its wildcards: what workflow/rules/*.smk name.

Each method takes Snakemake's `wildcards` (or any object with the job's names as
attributes) and hands the names to WorkflowConfig (or the sweeps' SweepConfig), which hold
the logic and are tested without Snakemake. A method that takes a `pattern` (a rule's
output path) returns such a function. The values are canonical (sorted keys), so
reordering a config file reruns nothing, and a changed value reruns its jobs only.
"""

from __future__ import annotations

from attnbias.workflow.codedeps import generator_files, rule_files
from attnbias.workflow.config import WorkflowConfig, at
from attnbias.workflow.geometry_config import GeometryConfig
from attnbias.workflow.real_config import RealDataConfig


def experiment_of(wildcards) -> str:
    """The experiment of a job: its `experiment`, or a real-data figure's `figure`."""
    return getattr(wildcards, "experiment", None) or wildcards.figure


class JobParams:
    """The jobs' params and inputs from the validated config; `sweeps` and `robustness`: its
    SweepConfig and RobustnessConfig (attnbias.studies.sweep_config and robustness_config,
    which this module does not import: the studies build on the workflow)."""

    def __init__(self, wf: WorkflowConfig, sweeps, robustness):
        self.wf = wf
        self.sweeps = sweeps
        self.geometry = GeometryConfig(wf)
        self.robustness = robustness
        self.real = RealDataConfig(wf)

    # ---- the synthetic stages: a job per experiment (data, svm) and optimizer (train) ---

    def data_generator_code(self, wildcards) -> list[str]:
        """The module of the experiment's data model where its generator lives apart from
        attnbias.data.models (SEPARATE_GENERATORS: bad_direction's solves an SVM,
        binary_digits' reads real images), else none."""
        return generator_files(self.wf.experiments[wildcards.experiment]["data"]["model"])

    def seeds(self, wildcards) -> list[int]:
        return list(self.wf.seeds(wildcards.experiment))

    def data_settings(self, wildcards) -> dict:
        return at(self.wf.experiments[wildcards.experiment], "data")

    def train_settings(self, wildcards) -> dict:
        return at(self.wf.experiments[wildcards.experiment], "train")

    def train_u(self, wildcards) -> bool:
        return self.wf.experiments[wildcards.experiment]["train"]["train_u"]

    def optimizer(self, wildcards) -> dict:
        return self.wf.optimizer(experiment_of(wildcards), wildcards.optimizer)

    def rule_code(self, wildcards) -> list[str]:
        """The module of the rule the job's optimizer trains with (a train or train_real
        job): its code input, which no import statement names (codedeps.rule_files)."""
        return rule_files([self.optimizer(wildcards)["rule"]])

    def svm_geometry_file(self, pattern: str):
        """Input: a geometry experiment's svm-geometry file (`pattern`); none for the others."""
        return lambda wildcards: self.geometry.svm_file(pattern, wildcards.experiment)

    def train_geometry(self, wildcards, input) -> dict:
        """Params: the norms and svm-geometry identities of a geometry run; {} for the
        others. A function of the job's `input` (its svm-geometry file), which keeps it out
        of Snakemake's params trigger: the other experiments' train jobs keep the params
        they recorded. A geometry run's norms are also in its run identity (identities)."""
        return self.geometry.train(wildcards.experiment)

    def data_identities(self, wildcards) -> list[dict]:
        return self.wf.seed_identities("data", wildcards.experiment)

    def svm_identities(self, wildcards) -> list[dict]:
        return self.wf.seed_identities("svm", wildcards.experiment)

    def norms(self, wildcards) -> list[str]:
        return self.wf.norms(wildcards.experiment)

    def svm_geometry_identities(self, wildcards) -> list[dict]:
        return self.wf.seed_identities("svm_geometry", wildcards.experiment)

    def run_identities(self, wildcards) -> list[dict]:
        return self.wf.seed_identities("run", wildcards.experiment, wildcards.optimizer)

    # ---- an aggregate: every run table of an experiment, synthetic or real -------------

    def run_tables(self, pattern: str):
        """Input: the run tables (`pattern`, train's or train_real's output) of the job's
        experiment, every optimizer's (and seed's, where a table holds one seed)."""
        return lambda wildcards: list(self.wf.run_identities(pattern, experiment_of(wildcards)))

    def run_table_identities(self, pattern: str):
        """Params: each of run_tables(pattern) -> the identity it must hold."""
        return lambda wildcards: self.wf.run_identities(pattern, experiment_of(wildcards))

    # ---- figures: each reads its aggregate, which carries its runs' record ------------

    def metrics_identity(self, wildcards) -> dict:
        return self.wf.identity("metrics", experiment_of(wildcards))

    def layout(self, wildcards) -> str:
        return self.wf.experiments[wildcards.experiment]["layout"]

    def title(self, wildcards) -> str:
        return self.wf.title(experiment_of(wildcards))

    def legend(self, wildcards) -> dict:
        return self.wf.legend(experiment_of(wildcards))

    def figure_config(self, wildcards) -> dict:
        return self.wf.figure_config(experiment_of(wildcards))

    def training_jobs(self, wildcards) -> dict:
        """The optimizers and seeds of the training jobs behind the job's figure."""
        return self.wf.jobs(experiment_of(wildcards))

    # ---- the global-convergence study and the sweeps -----------------------------------

    def study_jobs(self, wildcards) -> dict:
        return self.wf.study_jobs()

    def study_setting(self, wildcards) -> dict:
        return self.wf.study_setting(wildcards.setting)

    def study_optimizer(self, wildcards) -> dict:
        return self.wf.study_optimizer(wildcards.optimizer)

    def study_rule_code(self, wildcards) -> list[str]:
        """The module of the rule a study job trains with (codedeps.rule_files)."""
        return rule_files([self.study_optimizer(wildcards)["rule"]])

    def study_identity(self, wildcards) -> dict:
        return self.wf.study_identity("runs", wildcards.setting, wildcards.optimizer)

    def study_assumptions_identity(self, wildcards) -> dict:
        return self.wf.study_identity("assumptions", wildcards.setting, wildcards.optimizer)

    def sweep_points(self, wildcards) -> dict:
        return {"point": list(self.sweeps.points(wildcards.sweep))}

    def sweep_files(self, pattern: str):
        """Input: `pattern` (a sweep_point output) for every point of the job's sweep."""
        return lambda wildcards: [
            pattern.format(sweep=wildcards.sweep, point=point)
            for point in self.sweeps.points(wildcards.sweep)
        ]

    def sweep_experiment(self, wildcards) -> dict:
        return self.sweeps.experiment(wildcards.sweep, wildcards.point)

    def sweep_code(self, wildcards) -> list[str]:
        return self.sweeps.loaded_code(wildcards.sweep, wildcards.point)

    def sweep_identity(self, wildcards) -> dict:
        return self.sweeps.identity(wildcards.sweep, wildcards.point)

    def sweep_metrics(self, wildcards) -> list[str]:
        return self.sweeps.metrics(wildcards.sweep)

    def sweep_summary(self, wildcards) -> dict:
        """What a sweep's summary reads of its config: the grid, the points' identities,
        the axes, the claims and their texts, the legend."""
        sweep, sweeps = wildcards.sweep, self.sweeps
        return {
            "grid": sweeps.grid_table(sweep),
            "identities": sweeps.identities(sweep),
            "axes": sweeps.axes(sweep),
            "claims": sweeps.claims(sweep),
            "claim_texts": sweeps.claim_texts(sweep),
            "legend": sweeps.legend(sweep),
        }

    def sweep_config(self, wildcards) -> dict:
        return self.sweeps.figure_config(wildcards.sweep)

    # ---- the real-data figures: a training job per optimizer and seed ------------------

    def real_needs(self, wildcards) -> dict:
        return self.real.real_needs(wildcards.figure)

    def real_threads(self, wildcards) -> int:
        return self.real.real_threads(wildcards.figure)

    def real_settings(self, wildcards) -> dict:
        return self.wf.real_settings(wildcards.figure)

    def real_optimizers(self, wildcards) -> dict:
        return at(self.wf.real_experiments[wildcards.figure], "optimizers")

    def real_tuning(self, record: str):
        """Params: where the figure's settings were tuned, checked against its sweeps'
        records (`record`, final_values_real's output) where built: its caption says it, and
        a record that appears or changes redraws the figure only."""
        return lambda wildcards: self.real.tuning(wildcards.figure, record)

    def real_sweep(self, wildcards) -> str | None:
        """The figure's name where it is a learning-rate sweep (sweep_of), else None."""
        return (
            wildcards.figure if "sweep_of" in self.wf.real_experiments[wildcards.figure] else None
        )

    def real_run_identity(self, wildcards) -> dict:
        return self.wf.identity("run", wildcards.figure, wildcards.seed, wildcards.optimizer)

    # ---- the token-similarity figures: a job per dataset -------------------------------

    def similarity_datasets(self, wildcards) -> dict:
        """The datasets of a token-similarity figure: one panel and one job each."""
        return {"dataset": list(self.real.similarity_section(wildcards.figure)["samples"])}

    def similarity_tables(self, pattern: str):
        """Input: the histogram tables (`pattern`) of the job's figure, one per dataset."""
        return lambda wildcards: [
            pattern.format(figure=wildcards.figure, dataset=dataset)
            for dataset in self.similarity_datasets(wildcards)["dataset"]
        ]

    def similarity_settings(self, wildcards) -> dict:
        return self.real.similarity_settings(wildcards.figure, wildcards.dataset)

    def similarity_title(self, wildcards) -> str:
        return self.real.similarity_title(wildcards.figure)

    def similarity_config(self, wildcards) -> dict:
        return self.real.similarity_config(wildcards.figure)
