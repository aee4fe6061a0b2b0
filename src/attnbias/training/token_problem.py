"""The training problem in token coordinates: the compiled kernel's state and its meaning.

Every gradient in W is sum_j v_j z_j^T with v_j a combination of the tokens of sequence j
(gradients.w_gradient) and z_j its query (x_{j,1}, or the data's Z: model.queries), so
W = W0 + sum_{j,s} beta_{js} x_{js} z_j^T for a vector beta of n T coordinates (finer than
attention.Problem's A = sum_s beta_js x_js). With K = the tokens' Gram matrix and Gq = the
queries' one, P[(i,t),(j,s)] = K[it,js] Gq[i,j]:

  logits  x_it^T W z_i = l0_it + (P beta)_it        (l0: the logits at W0)
  ||grad||^2 of a step c in these coordinates = c^T P c / n^2
  ||W||^2 = ||W0||^2 + 2 beta . l0 + beta^T P beta,  <W, W_mm> = <W0, W_mm> + beta . m

so a step costs one (nT x nT) product P c (two with u trained: u = u0 + sum mu_js x_js and
K e for its step) and O(nT) exp/log, whatever d is. The kernel keeps the logits z = P beta
and the decoder's scores k = K mu with the state (z -= h P c), never recomputed; W and u
are materialised only at a logged iteration, for the metrics.
"""

from __future__ import annotations

import numpy as np

from attnbias.model.arrays import log_softmax
from attnbias.model.delta import delta_in_logs
from attnbias.model.queries import query_rows, stacked_queries


class TokenProblem:
    """A batch of B problems of equal (n, T, d) in token coordinates (see the module doc).

    Built from datasets of the data file contract (X, y, opt, W0, [u], [Z]), or with W0s: one
    dataset and B initial matrices (the study), which then share P and K.
    """

    def __init__(self, datasets: list[dict], W0s: np.ndarray | None = None):
        shapes = {tuple(np.shape(ds["X"])) for ds in datasets}
        if len(shapes) != 1:
            raise ValueError(f"datasets in one batch must share (n, T, d); got {sorted(shapes)}")
        X = np.stack([np.asarray(ds["X"], dtype=np.float64) for ds in datasets])
        _, n, T, d = X.shape
        if W0s is None:
            W0 = np.stack([np.asarray(ds["W0"], dtype=np.float64) for ds in datasets])
        else:
            if len(datasets) != 1:
                raise ValueError("W0s: one dataset, many initial matrices")
            W0 = np.asarray(W0s, dtype=np.float64)
            X = np.broadcast_to(X, (len(W0), n, T, d))
            datasets = datasets * len(W0)
        self.B, self.n, self.T, self.d = len(W0), n, T, d
        self.X = X
        self.y = np.stack([np.asarray(ds["y"], dtype=np.float64) for ds in datasets])
        self.opt = np.stack([np.asarray(ds["opt"], dtype=np.int64) for ds in datasets])
        self.u0 = np.stack(
            [np.asarray(ds["u"], dtype=np.float64) if "u" in ds else np.zeros(d) for ds in datasets]
        )
        self.W0 = W0
        # the queries z_i (B, n, d): the data's Z (cross-attention), else x_i1 (model.queries)
        self.Q = query_rows(X, stacked_queries(datasets))
        shared = W0s is not None  # one dataset: P and K once
        Xs = X[:1] if shared else X
        Qs = self.Q[:1] if shared else self.Q
        tokens = Xs.reshape(len(Xs), n * T, d)
        self.K = np.ascontiguousarray(tokens @ tokens.transpose(0, 2, 1))  # (B|1, nT, nT)
        Gq = Qs @ Qs.transpose(0, 2, 1)
        self.P = np.ascontiguousarray(self.K * np.repeat(np.repeat(Gq, T, axis=1), T, axis=2))
        # logits at W0: x_it^T W0 z_i, and the decoder's scores x_it^T u0
        self.l0 = np.ascontiguousarray(
            np.einsum("bntd,bde,bne->bnt", X, W0, self.Q).reshape(self.B, n * T)
        )
        self.xu0 = np.ascontiguousarray(np.einsum("bntd,bd->bnt", X, self.u0).reshape(self.B, -1))

    def W(self, beta: np.ndarray) -> np.ndarray:
        """W = W0 + sum_js beta_js x_js z_j^T, (B, d, d)."""
        A = np.einsum("bjs,bjsd->bdj", beta.reshape(self.B, self.n, self.T), self.X)
        return self.W0 + A @ self.Q

    def u(self, mu: np.ndarray) -> np.ndarray:
        """u = u0 + sum_js mu_js x_js, (B, d)."""
        return self.u0 + np.einsum("bjs,bjsd->bd", mu.reshape(self.B, self.n, self.T), self.X)

    def scores(self, ku: np.ndarray):
        """The decoder's token scores at u = u0 + sum mu_js x_js (ku = K mu, (B, nT)):
        gamma (B, n, T), gamma_opt (B, n), gap = gamma_opt - gamma, log|gap| and its sign
        (B, n, T), and whether the optimal token scores best everywhere (then no sum needs
        signs)."""
        return self.scores_of((self.xu0 + ku).reshape(self.B, self.n, self.T))

    def scores_of(self, xu: np.ndarray):
        """scores() from the decoder's token scores x_it^T u, (B, n, T), however formed
        (training.full_matrix materialises u)."""
        gamma = self.y[:, :, None] * xu
        gamma_opt = np.take_along_axis(gamma, self.opt[:, :, None], -1)[..., 0]
        gap = gamma_opt[..., None] - gamma
        with np.errstate(divide="ignore"):
            log_abs_gap = np.log(np.abs(gap))
        return gamma, gamma_opt, gap, log_abs_gap, np.sign(gap), bool((gap >= 0).all())

    def forward(self, z: np.ndarray, ku: np.ndarray, signed: bool) -> dict[str, np.ndarray]:
        """The forward quantities that metric_formulas.row reads, at the logits l0 + z and
        the scores at ku: the attention in logs and delta = sum_t a_t gap_t formed in logs
        (model.delta, as attention.forward in torch); `signed`: some gap may be negative."""
        logits = (self.l0 + z).reshape(self.B, self.n, self.T)
        return self.forward_of(logits, self.scores(ku), signed)

    def forward_of(self, logits: np.ndarray, scores: tuple, signed: bool) -> dict[str, np.ndarray]:
        """forward() at the logits x_it^T W z_i (B, n, T) and the decoder's `scores`
        (scores_of), however formed (training.full_matrix materialises W)."""
        _, gamma_opt, gap, log_abs_gap, gap_sign, _ = scores
        log_attn = log_softmax(np, logits)
        log_abs_delta, sign, delta = delta_in_logs(np, log_attn, log_abs_gap, gap_sign, signed)
        return dict(
            log_attn=log_attn, opt=self.opt, gamma_opt=gamma_opt, gap=gap, delta=delta,
            log_abs_delta=log_abs_delta, delta_sign=sign, margin=gamma_opt - delta,
        )  # fmt: skip
