"""The svm-geometry file (results/svm_geometry/{experiment}.npz: per seed s, seed{s}/W_<norm>,
each norm's attention-SVM solution, and seed{s}/W_<norm>_dual, its duals) read for a
geometry run: the store's checks (identity per seed, checksums), the file's seeds against
the data's, and each solution against its optimality conditions, recomputed from the
solution and its duals (attnbias.svm.norms.optimality_defect), as workflow/svm_file.py
reads an svm file."""

from __future__ import annotations

from types import SimpleNamespace

from attnbias.svm.norms import optimality_defect, parse_norm
from attnbias.workflow.npz import load_seeds
from attnbias.workflow.store import FileContractError, rebuild_hint


def entry(norm: str, part: str = "") -> str:
    """The file's entry of a norm's solution (W_<norm>) or of its `part` (W_<norm>_dual)."""
    return f"W_{norm}_{part}" if part else f"W_{norm}"


def load_solutions(
    path, data: dict[int, dict], norms: list[str], expect: list[dict] | None = None
) -> dict[int, dict[str, object]]:
    """{seed: {norm: W*_norm}} of an svm-geometry file, every norm of `norms` checked."""
    required = tuple(entry(norm, part) for norm in norms for part in ("", "dual"))
    groups = load_seeds(path, required, expect)
    if list(groups) != list(data):
        raise FileContractError(
            f"{path} holds seeds {list(groups)}, its data file seeds {list(data)}; "
            f"{rebuild_hint(path)}"
        )
    out = {}
    for seed, arrays in groups.items():
        out[seed] = {}
        for norm in norms:
            W_star = arrays[entry(norm)]
            stored = SimpleNamespace(solution=W_star, dual=arrays[entry(norm, "dual")])
            defect = optimality_defect(stored, data[seed]["X"], data[seed]["opt"], parse_norm(norm))
            if defect:
                raise FileContractError(
                    f"{path}: seed {seed}: {entry(norm)}: {defect}; {rebuild_hint(path)}"
                )
            out[seed][norm] = W_star
    return out
