"""Reading an svm-geometry file (results/svm_geometry/{experiment}.npz): the store's
checks, then each solution's KKT conditions (attnbias.svm.geometry)."""

from __future__ import annotations

from attnbias.svm import geometry
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
