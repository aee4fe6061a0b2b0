"""The model of the paper: one-layer self-attention with a linear head, its losses and
gradients (attention, losses, gradients), and the paper's equations in plain torch
(reference), the tests' yardstick for the stable forms."""
