"""The names of the per-run metrics the real-data trainer logs beyond train_loss and test
accuracy (attnbias.realdata.trainer), apart from it so that their readers (the tuning rule,
the claims, the figures) import no torch."""

BATCH_LOSS = "batch_loss"  # every step's mini-batch loss
PROBE_METRIC = "probe_loss"  # the loss on the fixed probe subset of the training set
