"""One real-data training run (figure, optimizer, seed), from the workflow's settings."""

from __future__ import annotations

from attnbias.optim.spec import StochasticSpec
from attnbias.optim.stochastic import make_optimizer
from attnbias.realdata import tasks
from attnbias.realdata.trainer import Schedule, every_step, fit
from attnbias.training.devices import resolve_device


def train_run(
    settings: dict,
    spec: StochasticSpec,
    *,
    seed: int,
    data_root: str,
    device: str = "auto",
    autocast: bool = True,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    progress: bool = True,
    progress_file=None,
    compile: bool = False,
):
    """Build the experiment's task, train it, return (iterations, metrics, device): every
    iteration of the run, each metric NaN where it was not logged (trainer.every_step).

    `settings` is the experiment's config section (dataset, model, train, ...); `spec` the
    optimizer's, resolved from its config entry by the caller (optim.spec.spec_of): its
    rule and the keyword settings of its torch optimizer.
    """
    torch_device = resolve_device(device)
    task = tasks.build(settings, seed=seed, data_root=data_root)
    # the torch optimizer is built here, not by the spec: the spec stays torch-free for the
    # plot rules that read it (envs/plot.yaml has no torch)
    torch_optimizer = make_optimizer(spec.rule, task.model.parameters(), **spec.settings)
    train = settings["train"]
    schedule = Schedule(
        epochs=train["epochs"],
        batch_size=train["batch_size"],
        log_every=train["log_every"],
        checkpoint_every=checkpoint_every,
        eval_batch_size=train["eval_batch_size"],
        length_buckets=train.get("length_buckets", 0),
        probe_samples=train.get("probe_samples", 0),
        seed=seed,
        autocast=autocast,
        progress=progress,
        progress_file=progress_file,
        compile=compile,
    )
    # a checkpoint resumes only the run it was written by (same data, model, optimizer, seed)
    fingerprint = {"settings": settings, "optimizer": spec.entry(), "seed": seed}
    steps, metrics = fit(
        task,
        torch_optimizer,
        schedule,
        device=torch_device,
        checkpoint=checkpoint,
        fingerprint=fingerprint,
    )
    return (*every_step(steps, metrics), torch_device)
