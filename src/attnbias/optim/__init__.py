"""The optimizers: full-batch rules of the synthetic runs (rules: the registry, one entry
per rule, torch-free; full_batch: the step, momentum and decay factors; spec: their config
settings, torch-free, resolved once per experiment (resolve), with each one's algorithm,
look and expected norm; directions: the direction rules' arithmetic; lp_norm: an l_p
norm's p and name) and the stochastic ones of
the real-data runs (stochastic: SNGD, SPS as torch.optim optimizers)."""
