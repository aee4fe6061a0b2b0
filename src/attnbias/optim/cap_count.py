"""Whether a stochastic optimizer's cap bound: per step, and counted over the run.

SNGD's cap `max_step` binds at a step where lr / ||g|| >= max_step, SPS's `eta_max` where
the Polyak step is >= eta_max: the step is then plain SGD's with the cap for its learning
rate. `CapCount` keeps, on the parameters' device, whether the cap bound in any param group
at the last step and how many steps it has bound at since the optimizer was made (a step
skipped for a zero gradient never counts). Nothing is read from the device per step: the
count reaches the host when `cap_bound_steps` is read (the trainer does at its log points).
The count is run state: it travels in `state_dict()` under CAP_BOUND_KEY, so a run resumed
from a checkpoint goes on counting where it stopped.
"""

from __future__ import annotations

import torch

CAP_BOUND_KEY = "cap_bound_steps"  # the count's entry in the optimizer's state_dict()


class CapCount:
    """For torch.optim.Optimizer subclasses: `_count_cap(bound, skip)` once per step with
    the 0-dim bool tensors "the cap bound in some group" and "the step was skipped"."""

    _cap_bound: torch.Tensor | None = None  # the count, on the device (None: no step yet)
    _last_bound: torch.Tensor | None = None  # whether the last step's cap bound

    def _count_cap(self, bound: torch.Tensor | None, skip: torch.Tensor) -> None:
        """Count a step (bound None: no group has a cap)."""
        if bound is None:
            bound = torch.zeros((), dtype=torch.bool, device=skip.device)
        self._last_bound = torch.where(skip, -1, bound.long())  # -1: skipped
        count = self._cap_bound
        if count is None:
            count = torch.zeros((), dtype=torch.int64, device=skip.device)
        self._cap_bound = count.to(skip.device).add_(self._last_bound.clamp(min=0))

    def _no_step(self) -> None:
        """A step call that found no gradient at all: nothing stepped."""
        self._last_bound = None

    @property
    def cap_bound_steps(self) -> int:
        """How many steps the cap has bound at (in any group) so far: a host read."""
        return 0 if self._cap_bound is None else int(self._cap_bound)

    @property
    def last_cap_bound(self) -> bool | None:
        """Whether the cap bound at the last step (None: skipped, or no step yet)."""
        if self._last_bound is None:
            return None
        value = int(self._last_bound)
        return None if value < 0 else bool(value)

    def state_dict(self) -> dict:
        state = super().state_dict()
        count = self._cap_bound  # a copy: a live state_dict must not change with the next step
        state[CAP_BOUND_KEY] = (
            torch.zeros((), dtype=torch.int64) if count is None else count.clone()
        )
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        count = state_dict.pop(CAP_BOUND_KEY, None)  # absent from older checkpoints: 0
        super().load_state_dict(state_dict)
        self._cap_bound = None if count is None else torch.as_tensor(count).clone().long()
