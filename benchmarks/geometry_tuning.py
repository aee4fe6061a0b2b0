"""A geometry experiment's step lengths tried on its tuning seed: for each optimizer of the
config and each step length given, the final alignment of W_t with its expected norm's SVM
solution (and the best norm, the margin ratio and, with `tokens: selected`, the tokens the
run ends on), at a shorter horizon. The rule the config states: the best of 2 or 3 tried,
by that alignment (docs/geometry.md). Not part of any build: the tuning seed is never
reported, and docs/geometry.md records what this printed, dated.

Usage: python benchmarks/geometry_tuning.py EXPERIMENT ITERATIONS OPTIMIZER=LR[,LR...] ...
  e.g. python benchmarks/geometry_tuning.py geometry_cross 3000 nsd-max=0.01,0.03,0.1 gd=1
"""

from __future__ import annotations

import sys
import time

import yaml
from snakemake.utils import validate

from attnbias.data import models
from attnbias.optim.spec import spec_of
from attnbias.svm import geometry, max_margin
from attnbias.training.geometry_names import OPT_MOVED, TOKENS_LOCAL, metric_name
from attnbias.workflow import configcheck
from attnbias.workflow.svm_geometry_file import GeometrySVMs
from attnbias.workflow.train_job import train_seeds

SCHEMA = "workflow/schemas/config.schema.yaml"


def experiment(name: str) -> dict:
    """config/config.yaml's experiment `name`, checked and with its defaults."""
    config = yaml.safe_load(open("config/config.yaml"))
    schema = yaml.safe_load(open(SCHEMA))
    configcheck.check(config, schema)
    validate(config, SCHEMA, set_default=True)
    return config["experiments"][name]


def main(name: str, iterations: int, tries: list[str]) -> None:
    e = experiment(name)
    seed, norms, train_u = e["tuning_seed"], e["norms"], e["train"]["train_u"]
    data = models.generate(e["data"]["model"], seed, e["data"].get("params", {}))
    svm = max_margin.to_arrays(max_margin.solve_for_dataset(data, train_u, f"seed {seed}"))
    solutions, faces, _ = geometry.timed_solve(data, norms, train_u, f"seed {seed}")
    found = {seed: geometry.to_arrays(solutions, faces)}
    svms = GeometrySVMs.of(found, norms, train_u, None, e.get("tokens", "optimal"))
    train = dict(e["train"], iterations=iterations)
    for item in tries:
        opt, lrs = item.split("=")
        for lr in lrs.split(","):
            spec = spec_of(dict(e["optimizers"][opt], lr=float(lr)), real=False)
            norm = spec.implicit_norm()
            start = time.process_time()
            extra = svms.extra_metrics({seed: data}, [seed], spec)
            _, (metrics,), _, _ = train_seeds([data], [svm], train, spec, device="cpu",
                                              extra_metrics=extra)  # fmt: skip
            align = {n: float(metrics[metric_name("align", n)][-1]) for n in norms}
            ratio = float(metrics[metric_name("margin_ratio", norm)][-1]) if norm else float("nan")
            tokens = ""
            if TOKENS_LOCAL in metrics:
                tokens = (f"; {int(metrics[OPT_MOVED][-1])} sequence(s) not globally optimal, "
                          f"locally optimal {bool(metrics[TOKENS_LOCAL][-1])}")  # fmt: skip
            print(f"{opt} lr {lr}: align with {norm} {align.get(norm, float('nan')):.5f}, best "
                  f"{max(align, key=align.get)}; {norm} margin ratio {ratio:.3f}{tokens} "
                  f"({time.process_time() - start:.1f} CPU-s)", flush=True)  # fmt: skip
    print(svms.cache.summary())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
