"""Reading an svm-geometry file (results/svm_geometry/{experiment}.npz): the store's
checks, then each solution's KKT conditions (attnbias.svm.geometry); and what a geometry
run's measures are taken against (GeometrySVMs: the train jobs and the robustness points,
attnbias.studies.robustness_points, build their runs' measures alike through it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnbias.optim.expected_norm import expected_norm
from attnbias.svm import geometry
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
    decoder trains (then a run's optimal tokens follow it)."""

    norms: tuple[str, ...]
    train_u: bool
    solutions: dict[int, dict[str, np.ndarray]]
    faces: dict[int, dict[str, float]]

    @classmethod
    def load(cls, path, data: dict[int, dict], norms, train_u: bool, expect=None) -> GeometrySVMs:
        """An svm-geometry file's solutions (load_svm_geometry's checks)."""
        return cls.of(load_svm_geometry(path, data, list(norms), train_u, expect), norms, train_u)

    @classmethod
    def of(cls, found: dict[int, dict], norms, train_u: bool) -> GeometrySVMs:
        """From each seed's arrays as an svm-geometry file holds them (svm.geometry.to_arrays)."""
        solutions = {s: {n: arrays[f"W_{n}"] for n in norms} for s, arrays in found.items()}
        faces = {
            s: {n: float(arrays[f"W_{n}_face_cos"]) for n in norms} for s, arrays in found.items()
        }
        return cls(tuple(norms), train_u, solutions, faces)

    def extra_metrics(self, datasets: dict[int, dict], seeds: list[int], optimizer: dict):
        """train_job.train_seeds's extra_metrics for the runs of `optimizer` (its config
        settings) on `seeds` (keys of `datasets`, in the batch's order): each norm's
        measures (attnbias.training.geometry_measures), the SVMs of a new token set probed in the
        optimizer's expected norm."""
        return extra_metrics(
            [datasets[s] for s in seeds], [self.solutions[s] for s in seeds], list(self.norms),
            self.train_u, faces=[self.faces[s] for s in seeds],
            probe=tuple(n for n in (expected_norm(optimizer),) if n is not None),
        )  # fmt: skip
