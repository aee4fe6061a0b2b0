"""The neighbours' training restated in plain torch, from their code's arithmetic (not
copied): AttentionMD's SMD step (tools/optimizers.py, normalised: Z - lr G / (||G||_q +
2.2e-16)) and TF-as-SVM's (K, Q) step (local_converge.ipynb: the loss plus eps (||K||^2 +
||Q||^2), each factor's gradient divided by (||grad||_F + eps), SGD), on the logistic loss
averaged over samples, in float64; and our full-W runs of the same settings, with their
iterates at every step. For tests/optim/rules/test_mirror.py, test_kq.py and
tests/neighbours/."""

from __future__ import annotations

import numpy as np
import torch

from attnbias.optim.spec import OptimizerSpec
from attnbias.training import dispatch

EPS = torch.finfo(torch.double).eps  # their 2.2e-16


def _outputs(X, Z, W, v):
    scores = torch.einsum("ntd,de,ne->nt", X, W, Z)  # x_t^T W z_i
    attention = torch.softmax(scores, dim=-1)
    return (attention[:, :, None] * X).sum(1) @ v, attention


def _loss(X, Y, Z, W, v):
    out, attention = _outputs(X, Z, W, v)
    return torch.log(1 + torch.exp(-Y * out)).mean(), attention


def _tensors(data):
    X = torch.as_tensor(data["X"])
    Z = torch.as_tensor(data["Z"]) if "Z" in data else X[:, 0]
    return X, torch.as_tensor(data["y"]), Z


def their_mirror(data, p, lr, steps, *, train_v=False, eps=EPS):
    """W (and v) after each of `steps` normalised l_p mirror descent steps from W0 (and
    v = data's u, or 0 when trained): (Ws (steps + 1, d, d), vs (steps + 1, d), the tokens
    the softmax selects at the last step's forward)."""
    X, Y, Z = _tensors(data)
    d = X.shape[-1]
    W = torch.tensor(data["W0"], requires_grad=True)
    v0 = np.zeros(d) if train_v else data["u"]
    v = torch.tensor(v0, requires_grad=train_v)
    params = [W, v] if train_v else [W]
    Ws, vs = [W.detach().clone()], [v.detach().clone()]
    for _ in range(steps):
        for q in params:
            q.grad = None
        loss, attention = _loss(X, Y, Z, W, v)
        loss.backward()
        with torch.no_grad():
            for q in params:
                g = q.grad
                dual = torch.sign(q) * q.abs() ** (p - 1) - lr * g / (g.norm(p / (p - 1)) + eps)
                q.copy_(torch.sign(dual) * dual.abs() ** (1 / (p - 1)))
        Ws.append(W.detach().clone())
        vs.append(v.detach().clone())
    return torch.stack(Ws).numpy(), torch.stack(vs).numpy(), attention.argmax(-1).numpy()


def their_kq(data, K0, Q0, lr, steps, *, ridge=EPS, eps=EPS):
    """K Q^T after each of `steps` of TF-as-SVM's normalised (K, Q) step from (K0, Q0)
    (W = K Q^T: their key weight is K^T, their query weight Q^T), v = data's u fixed."""
    X, Y, Z = _tensors(data)
    K = torch.tensor(K0, requires_grad=True)
    Q = torch.tensor(Q0, requires_grad=True)
    v = torch.as_tensor(data["u"])
    Ws = [(K @ Q.T).detach().clone()]
    for _ in range(steps):
        K.grad = Q.grad = None
        loss, _ = _loss(X, Y, Z, K @ Q.T, v)
        (loss + ridge * (K.norm() ** 2 + Q.norm() ** 2)).backward()
        with torch.no_grad():
            K -= lr * K.grad / (K.grad.norm() + eps)
            Q -= lr * Q.grad / (Q.grad.norm() + eps)
        Ws.append((K @ Q.T).detach().clone())
    return torch.stack(Ws).numpy()


def our_run(data, spec: OptimizerSpec, steps, *, train_u=False, every=1):
    """Our full-W run of `spec` on `data` (logistic loss): W (and u) at iterations
    0, every, 2 every, ..., steps (logged through the loop's extra_metrics)."""
    d = data["X"].shape[-1]
    seen = {"W": [], "u": []}

    def capture(W, u):
        seen["W"].append(W[0].copy())
        seen["u"].append(u[0].copy())
        return {}

    dispatch.train(
        [data], spec, W_mm=np.eye(d)[None], u_mm=np.ones((1, d)), iterations=steps,
        log_iterations=np.arange(0, steps + 1, every), train_u=train_u, loss="logistic",
        extra_metrics=capture, nonfinite="raise",
    )  # fmt: skip
    return np.array(seen["W"]), np.array(seen["u"])
