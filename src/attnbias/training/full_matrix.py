"""The step on the full W, in numpy (FullMatrixStepper, a stepper of training.loop): the path
of the direction rules (attnbias.optim.rules: sign, nsd, muon, adam, mirror, kq), whose
updates leave the token coordinates of the C kernel and the torch stepper
(training.token_problem; docs/layout.md, "Adding an optimizer"). It trains the
step-length rules too (full_batch.Optimizer on numpy arrays): the tests hold it equal to
the kernel on GD and NGD.

Same problem, losses, stable gradients and metrics as the other backends: the forward
quantities in logs (token_problem.TokenProblem.forward_of, model.delta), the gradients
(model.full_gradients, numpy's twin of model.gradients), the logged row
(metric_formulas.row); the loop owns the crossings, divergence checks and tables. W is
materialised as (B, d, d) float64 and u as (B, d); a step costs the products X W z (the
logits; z the queries, x_1 or the data's Z: model.queries), a^T X (x_bar), w^T X (the
gradient's token sums) and L Q (the gradient G = L Q, with L (B, d, n)), plus the rule's
own arithmetic: benchmarks/full_matrix_step.py measures it against those products done once.
"""

from __future__ import annotations

import numpy as np

from attnbias.model import arrays, full_gradients
from attnbias.model.gradient_weights import ScaledGradient
from attnbias.optim.directions import Block, QueryBasis
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.rule import run_seed
from attnbias.training import metric_formulas
from attnbias.training.loop import PerStep, Request
from attnbias.training.token_problem import TokenProblem


class FullMatrixStepper(PerStep):
    """The parameters of a batch on the full W, their forward quantities and gradients, and
    one step of the request's rule: a direction rule's Update, or full_batch.Optimizer for
    a step-length rule (whose log step length of W it returns; NaN for a direction rule)."""

    xp = np

    def __init__(self, problem: TokenProblem, request: Request, W_mm, u_mm=None):
        self.problem, self.request, self.train_u = problem, request, request.train_u
        B, d = problem.B, problem.d
        self.W_mm = np.broadcast_to(np.asarray(W_mm, dtype=np.float64), (B, d, d))
        if u_mm is not None:
            u_mm = np.broadcast_to(np.asarray(u_mm, dtype=np.float64), (B, d))
        self.u_mm = u_mm
        self.params = {"W": problem.W0.copy(), "u": problem.u0.copy()}
        self.basis = QueryBasis.of(problem.Q)
        self._direction = np.empty((B, d, d))  # G~ of every step (directions.Block's out)
        self.scores = problem.scores_of(self._xu())
        self.opt_is_best = self.scores[-1]
        spec, rule = request.spec, request.rule
        if rule.gradient_multiple:
            self.optimizer, self.update = Optimizer(spec), None
        else:
            seeds = [run_seed(problem.X[b], problem.W0[b]) for b in range(B)]
            self.optimizer, self.update = None, rule.update(spec, self.params, seeds)

    def W(self) -> np.ndarray:
        return self.params["W"]

    def u(self) -> np.ndarray:
        return self.params["u"]

    def state(self) -> dict:
        return self.params

    def _xu(self) -> np.ndarray:
        return (self.problem.X @ self.params["u"][:, None, :, None])[..., 0]

    def forward_at(self, t: int) -> dict:
        """The forward quantities at the current parameters (token_problem.forward_of)."""
        p = self.problem
        with np.errstate(all="ignore"):  # NaN and inf as torch gives them, silently
            if self.train_u and t > 0:
                self.scores = p.scores_of(self._xu())
            Wq = p.Q @ np.swapaxes(self.params["W"], 1, 2)  # (B, n, d): W z_i as rows
            logits = (p.X @ Wq[..., None])[..., 0]
            signed = (not self.opt_is_best) or (self.train_u and t > 0)
            return p.forward_of(logits, self.scores, signed)

    def row(self, t: int) -> dict:
        r = self.request
        with np.errstate(all="ignore"):
            return metric_formulas.row(
                np, r.loss, self.W(), self.u(), self.W_mm, self.u_mm, r.train_u, r.only,
                **self.forward(t),
            )  # fmt: skip

    def gradients(self, fwd: dict) -> dict[str, Block]:
        """grad_W L (and grad_u L) as directions.Block: e^log_scale G~, G~ = L Q."""
        p = self.problem
        log_neg_slope = self.request.loss.log_neg_slope(fwd["margin"])
        log_scale, left = full_gradients.w_gradient(
            p.X, log_neg_slope, fwd["log_attn"], self.scores[0]
        )
        grads = {"W": Block(log_scale, None, left, self.basis, out=self._direction)}
        if self.train_u:
            grads["u"] = Block(*full_gradients.u_gradient(p.X, p.y, log_neg_slope, fwd["log_attn"]))
        return grads

    def step(self, t: int, fwd: dict) -> np.ndarray:
        with np.errstate(all="ignore"):
            grads = self.gradients(fwd)
            params = {name: self.params[name] for name in grads}
            if self.update is not None:
                self.update.step(t, params, grads)
                return np.full(self.problem.B, np.nan)
            loss, spec = self.request.loss, self.request.spec
            scaled = {
                name: ScaledGradient(
                    g.log_scale, g.direction, full_gradients.log_norm(g.log_scale, g.direction)
                )
                for name, g in grads.items()
            }

            def excess():  # the Polyak step's alone: the others never form the loss
                log_loss = arrays.log_mean(np, loss.log_value(fwd["margin"]))
                return metric_formulas.log_excess_loss(
                    np, loss, spec.f_star, log_loss, fwd["gamma_opt"], fwd["delta"],
                    fwd["log_abs_delta"], fwd["delta_sign"],
                )  # fmt: skip

            return self.optimizer.step(params, scaled, excess)["W"]
