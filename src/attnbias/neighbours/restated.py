"""AttentionMD's normalised l_p mirror descent restated in plain torch from their code's
arithmetic (aaronk2002/AttentionMD, synthetic-data/tools/optimizers.py; not copied): the
step Z - lr G / (||G||_q + 2.2e-16) on the logistic loss averaged over samples, float64.
What their runs would report, for the builds that show it beside ours (their denominator
stalls a step once the loss underflows) and for the tests that compare ours with theirs."""

from __future__ import annotations

import numpy as np

EPS = float(np.finfo(np.float64).eps)  # their 2.2e-16


def outputs(X, Z, W, v):
    """f_i = v^T X_i^T softmax(X_i W z_i), and the softmax (n, T)."""
    import torch

    scores = torch.einsum("ntd,de,ne->nt", X, W, Z)  # x_t^T W z_i
    attention = torch.softmax(scores, dim=-1)
    return (attention[:, :, None] * X).sum(1) @ v, attention


def logistic_loss(X, Y, Z, W, v):
    """Their loss: mean log(1 + exp(-y_i f_i)), and the softmax."""
    import torch

    out, attention = outputs(X, Z, W, v)
    return torch.log(1 + torch.exp(-Y * out)).mean(), attention


def tensors(data):
    """(X, y, queries) of the data file contract as torch tensors (queries: Z or x_{i,1})."""
    import torch

    X = torch.as_tensor(data["X"])
    Z = torch.as_tensor(data["Z"]) if "Z" in data else X[:, 0]
    return X, torch.as_tensor(data["y"]), Z


def their_mirror(data, p, lr, steps, *, train_v=False, eps=EPS):
    """W (and v) after each of `steps` normalised l_p mirror descent steps from W0 (and
    v = data's u, or 0 when trained): (Ws (steps + 1, d, d), vs (steps + 1, d), the tokens
    the softmax selects at the last step's forward)."""
    import torch

    X, Y, Z = tensors(data)
    d = X.shape[-1]
    W = torch.tensor(data["W0"], requires_grad=True)
    v0 = np.zeros(d) if train_v else data["u"]
    v = torch.tensor(v0, requires_grad=train_v)
    params = [W, v] if train_v else [W]
    Ws, vs = [W.detach().clone()], [v.detach().clone()]
    for _ in range(steps):
        for q in params:
            q.grad = None
        loss, attention = logistic_loss(X, Y, Z, W, v)
        loss.backward()
        with torch.no_grad():
            for q in params:
                g = q.grad
                dual = torch.sign(q) * q.abs() ** (p - 1) - lr * g / (g.norm(p / (p - 1)) + eps)
                q.copy_(torch.sign(dual) * dual.abs() ** (1 / (p - 1)))
        Ws.append(W.detach().clone())
        vs.append(v.detach().clone())
    return torch.stack(Ws).numpy(), torch.stack(vs).numpy(), attention.argmax(-1).numpy()
