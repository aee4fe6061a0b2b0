"""The optimizers: full-batch rules of the synthetic runs (full_batch: GD, NGD, Polyak
step, momentum; their config settings in spec, torch-free) and the stochastic ones of the
real-data runs (stochastic: SNGD, SPS as torch.optim optimizers)."""
