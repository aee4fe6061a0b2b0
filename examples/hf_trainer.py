"""Our optimizers inside the Hugging Face Trainer: an example, not part of the library.

The pipeline trains the real-data figures with its own loop (attnbias.realdata.trainer);
this adapter is for those who train with the Hugging Face Trainer instead. Run it with the
`examples` extra (`pip install -e ".[examples]"`, which adds accelerate) and this folder on
the path; tests/project/test_hf_example.py checks it inside a real Trainer.

The Trainer calls `optimizer.step()` with no arguments, but SPS's step size needs the loss
of the batch behind the gradient. `SPSTrainer` hands that loss over: after each
forward/backward it passes the loss that `training_step` backpropagated to
`SPS.add_loss`; the calls add up over gradient-accumulation micro-batches (each already
divided by their number), so the next `step()` sees the loss of the accumulated gradient.

    trainer = SPSTrainer(model=model, args=TrainingArguments(..., max_grad_norm=0.0),
                         train_dataset=ds, optimizers=(SPS(model.parameters(), eta_max=1.0), None))

The Trainer clips gradients to norm 1 by default (`max_grad_norm=1.0`). That rescales g
before SPS and SNGD see it, and changes their steps (SPS's (loss - f*) / (c ||g||^2) and the
caps of both), so `SPSTrainer` refuses to train them unless `max_grad_norm` is 0.
Any other optimizer (SGD, Adam, ...) runs exactly as under the plain Trainer.

Gradient accumulation with BERT (transformers 5.23): the Trainer takes the **kwargs of
BertForSequenceClassification.forward to mean the model divides its loss by
num_items_in_batch (it does not) and skips its own division by
gradient_accumulation_steps, so the accumulated gradient is the SUM of the micro-batch
means (huggingface/transformers#47688). SPS stays consistent, since it is handed the loss
that was backpropagated, but every learning rate and cap then acts on a k-times larger
gradient. Set `trainer.model_accepts_loss_kwargs = False` (the Trainer's switch for models
whose loss is a per-batch mean; tests/project/test_hf_example.py does) or do not accumulate.

Importing this module imports transformers (and the Trainer needs accelerate).
"""

from __future__ import annotations

from transformers import Trainer

from attnbias.optim.stochastic import SNGD, SPS


def unwrap_optimizer(optimizer):
    """The optimizer inside accelerate's AcceleratedOptimizer wrapper (or itself)."""
    while hasattr(optimizer, "optimizer"):
        optimizer = optimizer.optimizer
    return optimizer


class SPSTrainer(Trainer):
    """A Trainer that hands each backpropagated loss to an SPS optimizer (module docstring)."""

    def training_step(self, model, inputs, num_items_in_batch=None):
        optimizer = unwrap_optimizer(self.optimizer)
        if isinstance(optimizer, (SPS, SNGD)) and self.args.max_grad_norm > 0:
            raise ValueError(
                f"{type(optimizer).__name__} under the Trainer: set "
                f"TrainingArguments(max_grad_norm=0.0) (it is {self.args.max_grad_norm}); "
                "clipping rescales the gradient and so changes this optimizer's step size"
            )
        loss = super().training_step(model, inputs, num_items_in_batch)
        if isinstance(optimizer, SPS):
            optimizer.add_loss(loss)
        return loss
