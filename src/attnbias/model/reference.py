"""The model, its loss and its gradients written plainly from the paper: a reference.

One equation per function, numbered where the paper numbers it. Plain torch in float64,
differentiable by autograd, and with no log-domain tricks: this is what the package's
stable forms (attnbias.model: attention, gradients, losses) must equal up to
rounding, and where the attention saturates it is what they replace (the plain formulas
lose the NGD direction once the attention off the optimal token drops below ~1e-16; see
docs/model.md). The tests compare the two; nothing in the pipeline trains with this module.

One dataset, no batch dimension:
  X (n, T, d)  token sequences; X[i, t] is x_{i,t+1}, and X[i, 0] the query x_{i,1}
  y (n,)       labels in {+1, -1}
  u (d,)       the linear decoder (prediction head)
  W (d, d)     the key-query matrix
  opt (n,)     index of the optimal token of each sequence (int64)
  Z (n, d)     the queries z_i, for cross-attention (score_t = x_{i,t}^T W z_i); None (the
               default) is self-attention, z_i = x_{i,1}, the paper's model
  loss         "exponential", l(z) = e^{-z} (the paper's), or "logistic", log(1 + e^{-z})
Symbols follow docs/notation.md.
"""

from __future__ import annotations

import torch

LOSSES = ("exponential", "logistic")


def loss_value(z: torch.Tensor, loss: str = "exponential") -> torch.Tensor:
    """l(z), elementwise."""
    if loss == "exponential":
        return torch.exp(-z)  # l(z) = e^{-z}
    if loss == "logistic":
        return torch.log1p(torch.exp(-z))  # l(z) = log(1 + e^{-z})
    raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")


def loss_slope(z: torch.Tensor, loss: str = "exponential") -> torch.Tensor:
    """l'(z), elementwise."""
    if loss == "exponential":
        return -torch.exp(-z)  # l'(z) = -e^{-z}
    if loss == "logistic":
        return -1.0 / (1.0 + torch.exp(z))  # l'(z) = -1 / (1 + e^{z})
    raise ValueError(f"unknown loss {loss!r}; choose one of {LOSSES}")


def scores(X: torch.Tensor, y: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Token scores (Definition 1), (n, T)."""
    return y[:, None] * (X @ u)  # gamma_{i,t} = y_i u^T x_{i,t}


def optimal_tokens(X: torch.Tensor, y: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Optimal token indices (Definition 1), (n,)."""
    return scores(X, y, u).argmax(dim=1)  # opt_i = argmax_t gamma_{i,t}


def query(X: torch.Tensor, Z: torch.Tensor | None = None) -> torch.Tensor:
    """The query of every sequence, (n, d): z_i = Z[i], or x_{i,1} without Z."""
    return X[:, 0, :] if Z is None else Z


def softmax_attention(X: torch.Tensor, W: torch.Tensor, Z=None) -> torch.Tensor:
    """The attention of the query on every token, (n, T)."""
    return torch.softmax(X @ (W @ query(X, Z)[:, :, None]), dim=1).squeeze(-1)  # S(X_i W z_i)


def model(X: torch.Tensor, W: torch.Tensor, u: torch.Tensor, Z=None) -> torch.Tensor:
    """The prediction of every sequence, (n,)."""
    s = softmax_attention(X, W, Z)
    return torch.einsum("d,ntd,nt->n", u, X, s)  # Eq. (1): f(X; W, u) = u^T X^T S(X W z)


def risk(
    X: torch.Tensor,
    y: torch.Tensor,
    u: torch.Tensor,
    W: torch.Tensor,
    loss: str = "exponential",
    Z=None,
) -> torch.Tensor:
    """The empirical risk, a scalar."""
    return loss_value(y * model(X, W, u, Z), loss).mean()  # L(W, u) = (1/n) sum_i l(y_i f_i)


def attended_tokens(X: torch.Tensor, W: torch.Tensor, Z=None) -> torch.Tensor:
    """The attention-weighted token mean of every sequence, (n, d)."""
    return torch.einsum("nt,ntd->nd", softmax_attention(X, W, Z), X)  # x_bar_i = X_i^T s_i


def grad_W(
    X: torch.Tensor,
    y: torch.Tensor,
    u: torch.Tensor,
    W: torch.Tensor,
    loss: str = "exponential",
    Z=None,
) -> torch.Tensor:
    """grad_W L by the closed form, (d, d).

    grad_W f(X_i) = X_i^T (diag(s_i) - s_i s_i^T) X_i u z_i^T, the softmax Jacobian
    diag(s) - s s^T between; grad_W L = (1/n) sum_i l'(y_i f_i) y_i grad_W f(X_i).
    """
    s = softmax_attention(X, W, Z)  # (n, T)
    jacobian = torch.diag_embed(s) - s[:, :, None] * s[:, None, :]  # diag(s_i) - s_i s_i^T
    key = X.transpose(1, 2) @ jacobian @ (X @ u)[:, :, None]  # X_i^T (diag - s s^T) X_i u
    weight = loss_slope(y * model(X, W, u, Z), loss) * y  # l'(y_i f_i) y_i
    per_sample = key @ query(X, Z)[:, None, :]  # (n, d, d): ... z_i^T
    return (weight[:, None, None] * per_sample).mean(dim=0)


def grad_u(
    X: torch.Tensor,
    y: torch.Tensor,
    u: torch.Tensor,
    W: torch.Tensor,
    loss: str = "exponential",
    Z=None,
) -> torch.Tensor:
    """grad_u L by the closed form, (d,): (1/n) sum_i l'(y_i f_i) y_i X_i^T s_i."""
    weight = loss_slope(y * model(X, W, u, Z), loss) * y  # l'(y_i f_i) y_i
    return (weight[:, None] * attended_tokens(X, W, Z)).mean(dim=0)  # grad_u f_i = x_bar_i


def w_svm_constraints(X: torch.Tensor, opt: torch.Tensor, W: torch.Tensor, Z=None) -> torch.Tensor:
    """The margins of the (W-SVM) constraints at W, (n, T - 1): one per i and t != opt_i.

    (W-SVM): W_mm = argmin ||W||_F  s.t.  (x_{i,opt_i} - x_{i,t})^T W z_i >= 1
    for every i and every t != opt_i. A feasible W has every entry >= 1.
    """
    n, T, _ = X.shape
    rows = torch.arange(n)
    logits = (X @ (W @ query(X, Z)[:, :, None])).squeeze(-1)  # (n, T): x_{i,t}^T W z_i
    margins = logits[rows, opt][:, None] - logits  # (x_{i,opt_i} - x_{i,t})^T W z_i
    keep = torch.arange(T)[None, :] != opt[:, None]
    return margins[keep].reshape(n, T - 1)


def u_svm_constraints(
    X: torch.Tensor, y: torch.Tensor, opt: torch.Tensor, u: torch.Tensor
) -> torch.Tensor:
    """The margins of the (u-SVM) constraints at u, (n,).

    (u-SVM): u_mm = argmin ||u||  s.t.  y_i u^T x_{i,opt_i} >= 1 for every i.
    """
    return y * (X[torch.arange(len(y)), opt] @ u)  # y_i u^T x_{i,opt_i}


def loss_star(
    X: torch.Tensor,
    y: torch.Tensor,
    u: torch.Tensor,
    opt: torch.Tensor,
    loss: str = "exponential",
) -> torch.Tensor:
    """L*: the risk with all attention on the optimal tokens (s_{i,opt_i} = 1 for all i).

    L* = (1/n) sum_i l(gamma_{i,opt_i}), the f* of the Polyak step with a fixed decoder
    (Sec. 3.3). Where opt is the best-scoring token of every sequence, L(W, u) >= L* for
    every W, and L(R W_mm, u) -> L* as R -> inf.
    """
    gamma_opt = scores(X, y, u)[torch.arange(len(y)), opt]
    return loss_value(gamma_opt, loss).mean()


def gd_step(W: torch.Tensor, grad: torch.Tensor, lr: float) -> torch.Tensor:
    """Eq. (2) with a constant step: W_{t+1} = W_t - eta grad L(W_t)."""
    return W - lr * grad


def ngd_step(W: torch.Tensor, grad: torch.Tensor, lr: float) -> torch.Tensor:
    """Eq. (2) with NGD's step (Sec. 2): eta_t = eta / ||grad L(W_t)||_F."""
    return W - lr / torch.linalg.norm(grad) * grad


def polyak_step(
    W: torch.Tensor,
    grad: torch.Tensor,
    excess: torch.Tensor,
    eta_max: float | None = None,
) -> torch.Tensor:
    """Eq. (2) with the Polyak step (Sec. 2; capped as in App. C):

    eta_t = min((L(W_t) - L*) / ||grad L(W_t)||_F^2, eta_max), `excess` = L(W_t) - L*;
    eta_max None is the uncapped step.
    """
    step = excess / torch.linalg.norm(grad) ** 2
    if eta_max is not None:
        step = torch.clamp(step, max=eta_max)
    return W - step * grad


def joint_ngd_step(
    W: torch.Tensor,
    u: torch.Tensor,
    grad_W: torch.Tensor,
    grad_u: torch.Tensor,
    lr: float,
    lr_u: float | None = None,
    *,
    per_block: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Joint updates of W and u (Eq. 10, without its extra step-size factors).

    per_block (the paper's "NGD" in Fig. 3):
        W_{t+1} = W_t - eta grad_W L / ||grad_W L||_F
        u_{t+1} = u_t - eta_u grad_u L / ||grad_u L||
    not per_block (the paper's "joint NGD"), one norm N over both blocks:
        N = sqrt(||grad_W L||_F^2 + ||grad_u L||^2)
        W_{t+1} = W_t - eta grad_W L / N,  u_{t+1} = u_t - eta_u grad_u L / N
    The factors that Eq. 10 adds to the step of W (Thm. 3) were lost in extraction and are
    not implemented here or in the package.
    """
    # u steps at lr unless lr_u is set: the rule OptimizerSpec.lr_of states, restated here
    # because the oracle imports nothing of the package it checks
    lr_u = lr if lr_u is None else lr_u
    if per_block:
        return W - lr * grad_W / torch.linalg.norm(grad_W), u - lr_u * grad_u / grad_u.norm()
    norm = torch.sqrt(torch.linalg.norm(grad_W) ** 2 + grad_u.norm() ** 2)
    return W - lr * grad_W / norm, u - lr_u * grad_u / norm


def alignment_gap(P: torch.Tensor, P_ref: torch.Tensor) -> torch.Tensor:
    """1 - cos(P, P_ref) = 1 - <P, P_ref> / (||P|| ||P_ref||), computed the direct way."""
    return 1.0 - (P * P_ref).sum() / (torch.linalg.norm(P) * torch.linalg.norm(P_ref))


# The name the tests have long used for the plain risk.
plain_risk = risk
