"""The neighbours' training restated in plain torch, from their code's arithmetic (not
copied): AttentionMD's SMD step (attnbias.neighbours.restated, which the joint-run build
shows beside ours) and TF-as-SVM's (K, Q) step (local_converge.ipynb: the loss plus eps (||K||^2 +
||Q||^2), each factor's gradient divided by (||grad||_F + eps), SGD), on the logistic loss
averaged over samples, in float64; and our full-W runs of the same settings, with their
iterates at every step. For tests/optim/rules/test_mirror.py, test_kq.py and
tests/neighbours/."""

from __future__ import annotations

import numpy as np
import torch

from attnbias.neighbours.joint_run import our_iterates
from attnbias.neighbours.restated import EPS, logistic_loss, tensors, their_mirror  # noqa: F401 (the tests import it from here)
from attnbias.optim.spec import OptimizerSpec


def their_kq(data, K0, Q0, lr, steps, *, ridge=EPS, eps=EPS):
    """K Q^T after each of `steps` of TF-as-SVM's normalised (K, Q) step from (K0, Q0)
    (W = K Q^T: their key weight is K^T, their query weight Q^T), v = data's u fixed."""
    X, Y, Z = tensors(data)
    K = torch.tensor(K0, requires_grad=True)
    Q = torch.tensor(Q0, requires_grad=True)
    v = torch.as_tensor(data["u"])
    Ws = [(K @ Q.T).detach().clone()]
    for _ in range(steps):
        K.grad = Q.grad = None
        loss, _ = logistic_loss(X, Y, Z, K @ Q.T, v)
        (loss + ridge * (K.norm() ** 2 + Q.norm() ** 2)).backward()
        with torch.no_grad():
            K -= lr * K.grad / (K.grad.norm() + eps)
            Q -= lr * Q.grad / (Q.grad.norm() + eps)
        Ws.append((K @ Q.T).detach().clone())
    return torch.stack(Ws).numpy()


def our_run(data, spec: OptimizerSpec, steps, *, train_u=False, every=1):
    """Our full-W run of `spec` on `data` (logistic loss): W (and u) at iterations
    0, every, 2 every, ..., steps."""
    return our_iterates(data, spec, steps, np.arange(0, steps + 1, every), train_u=train_u)
