"""Reference implementation of "Implicit Bias and Fast Convergence Rates for Self-attention".

Modules, in the order data flows through them:
  data        synthetic datasets (Example 1, DM, bad initial direction, two-token example)
  svm         W-SVM and u-SVM: our Gram-space solver, cvxpy as the reference, KKT checks
  attention   the model's forward quantities, in log space
  gradients   the numerically stable gradients (scaled form e^M * G~)
  optimizers  GD, NGD, Polyak step, momentum, per-block normalisation
  train       the full-batch loop, batched over runs, logging metrics on a grid
  io          the file contract (npz / Parquet), written atomically
  figures     one seaborn figure per experiment
"""

__version__ = "0.1.0"
