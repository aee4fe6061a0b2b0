"""The workflow's reading of the real-data part of the config (`real_data`): its figures,
what a real-data job needs (datasets, model, threads), the token-similarity figures' jobs,
and what the claims read of the real-data tables this build holds.

Apart from WorkflowConfig (attnbias.workflow.config), which it reads: what every
experiment shares, synthetic or real (settings, file identities), stays there.
"""

from __future__ import annotations

import os

from attnbias.workflow import tuning_record
from attnbias.workflow.config import WorkflowConfig, canonical


class RealDataConfig:
    """The real-data figures of a validated config (WorkflowConfig.real)."""

    def __init__(self, wf: WorkflowConfig):
        self.wf = wf
        self.real = wf.real

    def real_figures(self) -> list[str]:
        """The real-data figures' names: the trained ones, then the token-similarity ones."""
        return list(self.wf.real_experiments) + self.similarity_figures()

    def similarity_figures(self) -> list[str]:
        """The token-similarity figures (Fig. 10 and its variants) that have samples."""
        return [name for name, s in self.real["similarity"].items() if s["samples"]]

    def real_scale(self, experiment: str) -> str:
        """A real-data run's model and size in words: what the claims' "where" names."""
        e = self.wf.real_experiments[experiment]
        train = e["train"]
        size = f"{train['train_samples']:,} train" if train.get("train_samples") else "full"
        return f"{e['model']}, {size}, {train['epochs']} epoch(s) of batch {train['batch_size']}"

    def claimed_real_experiments(self) -> list[str]:
        """The real-data experiments the claims read: not a learning-rate sweep (`sweep_of`),
        which records a figure's rates, not a verdict."""
        return [n for n, e in self.wf.real_experiments.items() if "sweep_of" not in e]

    def claims_real(self, experiment: str, record: str) -> dict:
        """What the claims read of a real-data experiment besides its table; `record`: the
        sweeps' records (a pattern of {figure}: tuning)."""
        e = self.wf.real_experiments[experiment]
        tuning = self.tuning(experiment, record)
        return {
            "layout": "real",
            "dataset": e["dataset"],
            "scale": self.real_scale(experiment),
            "seeds": e["seeds"],
            "tuning": tuning_record.words(tuning),
            # the constants its rows name (claims.real_constants; the horizon: its table's)
            "chosen_by": tuning,
            "probe_samples": e["train"].get("probe_samples", 0),
            "optimizers": {o: self.wf.optimizer(experiment, o) for o in e["optimizers"]},
            "labels": {o: opt.get("label", o) for o, opt in e["optimizers"].items()},
            "paper_figure": None,
            "identity": self.wf.identity("metrics", experiment),
        }

    def tuning(self, experiment: str, record: str) -> dict:
        """Where a figure's settings were chosen, checked against its sweeps' records
        (`record`, results/{figure}_final.csv, read where built: workflow.tuning_record):
        {seed, sweeps, rule} (the tuning seed, the sweeps that run on it,
        real_data.tuning.rule) and the check's state, records, choice and mismatches; {}
        where no sweep tunes them. Read at planning time: the jobs' params."""
        e = self.wf.real_experiments[experiment]
        sweeps = [n for n, s in self.wf.real_experiments.items() if s.get("sweep_of") == experiment]
        if e.get("tuning_seed") is None or not sweeps:
            return {}
        rule = self.real.get("tuning", {}).get("rule", "probe_area")
        checked = tuning_record.check(e["optimizers"], sweeps, record)
        return {"seed": e["tuning_seed"], "sweeps": sweeps, "rule": rule, **checked}

    def claims_real_built(self, table: str, record: str) -> dict:
        """Claims params: what the claims read of each real-data experiment whose aggregate
        table (`table`, a pattern of {figure}) this build holds; the others are "not
        measured"; `record`: the sweeps' records (tuning). Params, not inputs: the claims
        never ask for a real-data training job, and a table or sweep record that appears
        reruns the claims job only."""
        built = {}
        for name in self.claimed_real_experiments():
            if os.path.exists(path := table.format(figure=name)):
                built[name] = {**self.claims_real(name, record), "table": path}
        return built

    def claims_similarity_built(self, table: str) -> dict:
        """Claims params, as claims_real_built: each token-similarity panel's histogram table
        (`table`, a pattern of {figure} and {dataset}) this build holds."""
        return {
            f"{figure}/{dataset}": {**self.claims_similarity(figure, dataset), "table": path}
            for figure in self.similarity_figures()
            for dataset in self.similarity_section(figure)["samples"]
            if os.path.exists(path := table.format(figure=figure, dataset=dataset))
        }

    def claims_similarity(self, figure: str, dataset: str) -> dict:
        """What the claims read of one panel (dataset) of a token-similarity figure."""
        s = self.real["similarity"][figure]
        return {
            "layout": "similarity",
            "figure": figure,
            "dataset": dataset,
            "scale": f"{s['model']} token embeddings",
            "optimizers": {},
            "paper_figure": None,
        }

    def real_threads(self, figure: str) -> int:
        """A real-data training job's CPU threads: its figure's, else real_data.threads."""
        return self.wf.real_experiments[figure].get("threads", self.real["threads"])

    def real_needs(self, figure: str) -> dict:
        """The datasets and the model (path or hub name) a real-data figure needs."""
        if figure in self.real["similarity"]:
            similarity = self.real["similarity"][figure]
            model = self.real["models"][similarity["model"]]
            return {"datasets": sorted(similarity["samples"]), "model": model}
        e = self.wf.real_experiments[figure]
        model = None if e["model"] == "vit_small" else self.real["models"][e["model"]]
        split = {k: e["train"].get(f"{k}_samples") for k in ("train", "test")}
        return {"datasets": [e["dataset"]], "model": model, "split": split}

    def similarity_settings(self, figure: str, dataset: str) -> dict:
        s = self.real["similarity"][figure]
        return canonical(
            {
                "model_path": self.real["models"][s["model"]],
                "samples": s["samples"][dataset],
                **{k: s[k] for k in ("seed", "max_length", "band")},
            }
        )

    def similarity_section(self, figure: str) -> dict:
        return self.real["similarity"][figure]

    def similarity_title(self, figure: str) -> str:
        return self.similarity_section(figure)["title"]

    def similarity_config(self, figure: str) -> dict:
        similarity = {figure: self.real["similarity"][figure]}
        return canonical({"real_data": {**self.wf.real_globals(), "similarity": similarity}})
