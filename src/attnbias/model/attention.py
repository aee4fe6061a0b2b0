"""The one-layer self-attention model, its forward quantities in log space.

f(X; W, u) = u^T X^T softmax(X W z): the query z is the first token x_1 (self-attention),
or the data's own query z_i where they carry `Z` (cross-attention; attnbias.model.queries).
Token scores gamma_{i,t} = y_i u^T x_{i,t}; opt_i is the optimal token of sequence i.

Tensors carry a leading run dimension B (independent runs, e.g. seeds, trained in one
batch): X (B, n, T, d), y (B, n), opt (B, n), u (B, d).

W is kept as W = W0 + A Q with Q (n, d) the queries z_i as rows and A (B, d, n).
Every gradient in W is a sum of outer products v_i z_i^T, so every optimizer here
keeps W in this form, and a step costs O(n^2 d + n T d) instead of O(n d^2).

These quantities equal those of attnbias.model.reference (the paper's equations written plainly:
scores, softmax_attention, model, attended_tokens) up to rounding wherever the reference is
finite; tests/model/test_reference.py checks it to 1e-10 relative. They are written in logs
because the plain forms fail silently as the attention saturates: delta = sum_t a_t
(gamma_opt - gamma_t) is formed from log a_t, since gamma_opt - sum_t a_t gamma_t rounds
to exactly gamma_opt once the attention off the optimal token is below ~1e-16, which NGD
(lr 0.1) reaches on Example 1 after about 1,200 steps. Plain float64 autograd then
gives a wrong NGD direction without any warning: on Example 1 (n = 20, T = 5, d = 100,
seed 0, lr 0.1) its 1 - cos(W_t, W_mm) is 0.13 at t = 2000, where the stable run is at
3.3e-4 (docs/model.md, "Why logs").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnbias.model.arrays import log_softmax
from attnbias.model.delta import delta_in_logs
from attnbias.model.queries import stacked_queries


@dataclass
class Problem:
    """One batch of B training problems of equal shape, on one device."""

    X: torch.Tensor  # (B, n, T, d)
    y: torch.Tensor  # (B, n)
    opt: torch.Tensor  # (B, n) int64
    W0: torch.Tensor  # (B, d, d)
    u0: torch.Tensor  # (B, d): the fixed decoder, or the initial one when u is trained
    Q: torch.Tensor  # (B, n, d) queries z_i: the data's Z, else x_{i,1} (model.queries)
    Gq: torch.Tensor  # (B, n, n) Q Q^T
    W0q: torch.Tensor  # (B, n, d) W0 z_i

    @classmethod
    def from_arrays(cls, datasets: list[dict], *, device="cpu", dtype=torch.float64) -> Problem:
        """Stack datasets (dicts of the data file contract) into one batch."""
        shapes = {tuple(np.shape(ds["X"])) for ds in datasets}
        if len(shapes) != 1:
            raise ValueError(f"datasets in one batch must share (n, T, d); got {sorted(shapes)}")

        def stack(key, **kw):
            return torch.as_tensor(np.stack([ds[key] for ds in datasets]), device=device, **kw)

        X = stack("X", dtype=dtype)
        d = X.shape[-1]
        u0 = torch.stack(
            [
                torch.as_tensor(ds["u"], dtype=dtype, device=device)
                if "u" in ds
                else torch.zeros(d, dtype=dtype, device=device)
                for ds in datasets
            ]
        )
        W0 = stack("W0", dtype=dtype)
        Z = stacked_queries(datasets)  # cross-attention's queries, None without (model.queries)
        Q = X[:, :, 0, :] if Z is None else torch.as_tensor(Z, dtype=dtype, device=device)
        return cls(
            X=X,
            y=stack("y", dtype=dtype),
            opt=stack("opt", dtype=torch.int64),
            W0=W0,
            u0=u0,
            Q=Q,
            Gq=Q @ Q.transpose(1, 2),
            W0q=Q @ W0.transpose(1, 2),
        )

    @property
    def n(self) -> int:
        return self.X.shape[1]

    def zero_coordinates(self) -> torch.Tensor:
        """A = 0, i.e. W = W0."""
        B, n, _, d = self.X.shape
        return self.X.new_zeros(B, d, n)

    def W(self, A: torch.Tensor) -> torch.Tensor:
        """Materialise W = W0 + A Q, (B, d, d)."""
        return self.W0 + A @ self.Q

    def W_queries(self, A: torch.Tensor) -> torch.Tensor:
        """W z_i for every sequence, (B, n, d), without forming W."""
        return self.W0q + (A @ self.Gq).transpose(1, 2)

    def coordinate_sq_norm(self, dA: torch.Tensor) -> torch.Tensor:
        """||dA Q||_F^2 from the coordinates, (B,)."""
        return ((dA.transpose(1, 2) @ dA) * self.Gq).sum(dim=(1, 2))


@dataclass
class TokenScores:
    """Token scores at a decoder u; constant over training when u is fixed."""

    gamma: torch.Tensor  # (B, n, T) y u^T x_t
    gamma_opt: torch.Tensor  # (B, n)
    gap: torch.Tensor  # (B, n, T) gamma_opt - gamma_t (0 at opt)
    log_abs_gap: torch.Tensor  # (B, n, T) log|gap|
    gap_sign: torch.Tensor  # (B, n, T)
    opt_is_best: bool  # every gap >= 0: delta >= 0 and needs no signed sums


def token_scores(problem: Problem, u: torch.Tensor, *, check_order: bool = True) -> TokenScores:
    """Scores at u. Without `check_order` (u changes every step) assume gaps of both signs."""
    gamma = problem.y.unsqueeze(-1) * (problem.X @ u[:, None, :, None]).squeeze(-1)
    gamma_opt = gamma.gather(-1, problem.opt.unsqueeze(-1)).squeeze(-1)
    gap = gamma_opt.unsqueeze(-1) - gamma
    return TokenScores(gamma, gamma_opt, gap, gap.abs().log(), gap.sign(), bool((gap >= 0).all()))


@dataclass
class Forward:
    """Forward quantities of a batch at (W, u), all per run and sequence."""

    scores: TokenScores
    log_attn: torch.Tensor  # (B, n, T) log softmax(X W x_1)
    attn: torch.Tensor  # (B, n, T)
    log_abs_delta: torch.Tensor  # (B, n) log|delta|
    delta_sign: torch.Tensor  # (B, n) sign of delta, right also where delta underflows to 0
    delta: torch.Tensor  # (B, n) delta = sum_t a_t (gamma_opt - gamma_t), signed
    margin: torch.Tensor  # (B, n) y f(X) = gamma_opt - delta
    x_bar: torch.Tensor  # (B, n, d) attention-weighted token mean sum_t a_t x_t


def forward(problem: Problem, A: torch.Tensor, scores: TokenScores) -> Forward:
    """Forward pass at W = W0 + A Q and the decoder whose `scores` are given."""
    logits = (problem.X @ problem.W_queries(A).unsqueeze(-1)).squeeze(-1)
    log_attn = log_softmax(torch, logits)
    attn = log_attn.exp()
    log_abs_delta, sign, delta = delta_in_logs(
        torch, log_attn, scores.log_abs_gap, scores.gap_sign, signed=not scores.opt_is_best
    )
    x_bar = (attn.unsqueeze(-2) @ problem.X).squeeze(-2)
    return Forward(
        scores=scores,
        log_attn=log_attn,
        attn=attn,
        log_abs_delta=log_abs_delta,
        delta_sign=sign,
        delta=delta,
        margin=scores.gamma_opt - delta,
        x_bar=x_bar,
    )
