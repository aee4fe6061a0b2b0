"""The refusals of the geometry experiments' config (layout `geometry`, keys `norms` and
`tokens`): every norm a name attnbias.svm.norms reads, in its one spelling; `norms` and
`tokens` on a geometry experiment only; each optimizer's expected norm (its rule's
implicit_norm) among them, so that the figure and the claims can compare it with the
others; d within the limit whose SVMs take minutes (attnbias.svm.cost); and `tokens:
selected` with a fixed decoder only."""

from __future__ import annotations

from attnbias.workflow.configkeys import ConfigError

GEOMETRY_LAYOUT = "geometry"  # the layout of the geometry experiments (the norm experiment)
# `tokens`: the SVMs of the data's optimal tokens (absent: this), or of the tokens each run's
# attention selects (training.geometry_measures)
TOKENS_DEFAULT = "optimal"
SELECTED = "selected"


def check_geometry(config: dict, specs: dict) -> None:
    """The geometry experiments' `norms` and optimizers (after the schema's defaults;
    `specs`: {an optimizer's config path: its spec}, configcheck_optimizers.check_specs),
    and a tuning seed below the reported ones."""
    for name, e in config["experiments"].items():
        if e.get("tuning_seed", -1) >= e.get("first_seed", 0):
            raise ConfigError(
                ("experiments", name, "tuning_seed"),
                f"the tuning seed {e['tuning_seed']} chose constants: it must not be reported, "
                f"so first_seed ({e.get('first_seed', 0)}) must be above it",
            )
        path = ("experiments", name, "norms")
        if e["layout"] != GEOMETRY_LAYOUT:
            for key in ("norms", "tokens"):
                if key in e:
                    raise ConfigError(
                        ("experiments", name, key),
                        f"{key} belong to layout {GEOMETRY_LAYOUT} only, not {e['layout']}",
                    )
            continue
        _check_tokens(name, e)
        norms = e.get("norms") or []
        if not norms:
            raise ConfigError(path, "a geometry experiment names its norms (e.g. [fro, max])")
        _check_names(path, norms)
        _check_expected(name, e, norms, specs)
        _check_size(name, e)


def _check_names(path: tuple, norms: list) -> None:
    """Each a name parse_norm reads, in its one spelling (the schema refuses repeats)."""
    from attnbias.svm.norm_values import parse_norm

    for i, norm in enumerate(norms):
        try:
            parse_norm(norm)
        except ValueError as err:
            raise ConfigError((*path, i), str(err)) from None


def _check_expected(name: str, experiment: dict, norms: list, specs: dict) -> None:
    for opt, settings in experiment["optimizers"].items():
        norm = specs[("experiments", name, "optimizers", opt)].implicit_norm()
        if norm is not None and norm not in norms:  # None: no published expected norm
            raise ConfigError(
                ("experiments", name, "norms"),
                f"optimizer {opt} (rule {settings['rule']}) is expected to find the {norm} "
                f"SVM: add {norm!r} to the norms {norms}",
            )


def _check_size(name: str, experiment: dict) -> None:
    """d within the limit on an experiment with norms: the largest d at which its SVMs in
    other norms were measured within minutes a seed (svm.cost)."""
    from attnbias.svm import cost
    from attnbias.workflow.svm_cost_lines import sizes

    d = sizes(experiment)[2]
    if d > cost.MAX_NORMS_D:
        seconds = cost.seed_seconds(experiment["norms"], d)
        raise ConfigError(
            ("experiments", name, "data", "params", "d"),
            f"{d} is above {cost.MAX_NORMS_D}, the limit of an experiment with norms (the "
            f"largest d their cost was measured at): its SVMs in {experiment['norms']} would "
            f"take about {seconds / 60:.0f} CPU-minutes a seed (attnbias.svm.cost's estimate "
            "from measured costs); lower d",
        )


def _check_tokens(name: str, experiment: dict) -> None:
    """`tokens: selected` reads the locally optimal tokens' check with the data's fixed
    decoder v (neighbours.local_tokens): not with a decoder that trains."""
    if experiment.get("tokens", TOKENS_DEFAULT) == SELECTED and experiment["train"]["train_u"]:
        raise ConfigError(
            ("experiments", name, "tokens"),
            f"{SELECTED} measures each run against the SVMs of the tokens its attention "
            "selects, checked for local optimality with the data's fixed decoder: it needs "
            "train.train_u false (with u trained, leave tokens out: the decoder's optimal "
            "tokens are followed)",
        )
