"""Whether a run's tokens are locally optimal (Tarzanagh et al.'s check; its statement:
neighbours.local_tokens), from a W-SVM already solved: the attention's scores, the
decoder's token scores, the constraints' index and margins, and the check itself. Below
training and neighbours, so that the geometry measures (training) and the neighbours'
runs read one check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# a constraint is active when its margin is within this of 1, relative: svm.norms checks
# its solutions' KKT conditions to 1e-6, so margins are known to about that
ACTIVE_TOLERANCE = 1e-6


def attention_scores(data: dict, W: np.ndarray) -> np.ndarray:
    """x_{i,t}^T W z_i (n, T), z_i = Z's row i (cross-attention) or x_{i,1}."""
    X = np.asarray(data["X"], float)
    queries = np.asarray(data["Z"], float) if "Z" in data else X[:, 0]
    return np.einsum("ntd,de,ne->nt", X, np.asarray(W, float), queries)


def token_scores(data: dict, decoder: np.ndarray | None = None) -> np.ndarray:
    """gamma_{i,t} = y_i v^T x_{i,t} (n, T) of `decoder` (default: the data's fixed u)."""
    if decoder is None:
        if "u" not in data:
            raise ValueError(
                "token scores need a decoder: these data train u, so pass the run's final u"
            )
        decoder = data["u"]
    return np.asarray(data["y"], float)[:, None] * (np.asarray(data["X"], float) @ decoder)


@dataclass(frozen=True)
class TokenCheck:
    """Tarzanagh et al.'s check of one run's selected tokens (see the module doc)."""

    tokens: np.ndarray  # alpha (n,)
    support: tuple[np.ndarray, ...]  # T_i: the active constraints' tokens, per sample
    violations: tuple[tuple[int, int], ...]  # (i, t): t in T_i scoring >= alpha_i's
    globally_optimal: bool  # every alpha_i a best-scoring token of its sample
    svm_norm: str  # the norm of the W-SVM whose support was read

    @property
    def locally_optimal(self) -> bool:
        return not self.violations

    def verdict(self) -> str:
        """One phrase for a table or caption."""
        if self.globally_optimal:
            return "globally optimal tokens"
        if self.locally_optimal:
            return "locally (not globally) optimal tokens"
        pairs = ", ".join(f"sample {i + 1} token {t + 1}" for i, t in self.violations)
        return f"not locally optimal: support tokens outscore the selected ones ({pairs})"


def constraint_index(tokens: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """(i_k, t_k) of each constraint k, in svm.norms' order (sample-major, t ascending,
    t != alpha_i)."""
    tokens = np.asarray(tokens, np.int64)
    others = np.arange(T)[None, :] != tokens[:, None]
    samples, positions = np.nonzero(others)
    return samples, positions


def margins(data: dict, tokens, W: np.ndarray) -> np.ndarray:
    """(x_{i,alpha_i} - x_{i,t})^T W z_i for every constraint, in svm.norms' order."""
    X = np.asarray(data["X"], float)
    queries = np.asarray(data["Z"], float) if "Z" in data else X[:, 0]
    tokens = np.asarray(tokens, np.int64)
    samples, positions = constraint_index(tokens, X.shape[1])
    a = X[samples, tokens[samples]] - X[samples, positions]
    return np.einsum("kd,de,ke->k", a, W, queries[samples])


def check(data: dict, tokens, solution, *, decoder: np.ndarray | None = None,
          norm: str = "fro") -> TokenCheck:  # fmt: skip
    """Tarzanagh et al.'s check of `tokens` (one per sample) on `data` (neighbours
    .local_tokens' doc), with the support of `solution`, the W-SVM of those tokens in `norm`
    (anything with its constraints' `margins`, in svm.norms' order), and the scores of
    `decoder` (default the data's u)."""
    tokens = np.asarray(tokens, np.int64)
    gamma = token_scores(data, decoder)
    samples, positions = constraint_index(tokens, gamma.shape[1])
    active = solution.margins <= 1.0 + ACTIVE_TOLERANCE
    rows = np.arange(len(tokens))
    chosen = gamma[rows, tokens]
    support = tuple(positions[active & (samples == i)] for i in rows)
    violations = tuple(
        (int(i), int(t)) for i in rows for t in support[i] if gamma[i, t] >= chosen[i]
    )
    best = bool(np.all(chosen >= gamma.max(axis=1)))
    return TokenCheck(tokens, support, violations, best, norm)
