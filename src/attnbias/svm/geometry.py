"""A dataset's SVMs under each norm of an experiment (attnbias.svm.norms), as the
svm-geometry file holds them: per norm, W_<norm> (d, d), the least-Frobenius-norm point of
its optimal face where the norm is not strictly convex (svm.canonical: a function of the
problem, not of the solver's path), its duals W_<norm>_dual (m,),
optimality residual W_<norm>_residual and the cosine of its least aligned optimal
alternative W_<norm>_face_cos (svm.uniqueness: 1 where the optimum is unique, NaN where
not probed); where u trains, the same for u_<norm> (d,), without the probe."""

from __future__ import annotations

import time

import numpy as np

from attnbias.model.queries import queries_of
from attnbias.svm import norms
from attnbias.svm.canonical import canonical
from attnbias.svm.uniqueness import face_cosine


def solve_w(data: dict, norm: str, name: str) -> norms.NormSVMSolution:
    """The W-SVM in `norm` of a dataset's tokens X and optimal tokens opt: its face's
    canonical point (svm.canonical)."""
    X, opt, Z = data["X"], data["opt"], queries_of(data)
    found = norms.solve_w_svm_norm(X, opt, norm, name=name, queries=Z)
    return canonical(found, X, opt, norm, name=name, queries=Z)


def solve_for_dataset(
    data: dict, norm_names: list[str], train_u: bool, name: str
) -> dict[str, norms.NormSVMSolution]:
    """{"W_<norm>": solution, ["u_<norm>": ...]} for a dataset of the data contract; each
    W-SVM its face's canonical point (svm.canonical)."""
    solutions = {}
    for norm in norm_names:
        solutions[f"W_{norm}"] = solve_w(data, norm, name)
        if train_u:
            solutions[f"u_{norm}"] = norms.solve_u_svm_norm(
                data["X"], data["y"], data["opt"], norm, name=name
            )
    return solutions


def face_cosines(
    data: dict, solutions: dict, norm_names: list[str], name: str = "dataset"
) -> dict[str, float]:
    """{norm: the face cosine of its W-SVM} (svm.uniqueness; `name` for its log lines), the
    probe reading the duals the SVM's solve found rather than solving it again."""
    X, opt, Z = data["X"], data["opt"], queries_of(data)
    faces = {}
    for n in norm_names:
        found = solutions[f"W_{n}"]
        faces[n] = face_cosine(X, opt, n, found.solution, Z, name=name, dual=found.dual)
    return faces


def timed_solve(data: dict, norm_names: list[str], train_u: bool, name: str):
    """solve_for_dataset and face_cosines ({key: solution}, {norm: cosine}), and the lines
    that describe each solution for the job's log."""
    start = time.perf_counter()
    solutions = solve_for_dataset(data, norm_names, train_u, name)
    faces = face_cosines(data, solutions, norm_names, name)
    lines = [
        f"{key}: norm {s.value:.6g}, {np.count_nonzero(s.dual > 1e-9 * s.dual.max())} "
        f"active of {len(s.dual)} constraints, KKT residual {s.optimality_residual:.2e}"
        + (f", face cosine {faces[key[2:]]:.4g}" if key.startswith("W_") else "")
        for key, s in solutions.items()
    ]
    lines.append(f"{len(solutions)} SVMs solved in {time.perf_counter() - start:.1f} s")
    return solutions, faces, lines


def keys(norm_names: list[str], train_u: bool) -> tuple[str, ...]:
    """The entries a seed of the file holds."""
    names = [f"W_{n}" for n in norm_names] + ([f"u_{n}" for n in norm_names] if train_u else [])
    solved = tuple(f"{key}{suffix}" for key in names for suffix in ("", "_dual", "_residual"))
    return solved + tuple(f"W_{n}_face_cos" for n in norm_names)


def to_arrays(
    solutions: dict[str, norms.NormSVMSolution], faces: dict[str, float]
) -> dict[str, np.ndarray]:
    arrays = {}
    for key, s in solutions.items():
        arrays[key] = s.solution
        arrays[f"{key}_dual"] = s.dual
        arrays[f"{key}_residual"] = np.array(s.optimality_residual)
    for norm, cosine in faces.items():
        arrays[f"W_{norm}_face_cos"] = np.array(cosine)
    return arrays


def defects(arrays: dict, data: dict, norm_names: list[str], train_u: bool) -> list[str]:
    """Why the solutions stored in `arrays` are not the SVMs of `data`, one line each;
    [] where each is optimal (norms.optimality_defect, from the solution and its duals)."""
    found = []
    for norm in norm_names:
        for what, y in [("W", None)] + ([("u", data["y"])] if train_u else []):
            key = f"{what}_{norm}"
            stored = norms.NormSVMSolution(arrays[key], arrays[f"{key}_dual"], None, None, None)
            defect = norms.optimality_defect(
                stored, data["X"], data["opt"], norm, y=y, queries=queries_of(data)
            )
            if defect:
                found.append(f"{key}: {defect}")
    return found
