"""The workflow's reading of its config: what each job depends on, as plain Python.

workflow/rules/*.smk call these through attnbias.workflow.job_params, which hands them a
job's names from its wildcards; here they take the config and names only, so they are
tested without Snakemake and import no torch (parsing the workflow must stay fast).

One accessor per concern serves the synthetic experiments (`experiments`) and the
real-data ones (`real_data.experiments`) alike: an experiment's name says which it is (the
names are disjoint: attnbias.workflow.configcheck). Every dict that reaches a params value or an
identity is `canonical` (sorted keys), so reordering a config file reruns nothing.
"""

from __future__ import annotations

from attnbias.data.models import data_name, source_note
from attnbias.optim.spec import config_settings, resolve, without
from attnbias.workflow import store
from attnbias.workflow.configcheck_geometry import GEOMETRY_LAYOUT, TOKENS_DEFAULT

REAL_GLOBALS = ("data_root", "models", "device", "autocast", "download")


def canonical(value):
    """Dicts with sorted keys, recursively: reordering a config file reruns nothing."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    return value


def at(value, *keys):
    """The canonical value at `keys` under `value`."""
    for key in keys:
        value = value[key]
    return canonical(value)


class WorkflowConfig:
    """The validated config (defaults filled in) as the workflow's jobs read it."""

    def __init__(self, config: dict):
        self.config = config
        self.experiments = config["experiments"]
        self.study = config.get("global_convergence", {})
        self.real = config["real_data"]
        self.real_experiments = self.real["experiments"]
        # the geometry experiments (beyond the paper): parts of results/geometry.pdf, never
        # figures of their own (workflow.geometry_config: the figure, their claims)
        self.geometry = {
            n: e for n, e in self.experiments.items() if e["layout"] == GEOMETRY_LAYOUT
        }
        # the experiments of `rule all` and of the claims table (the others: extra targets)
        self.default = {
            n: e
            for n, e in self.experiments.items()
            if e["default_build"] and n not in self.geometry
        }
        # each file identity, computed once: the rules ask for the same ones thousands of
        # times while Snakemake parses the workflow (the config is not changed after this)
        self._identities: dict[tuple, dict] = {}
        self._specs: dict[str, dict] = {}  # each experiment's optimizers, resolved once

    # ---- one experiment, synthetic or real ---------------------------------------------

    def is_real(self, experiment: str) -> bool:
        return experiment in self.real_experiments

    def section(self, experiment: str) -> dict:
        return (self.real_experiments if self.is_real(experiment) else self.experiments)[experiment]

    def seeds(self, experiment: str) -> range:
        """The seeds of an experiment's runs: first_seed onwards (0 where absent)."""
        section = self.section(experiment)
        first = section.get("first_seed", 0)
        return range(first, first + section["seeds"])

    def jobs(self, experiment: str) -> dict:
        """The optimizers and seeds of the training jobs behind an experiment's figure."""
        return {
            "optimizer": list(self.section(experiment)["optimizers"]),
            "seed": list(self.seeds(experiment)),
        }

    def optimizer(self, experiment: str, optimizer: str) -> dict:
        """An optimizer's settings as its training job reads them (no label)."""
        return canonical(config_settings(self.section(experiment)["optimizers"][optimizer]))

    def title(self, experiment: str) -> str:
        """The figure's title; for synthetic data drawn from real images, which ones."""
        e = self.section(experiment)
        title = e["title"] or experiment
        if self.is_real(experiment):
            return title
        note = source_note(e["data"]["model"], e["data"]["params"])
        return f"{title}\n({note})" if note else title

    def specs(self, experiment: str) -> dict:
        """{optimizer name: its spec} of an experiment (optim.spec.resolve), resolved once:
        what the legends, the geometry figure's params and the captions' looks read."""
        if experiment not in self._specs:
            optimizers = self.section(experiment)["optimizers"]
            self._specs[experiment] = resolve(optimizers, real=self.is_real(experiment))
        return self._specs[experiment]

    def legend(self, experiment: str) -> dict:
        """Figure params: optimizer name -> (label, a caption of its settings)."""
        optimizers = self.section(experiment)["optimizers"]
        return {
            name: (optimizers[name].get("label", name), spec.caption())
            for name, spec in self.specs(experiment).items()
        }

    def figure_config(self, experiment: str | None = None) -> dict:
        """A figure's provenance params: the config values its jobs used (hashed there).

        An experiment's section and the global settings that reach its jobs; without an
        experiment, the study's section.
        """
        if experiment is None:
            return canonical({"global_convergence": self.study, "device": self.config["device"]})
        if self.is_real(experiment):
            real = {**self.real_globals(), "experiments": {experiment: self.section(experiment)}}
            return canonical({"real_data": real})
        return canonical(
            {
                # less the paper's figure: the claims job alone reads it
                "experiments": {experiment: without(self.section(experiment), "paper_figure")},
                "device": self.config["device"],
                "dtype": self.config["dtype"],
            }
        )

    # ---- file identities (attnbias.workflow.store.identity) -------------------------------------
    # A job stores its output's identity; a job reading a file gets the identity that the
    # file must hold (from its own wildcards and the config) and refuses any other.

    def seed_identities(self, kind, experiment, optimizer=None) -> list[dict]:
        """Each seed's identity in an experiment's file of `kind` (data, svm, run: a file
        with a seed axis), in seed order: what a job that makes or reads every seed checks."""
        return [self.identity(kind, experiment, s, optimizer) for s in self.seeds(experiment)]

    def identity(self, kind, experiment, seed=None, optimizer=None) -> dict:
        """The identity of a file of `kind` (data, svm, run, metrics): a copy of the one
        computed first (_identity)."""
        optimizer = optimizer if kind == "run" else None  # data and svm: every optimizer's
        key = (kind, experiment, seed, optimizer)
        if key not in self._identities:
            self._identities[key] = self._identity(kind, experiment, seed, optimizer)
        return dict(self._identities[key])

    def _identity(self, kind, experiment, seed, optimizer) -> dict:
        if kind == "metrics":  # an aggregate table's: the identities of the runs it holds
            runs = [
                self.identity("run", experiment, s, o)
                for o in self.section(experiment)["optimizers"]
                for s in self.seeds(experiment)
            ]
            return store.identity("metrics", experiment, runs)
        if self.is_real(experiment):
            return store.identity(
                kind,
                experiment,
                self._real_run(experiment, optimizer),
                seed=seed,
                optimizer=optimizer,
            )
        e = self.experiments[experiment]
        settings = {"data": canonical(e["data"])}
        if kind in ("svm", "svm_geometry"):
            settings["train_u"] = e["train"]["train_u"]
        if kind == "svm_geometry":  # the SVMs under the experiment's norms (svm.norms)
            settings["norms"] = self.norms(experiment)
        if kind == "run":  # its data, training and optimizer settings, device and dtype
            settings.update(
                train=canonical(e["train"]),
                optimizer=self.optimizer(experiment, optimizer),
                device=self.config["device"],
                dtype=self.config["dtype"],
            )
            if experiment in self.geometry:  # and the norms it is measured in
                settings["norms"] = list(e["norms"])
                if e.get("tokens", TOKENS_DEFAULT) != TOKENS_DEFAULT:  # and against which tokens
                    settings["tokens"] = e["tokens"]
        if kind == "data":
            settings = settings["data"]
        return store.identity(kind, experiment, settings, seed=seed, optimizer=optimizer)

    def norms(self, experiment: str) -> list[str]:
        """The norms of an experiment's svm-geometry file (its config key `norms`)."""
        norms = self.experiments[experiment].get("norms")
        if not norms:
            raise ValueError(
                f"experiments.{experiment} has no `norms`: only an experiment that lists "
                "norms (e.g. norms: [fro, max, spectral]) has an svm-geometry file"
            )
        return list(norms)

    def run_identities(self, pattern: str, experiment: str) -> dict:
        """Params of an aggregate job: input run file -> the identity it must hold. A
        `pattern` without {seed} names a table of every seed: its identity is each seed's."""
        out = {}
        names = dict(experiment=experiment, figure=experiment)
        for o in self.section(experiment)["optimizers"]:
            if "{seed}" in pattern:  # a file per seed: the real-data runs
                for s in self.seeds(experiment):
                    path = pattern.format(**names, optimizer=o, seed=s)
                    out[path] = self.identity("run", experiment, s, o)
            else:
                path = pattern.format(**names, optimizer=o)  # a table of every seed
                out[path] = self.seed_identities("run", experiment, o)
        return out

    # ---- the claims table --------------------------------------------------------------

    def joint(self) -> list[str]:
        """The default-build experiments that train u (the claims read u's margin)."""
        return [n for n, e in self.default.items() if e["layout"] == "joint"]

    def paper_figure(self, experiment: str) -> str | None:
        """The paper's figure an experiment reproduces ("Fig. 9"), None where it has none."""
        return self.experiments[experiment].get("paper_figure")

    def claims_settings(self) -> dict:
        """Claims params: what each experiment is, its optimizers' settings and labels, and
        the paper's figure it reproduces."""
        return {
            name: {
                "layout": e["layout"],
                "seeds": e["seeds"],
                "optimizers": {o: self.optimizer(name, o) for o in e["optimizers"]},
                "labels": {o: opt.get("label", o) for o, opt in e["optimizers"].items()},
                "paper_figure": self.paper_figure(name),
                "data": data_name(e["data"]["model"], e["data"].get("params", {})),
            }
            for name, e in self.default.items()
        }

    def claims_inputs(self, metrics, data, svm, final, names=None) -> dict:
        """Claims inputs, named by kind and experiment: metrics/<name>, data/<name>,
        svm/<name> and, for joint training, final/<name>/<optimizer> (scripts/claims.py
        reads them so); the arguments are the path patterns, `names` the experiments
        (default: the default build's)."""
        inputs = {}
        names = list(self.default) if names is None else names
        for n in names:
            for kind, pattern in [("metrics", metrics), ("data", data), ("svm", svm)]:
                inputs[f"{kind}/{n}"] = pattern.format(experiment=n)
        for n in (n for n in self.joint() if n in names):
            for o in self.experiments[n]["optimizers"]:
                inputs[f"final/{n}/{o}"] = final.format(experiment=n, optimizer=o)
        return inputs

    def claims_identities(self, metrics, svm, data, final, names=None) -> dict:
        """Claims params: input file -> its identity (a list of each seed's, for a file of
        every seed); the arguments are the path patterns, `names` as claims_inputs's."""
        out = {}
        for n in list(self.default) if names is None else names:
            out[metrics.format(experiment=n)] = self.identity("metrics", n)
            out[svm.format(experiment=n)] = self.seed_identities("svm", n)
            out[data.format(experiment=n)] = self.seed_identities("data", n)
            if n in self.joint():
                for o in self.experiments[n]["optimizers"]:
                    idents = self.seed_identities("run", n, o)
                    out[final.format(experiment=n, optimizer=o)] = [
                        dict(ident, kind="final") for ident in idents
                    ]
        return out

    # ---- the global-convergence study --------------------------------------------------

    def study_setting(self, setting: str) -> dict:
        """The data of one study setting (the common sizes and its knobs)."""
        return canonical({**self.study["data"], **self.study["settings"][setting]})

    def study_optimizer(self, optimizer: str) -> dict:
        return canonical(config_settings(self.study["optimizers"][optimizer]))

    def study_run_settings(self) -> dict:
        """What every study job runs: its starts, scales, iterations, success threshold,
        seed and logged points (global_convergence.study_table's keywords)."""
        keys = ("inits", "scales", "iterations", "threshold", "seed", "log_points")
        return canonical({key: self.study.get(key) for key in keys})

    def study_identity(self, kind: str, setting: str, optimizer: str) -> dict:
        """A study file's identity: its setting, optimizer and every study value it reads."""
        used = {
            "setting": self.study_setting(setting),
            "optimizer": self.study_optimizer(optimizer),
            "study": canonical(without(self.study, "data", "settings", "optimizers")),
            "device": self.config["device"],
        }
        ident = store.identity(kind, "global_convergence", used, optimizer=optimizer)
        return {**ident, "setting": setting}

    def study_identities(self, patterns: dict) -> dict:
        """Params of study_summary: input file -> its identity; `patterns`: kind -> path."""
        return {
            pattern.format(setting=s, optimizer=o): self.study_identity(kind, s, o)
            for kind, pattern in patterns.items()
            for s in self.study.get("settings", {})
            for o in self.study.get("optimizers", {})
        }

    def study_jobs(self) -> dict:
        study = self.study
        return {k: list(study.get(f"{k}s", {})) for k in ("setting", "optimizer")}

    def study_legend(self) -> dict:
        optimizers = self.study.get("optimizers", {})
        return {name: opt.get("label", name) for name, opt in optimizers.items()}

    # ---- the real-data part: what its identities read (the rest: workflow.real_config) ----

    def real_settings(self, experiment: str) -> dict:
        """What a real-data run depends on (not its title, the optimizers' labels or its
        jobs' threads)."""
        e = self.real_experiments[experiment]
        settings = without(e, "title", "optimizers", "threads", "sweep_of")
        if e["model"] != "vit_small":
            settings["model_path"] = self.real["models"][e["model"]]
        return canonical(settings)

    def _real_run(self, experiment: str, optimizer: str) -> dict:
        return {
            "experiment": self.real_settings(experiment),
            "optimizer": self.optimizer(experiment, optimizer),
            **{k: self.real[k] for k in ("data_root", "device", "autocast")},
        }

    def real_globals(self) -> dict:
        """The real-data settings that reach every real-data job (data root, models, device)."""
        return {k: self.real[k] for k in REAL_GLOBALS}
