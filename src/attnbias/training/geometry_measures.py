"""The measures of a geometry run, logged beside the training metrics (SPEC, "Beyond the
paper"): for each norm N of the experiment, with W*_N the attention SVM's solution in N,

  align_N         <W_t, W*_N> / (||W_t||_F ||W*_N||_F): the Frobenius alignment (1: same
                  direction)
  margin_N        min_{i, t != opt_i} (x_{i,opt_i} - x_{i,t})^T W_t z_i / ||W_t||_N (z_i the
                  query: x_{i,1}, or the data's Z; model.queries): the
                  normalized margin in N; its largest value over all W is 1 / ||W*_N||_N
  margin_ratio_N  margin_N * ||W*_N||_N: that margin as a fraction of its optimum (1 at W*_N)
  face_cos_N      the cosine with W*_N of the optimal solution least aligned with it
                  (svm.uniqueness: 1 where W*_N is unique; below UNIQUE_COSINE the
                  alignment with W*_N is not evidence); NaN where not probed
  centroid_align_N, centroid_margin_ratio_N
                  align_N and margin_ratio_N of the centroid of the norms' solutions,
                  C = sum_M W*_M / ||W*_M||_F: a direction that favours none of them. Where
                  C is already closest to W*_N, the SVMs' geometry alone ranks N first for
                  any direction in their middle, and a run's "own norm first" says less
                  (the claims report it beside the run's lead). One value per token set.

Which tokens are optimal (Def. 1) depends on the decoder. Where u trains, opt_i is that of
the run's own decoder at the logged iteration, opt_i(u_t) = argmax_t y_i u_t^T x_{i,t}, and
W*_N is the SVM of those tokens: solved once per distinct token set and dataset, and shared
by every job that meets it through svm.token_set_cache (OptimalTokens), the stored
solutions serving while the set is the data's. Two more measures say when it
moved (logged only where u trains):

  opt_moved          the number of sequences whose optimal token is not the data's
  opt_moved_samples  which: sum of 2^i over those sequences i (exact for n <= 53)

With `tokens="selected"` (a fixed decoder; the config's `tokens: selected`), opt_i is
instead the token the run's attention selects at the logged iteration, alpha_i = argmax_t
x_{i,t}^T W_t z_i (the data's opt_i where that maximum is tied, as at W = 0): at the last
iteration, the run's locally optimal tokens, whose SVMs the neighbours (Tarzanagh et al.,
Julistiono et al.) compare a run with. opt_moved then counts the sequences whose selected
token is not globally optimal (the data's opt), and one more measure says whether the
selected tokens pass Tarzanagh et al.'s local-optimality check (neighbours.local_tokens,
read on the set's Frobenius SVM):

  tokens_locally_optimal  1 if they do, 0 if not (one value per token set)

At W = 0 (the start of a run from W0 = 0) every measure is 0: no direction, no margin.
The training backends call `extra_metrics(W, u)` at every logged iteration with the batch's
parameters (W: (B, d, d), one run per seed); each measure comes back as (B,) values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from attnbias.model.queries import queries_of
from attnbias.svm import local_optimality
from attnbias.svm.max_margin import w_svm_constraints
from attnbias.svm.norm_values import norm_value, parse_norm
from attnbias.svm.token_set_cache import TokenSetCache
from attnbias.svm.uniqueness import needs_probe
from attnbias.training.geometry_names import (
    OPT_MOVED,
    OPT_MOVED_SAMPLES,
    TOKENS_LOCAL,
    metric_name,
)

# opt_moved_samples holds one bit per sequence in a float64's exact integers
MAX_SEQUENCES_IN_MASK = 53


def ratio(numerator, denominator) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (W = 0)."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator != 0)


def alignment(W: np.ndarray, W_star: np.ndarray) -> np.ndarray:
    """<W_b, W*_b> / (||W_b||_F ||W*_b||_F) for each run b of (B, d, d) batches."""
    inner = np.einsum("bij,bij->b", W, W_star)
    return ratio(inner, np.linalg.norm(W, axis=(1, 2)) * np.linalg.norm(W_star, axis=(1, 2)))


def smallest_constraint(W: np.ndarray, X: np.ndarray, opt: np.ndarray, queries=None) -> float:
    """min over i and t != opt_i of (x_{i,opt_i} - x_{i,t})^T W z_i (one run's W), z_i the
    queries (x_{i,1} where None)."""
    a, b = w_svm_constraints(X, opt, queries)
    return float(np.einsum("kd,de,ke->k", a, W, b).min())


def normalized_margins(W: np.ndarray, datasets: list[dict], norm: str, opts=None) -> np.ndarray:
    """Each run's smallest constraint value over its ||W||_norm: (B,); `opts`: each run's
    optimal tokens (None: the data's)."""
    parsed = parse_norm(norm)
    opts = [data["opt"] for data in datasets] if opts is None else opts
    smallest = [
        smallest_constraint(W_b, data["X"], opt, queries_of(data))
        for W_b, data, opt in zip(W, datasets, opts, strict=True)
    ]
    return ratio(smallest, [norm_value(W_b, parsed) for W_b in W])


def optimal_tokens(data: dict, u: np.ndarray) -> np.ndarray:
    """Def. 1 with the decoder u: argmax_t y_i u^T x_{i,t} per sequence, the data's opt_i
    where the best score is tied (u = 0 at the start of joint training: no token is
    optimal yet)."""
    gamma = data["y"][:, None] * (data["X"] @ u)
    best = np.argmax(gamma, axis=1)
    tied = np.sum(gamma == gamma.max(axis=1, keepdims=True), axis=1) > 1
    return np.where(tied, data["opt"], best)


def selected_tokens(data: dict, W: np.ndarray) -> np.ndarray:
    """The tokens the attention selects at W, argmax_t x_{i,t}^T W z_i per sequence, the
    data's opt_i where that maximum is tied (W = 0: no token is selected yet)."""
    scores = local_optimality.attention_scores(data, W)
    tied = np.sum(scores == scores.max(axis=1, keepdims=True), axis=1) > 1
    return np.where(tied, data["opt"], np.argmax(scores, axis=1))


def locally_optimal(data: dict, opt: np.ndarray, W_star: np.ndarray) -> bool:
    """Tarzanagh et al.'s check of the tokens `opt` (svm.local_optimality.check) on the
    support of the W-SVM W_star of the run's own norm (theirs: the Frobenius one for W; for
    K Q^T the nuclear one), with the data's fixed decoder u."""
    support = SimpleNamespace(
        margins=local_optimality.margins(data, opt, W_star)
    )  # all check reads
    return local_optimality.check(data, opt, support).locally_optimal


@dataclass(frozen=True)
class TokenSetSVMs:
    """One token set's SVM solution per norm, its face cosine, its optimal value
    ||W*_N||_N and the centroid's measures (formed once per set, not at every logged
    iteration)."""

    stars: dict[str, np.ndarray]
    faces: dict[str, float]
    optima: dict[str, float]
    centroid: dict[str, float]  # metric name -> the centroid's value
    local: float = np.nan  # tokens: selected: 1 if locally optimal, 0 if not (else NaN)

    @classmethod
    def of(cls, stars: dict, faces: dict, data: dict, opt: np.ndarray,
           local: float = np.nan) -> TokenSetSVMs:  # fmt: skip
        optima = {norm: norm_value(W, parse_norm(norm)) for norm, W in stars.items()}
        C = sum(W / np.linalg.norm(W) for W in stars.values())[None]
        centroid = {}
        for norm, W in stars.items():
            margin = normalized_margins(C, [data], norm, [opt])[0]
            centroid[metric_name("centroid_align", norm)] = float(alignment(C, W[None])[0])
            centroid[metric_name("centroid_margin_ratio", norm)] = float(margin * optima[norm])
        return cls(stars, faces, optima, centroid, local)


class OptimalTokens:
    """Each run's SVM solutions for the tokens optimal under its current decoder, with
    their face cosines: the stored ones for the data's tokens, the others from `cache`
    (solved there on first sight, in this job or another: svm.token_set_cache) and kept
    (their face probed in the `probe` norms only, and known for the strictly convex ones:
    a probe costs a solve or more, and the claims read the expected norm's)."""

    def __init__(self, datasets, solutions, faces, norms: list[str], probe: list[str],
                 cache: TokenSetCache | None = None, check_local: bool = False,
                 own: str = "fro"):  # fmt: skip
        self.datasets, self.norms, self.probe = datasets, norms, probe
        self.cache = TokenSetCache() if cache is None else cache
        self.check_local = check_local  # tokens: selected (then each set is checked)
        self.own = own  # the norm whose SVM's support the check reads
        self.solved = [
            {tuple(data["opt"]): self._svms(sol, face, data, f"run {run}")}
            for run, (data, sol, face) in enumerate(zip(datasets, solutions, faces, strict=True))
        ]

    def _svms(self, stars: dict, faces: dict, data: dict, name: str) -> TokenSetSVMs:
        local = np.nan
        if self.check_local:
            own = self.own
            W_own = stars[own] if own in stars else self.cache.w_star(data, own, name)
            local = float(locally_optimal(data, data["opt"], W_own))
        return TokenSetSVMs.of(stars, faces, data, data["opt"], local)

    def solutions(self, run: int, opt: np.ndarray) -> TokenSetSVMs:
        """The SVMs of run `run` with the optimal tokens `opt`."""
        key = tuple(int(t) for t in opt)
        if key not in self.solved[run]:
            data = dict(self.datasets[run], opt=np.asarray(opt))
            whose = "selected by its attention" if self.check_local else "of its trained decoder"
            name = f"run {run} with the optimal tokens {whose}"
            svms = {norm: self.cache.w_svm(data, norm, name) for norm in self.norms}
            stars = {norm: W for norm, (W, _) in svms.items()}
            faces = dict.fromkeys(self.norms, np.nan)
            for norm in self.norms:  # unique where strictly convex: nothing to solve
                if not needs_probe(norm) or norm in self.probe:
                    W, dual = svms[norm]
                    faces[norm] = self.cache.face_cosine(data, norm, W, name, dual=dual)
            self.solved[run][key] = self._svms(stars, faces, data, name)
        return self.solved[run][key]


def moved_mask(moved: np.ndarray) -> float:
    """sum of 2^i over the sequences i that moved."""
    return float(sum(2.0**i for i in np.flatnonzero(moved)))


def extra_metrics(
    datasets: list[dict],
    solutions: list[dict[str, np.ndarray]],
    norms: list[str],
    train_u: bool = False,
    faces: list[dict[str, float]] | None = None,
    probe: tuple[str, ...] = (),
    cache: TokenSetCache | None = None,
    tokens: str = "optimal",
    own: str | None = None,
) -> Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]]:
    """The measures of a batch of runs as the backends' extra_metrics hook.

    datasets: each run's data (X, y, opt); solutions: each run's {norm: W*_norm} for the
    data's optimal tokens, `faces` their face cosines (None: not probed); norms: the
    experiment's norm names (attnbias.svm.norms); train_u: whether the decoder trains (then
    the optimal tokens follow it, and `probe` names the norms whose new SVMs are probed);
    cache: where a new token set's SVMs are read or solved (None: in this job only);
    tokens: "optimal" (the data's, or the decoder's where u trains) or "selected" (each
    run's attention's, fixed decoder only: see the module doc); own: the optimizer's
    expected norm, whose SVM's support the local-optimality check of a selected token set
    reads (None: the Frobenius one, as Tarzanagh et al. for W)."""
    selected = tokens == "selected"
    if selected and train_u:
        raise ValueError("tokens 'selected' reads the data's fixed decoder: u must not train")
    if tokens not in ("optimal", "selected"):
        raise ValueError(f"tokens must be 'optimal' or 'selected', got {tokens!r}")
    n = len(datasets[0]["X"])
    if (train_u or selected) and n > MAX_SEQUENCES_IN_MASK:
        raise ValueError(
            f"a geometry experiment with u trained logs which of its n sequences moved in one "
            f"number: n = {n} is above {MAX_SEQUENCES_IN_MASK}"
        )
    if faces is None:
        faces = [dict.fromkeys(norms, np.nan) for _ in datasets]
    sets = OptimalTokens(datasets, solutions, faces, norms, list(probe), cache, selected,
                         own or "fro")  # fmt: skip

    def measure(W: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        W, u = np.asarray(W, dtype=float), np.asarray(u, dtype=float)
        out = {}
        if train_u or selected:
            opts = [
                selected_tokens(data, W_b) if selected else optimal_tokens(data, u_b)
                for data, W_b, u_b in zip(datasets, W, u, strict=True)
            ]
            moved = [opt != data["opt"] for opt, data in zip(opts, datasets, strict=True)]
            out[OPT_MOVED] = np.array([float(m.sum()) for m in moved])
            out[OPT_MOVED_SAMPLES] = np.array([moved_mask(m) for m in moved])
        else:
            opts = [data["opt"] for data in datasets]
        current = [sets.solutions(b, opt) for b, opt in enumerate(opts)]
        if selected:
            out[TOKENS_LOCAL] = np.array([svms.local for svms in current])
        for norm in norms:
            stars = np.stack([svms.stars[norm] for svms in current])
            out[metric_name("face_cos", norm)] = np.array([svms.faces[norm] for svms in current])
            optima = np.array([svms.optima[norm] for svms in current])
            margin = normalized_margins(W, datasets, norm, opts)
            out[metric_name("align", norm)] = alignment(W, stars)
            out[metric_name("margin", norm)] = margin
            out[metric_name("margin_ratio", norm)] = margin * optima
        for name in current[0].centroid:
            out[name] = np.array([svms.centroid[name] for svms in current])
        return out

    return measure
