"""An optimizer's settings as written in the config (no torch: the fast path and the
workflow's config checks import it). Which settings a rule reads
is said by the rule's module (attnbias.optim.rules).

A config entry becomes settings here and nowhere else: `config_settings` (the entry less
its label, which run identities hash) and `resolve` (an experiment's optimizers as specs:
an OptimizerSpec, defaults filled in, for a synthetic experiment; a StochasticSpec, the
real-data runs' torch optimizer (optim.stochastic), for a real-data one). Each process
resolves an experiment's optimizers once, where it reads the config (the config checks,
the workflow's WorkflowConfig, a job's script), and passes the specs down: training, the
legends, the figures' looks and the claims read the spec. A spec resolves its rule in the
registry once, when built (`definition`), and everything downstream reads the rule from
the spec, never by its name again."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from attnbias.optim import rules
from attnbias.optim.rule import Rule


def without(mapping: dict, *keys: str) -> dict:
    """A copy of `mapping` without `keys` (order kept): e.g. an optimizer's config entry
    without its legend `label`, which changes no result."""
    return {k: v for k, v in mapping.items() if k not in keys}


def config_settings(entry: dict) -> dict:
    """An optimizer's config entry less its legend `label`: what its runs depend on (their
    identities hash this, so a label change retrains nothing)."""
    return without(entry, "label")


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer's settings, as written in the config."""

    rule: str  # a name of attnbias.optim.rules.RULES
    lr: float = 1.0
    lr_u: float | None = None  # step for u when it differs from lr (joint training)
    max_step: float | None = None  # ngd: cap on the adaptive step lr / ||grad||
    eta_max: float | None = None  # polyak: cap on the step; None = uncapped
    f_star: str | float = "opt"  # polyak: "opt" (all attention on opt tokens) or a number
    momentum: float = 0.0
    normalize: str = "global"  # ngd/polyak norm: "global" or "per_block"
    # Eq. 10's extra step factors: the step of W (of u) at iteration t is multiplied by
    # (t + 1)^-decay_W ((t + 1)^-decay_u); 0 = no factor (our reading: docs/model.md)
    decay_W: float = 0.0
    decay_u: float = 0.0
    # the direction rules' settings (attnbias.optim.rules, directions)
    schedule: str = "constant"  # sign, nsd, muon, adam: lr_t = lr, or lr / sqrt(t + 1) ("sqrt")
    norm: str | None = None  # nsd: "max", "spectral" or "l<p>" (entrywise l_p: optim.lp_norm)
    beta: float = 0.9  # muon: momentum of M (0: spectral descent)
    # muon, nsd (spectral): U V^T over the singular values above polar_cutoff times the
    # largest (optim.directions' doc: a relative cut-off far above the rounding floor)
    polar_cutoff: float = 1e-8
    beta1: float = 0.9  # adam
    beta2: float = 0.999  # adam
    eps: float = 1e-8  # adam
    p: float | None = None  # mirror: psi(W) = ||W||_p^p / p, p in optim.lp_norm's range
    # mirror, kq: each block's gradient divided by its own dual norm ("per_block": l_q,
    # 1/p + 1/q = 1, for mirror; Frobenius for each of kq's K and Q), by one over all
    # blocks ("global"), or not ("none"); formed in logs (directions.log_coefficients)
    dual_normalize: str = "none"
    init_scale: float = 0.01  # kq: entries of K0, Q0 ~ N(0, init_scale^2) (init "normal")
    init: str = "normal"  # kq: K0, Q0 "normal", or "linear" (nn.Linear's U(+-1/sqrt(d)))
    ridge: float = 0.0  # kq: the loss plus ridge * (||K||_F^2 + ||Q||_F^2)
    # the registry's Rule called `rule`, resolved once here (not a setting: init=False)
    definition: Rule = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        rule = rules.get(self.rule)
        if not rule.full_batch:
            raise ValueError(
                f"rule {self.rule} runs on torch parameters only (a real-data experiment's "
                f"optimizer): its module ({rules.MODULES.get(self.rule, 'attnbias.optim.rules')})"
                " gives no full-batch update (log_step or update)"
            )
        object.__setattr__(self, "definition", rule)
        self._refuse_ignored(rule)
        if self.normalize not in ("global", "per_block"):
            raise ValueError(f"normalize must be 'global' or 'per_block', got {self.normalize!r}")
        rule.check(self)
        if self.decay_W < 0 or self.decay_u < 0:
            raise ValueError(
                f"decay_W and decay_u must be >= 0, got {self.decay_W}, {self.decay_u}"
            )
        if not 0.0 <= self.momentum < 1.0:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum}")

    def _refuse_ignored(self, rule) -> None:
        """A setting the rule never reads, set away from its default, would be silently
        ignored: refuse it (the config checks say the same, naming the key)."""
        reads = {"rule", *rule.shared, *rule.settings}
        for setting in fields(self):
            if not setting.init or setting.name in reads:
                continue
            if getattr(self, setting.name) != setting.default:
                raise ValueError(f"rule {rule.name} ignores {setting.name}; remove it")

    def implicit_norm(self) -> str | None:
        """The norm whose attention SVM a published result expects this rule's geometry to
        find; None where none does (Rule.implicit_norm)."""
        return self.definition.implicit_norm(self)

    def algorithm(self, layout: str) -> str:
        """The algorithm (a key of claims.coverage.ALGORITHMS, or the rule's own name) in an
        experiment of `layout`: its rule's choice from the settings (Rule.algorithm_of)."""
        return self.definition.algorithm_of(self, layout)

    def look_key(self, layout: str) -> str:
        """The key of the Look that draws it (figures.algorithm_style.STYLES): its
        algorithm's, or finer where its rule says (nsd: by its norm)."""
        return self.definition.look_key_of(self, layout)

    def lr_of(self, block: str) -> float:
        """The step of parameter block `block` ("W" or "u"): lr, or lr_u for u where set."""
        return self.lr_u if block == "u" and self.lr_u is not None else self.lr

    def reads(self, setting: str) -> bool:
        """Whether this rule reads `setting` (a step-length rule also reads rules.SHARED)."""
        return setting in self.definition.shared or setting in self.definition.settings

    def caption(self) -> str:
        """A short description for figure captions."""
        text = self.definition.caption(self)
        if self.max_step is not None:
            text += f" max_step={self.max_step:g}"
        if self.momentum:
            text += f" momentum={self.momentum:g}"
        if self.normalize == "per_block" and self.reads("normalize"):
            text += " (W, u normalised separately)"
        if self.decay_W or self.decay_u:
            text += f" steps x (t+1)^-{self.decay_W:g} (W), (t+1)^-{self.decay_u:g} (u)"
        return text


@dataclass(frozen=True)
class StochasticSpec:
    """A real-data run's torch optimizer (its rule module's `torch`: attnbias.optim.stochastic's,
    or torch's own) as written in the config: its rule and the keyword settings its
    constructor takes."""

    rule: str  # a rule of attnbias.optim.rules whose module gives `torch`
    settings: dict
    # the registry's Rule called `rule`, resolved once here
    definition: Rule = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        rule = rules.get(self.rule)
        if rule.torch is None:
            raise ValueError(
                f"rule {self.rule} does not run on torch parameters: its module "
                f"({rules.MODULES.get(self.rule, 'attnbias.optim.rules')}) gives no torch="
                "TorchOptimizer(...)"
            )
        unknown = sorted(set(self.settings) - set(rule.torch.settings))
        if unknown:
            raise ValueError(
                f"rule {self.rule} takes no setting(s) {unknown} on torch parameters; its "
                f"settings are {list(rule.torch.settings)}"
            )
        object.__setattr__(self, "definition", rule)

    def algorithm(self, layout: str | None = None) -> str:
        """A real-data run's algorithm, and its look key: its rule's name."""
        return self.rule

    look_key = algorithm

    def entry(self) -> dict:
        """Its config entry less the label: `rule` and the settings."""
        return {"rule": self.rule, **self.settings}

    def settings_text(self) -> str:
        """Its settings as `k=v, ...`, sorted by name."""
        return ", ".join(f"{k}={v:g}" for k, v in sorted(self.settings.items()))

    def caption(self) -> str:
        """A short description for figure captions: `Name k=v, ...`, the rule's own name
        from its module (Rule.display_name: "Adam", "SGD")."""
        return f"{self.definition.display_name} {self.settings_text()}".strip()


Spec = OptimizerSpec | StochasticSpec


def spec_of(entry: dict, *, real: bool) -> Spec:
    """The spec of one optimizer's config entry (its `label` aside): of a real-data
    experiment (`real`: on torch parameters) a StochasticSpec, else an OptimizerSpec whose
    settings left out take the defaults above (every reader gets the same values)."""
    if "rule" not in entry:
        raise KeyError(f"rule: an optimizer entry names its rule, got {entry!r}")
    if real:
        return StochasticSpec(entry["rule"], without(entry, "label", "rule"))
    return OptimizerSpec(**config_settings(entry))


def resolve(optimizers: dict, *, real: bool) -> dict[str, Spec]:
    """{name: spec} of an experiment's optimizers ({name: config entry}, spec_of), in config
    order: what a process reads the optimizers as, once, from the config (module doc)."""
    return {name: spec_of(entry, real=real) for name, entry in optimizers.items()}
