"""Reading an svm-geometry file (results/svm_geometry/{experiment}.npz): the store's
checks, then each solution's KKT conditions (attnbias.svm.geometry); and what a geometry
run's measures are taken against (GeometrySVMs: the train jobs and the robustness points,
attnbias.studies.robustness_points, build their runs' measures alike through it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnbias.svm import geometry, token_set_cache
from attnbias.svm.token_set_cache import TokenSetCache
from attnbias.training.geometry_measures import extra_metrics
from attnbias.workflow.npz import load_seeds
from attnbias.workflow.svm_file import check_seeds


def load_svm_geometry(
    path,
    data: dict[int, dict],
    norm_names: list[str],
    train_u: bool,
    expect: list[dict] | None = None,
) -> dict[int, dict]:
    """{seed: W_<norm>, ...} of an svm-geometry file, checked against its identities, and
    each solution against its seed's data: its KKT conditions, recomputed from the stored
    solution and duals (attnbias.svm.norms.optimality_defect), hold."""
    solutions = load_seeds(path, geometry.keys(norm_names, train_u), expect)
    check_seeds(
        path,
        solutions,
        data,
        lambda arrays, seed_data: geometry.defects(arrays, seed_data, norm_names, train_u),
    )
    return solutions


@dataclass(frozen=True)
class GeometrySVMs:
    """A geometry experiment's SVM solution in each of its norms and each seed's face
    cosines (seed -> {norm: ...}), from its svm-geometry file; `train_u`: whether its
    decoder trains (then a run's optimal tokens follow it); `cache`: where the SVMs of the
    other token sets its runs meet are shared (svm.token_set_cache)."""

    norms: tuple[str, ...]
    train_u: bool
    solutions: dict[int, dict[str, np.ndarray]]
    faces: dict[int, dict[str, float]]
    cache: TokenSetCache = field(default_factory=TokenSetCache)
    tokens: str = "optimal"  # or "selected": each run's attention's (training.geometry_measures)

    @classmethod
    def load(cls, path, data: dict[int, dict], norms, train_u: bool, expect=None,
             tokens: str = "optimal") -> GeometrySVMs:  # fmt: skip
        """An svm-geometry file's solutions (load_svm_geometry's checks), the other token
        sets' SVMs shared in the folder token_sets/ beside it (every job of the results
        folder that reads an svm-geometry file: train jobs, robustness points)."""
        found = load_svm_geometry(path, data, list(norms), train_u, expect)
        cache = TokenSetCache(Path(path).parent / token_set_cache.FOLDER)
        return cls.of(found, norms, train_u, cache, tokens)

    @classmethod
    def of(cls, found: dict[int, dict], norms, train_u: bool, cache=None,
           tokens: str = "optimal") -> GeometrySVMs:  # fmt: skip
        """From each seed's arrays as an svm-geometry file holds them (svm.geometry.to_arrays);
        `cache` None: the token sets' SVMs kept in this process only."""
        solutions = {s: {n: arrays[f"W_{n}"] for n in norms} for s, arrays in found.items()}
        faces = {
            s: {n: float(arrays[f"W_{n}_face_cos"]) for n in norms} for s, arrays in found.items()
        }
        return cls(tuple(norms), train_u, solutions, faces, cache or TokenSetCache(), tokens)

    def extra_metrics(self, datasets: dict[int, dict], seeds: list[int], spec):
        """train_job.train_seeds's extra_metrics for the runs of `spec` (the optimizer's
        OptimizerSpec) on `seeds` (keys of `datasets`, in the batch's order): each norm's
        measures (attnbias.training.geometry_measures), the SVMs of a new token set probed in the
        optimizer's expected norm, and a selected set checked on that norm's support."""
        return extra_metrics(
            [datasets[s] for s in seeds], [self.solutions[s] for s in seeds], list(self.norms),
            self.train_u, faces=[self.faces[s] for s in seeds],
            probe=tuple(n for n in (spec.implicit_norm(),) if n is not None),
            cache=self.cache, tokens=self.tokens, own=spec.implicit_norm(),
        )  # fmt: skip
