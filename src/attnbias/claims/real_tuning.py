"""A real-data row's verdict against the check of its figure's settings (`chosen_by`:
workflow.real_config.RealDataConfig.tuning, its state from workflow.tuning_record).

A finding is about the optimizer, never our tuning: a row that compares optimizers
(real_constants.TUNED_KINDS: the races, Adam's gap) on runs whose sweep's record marks other
settings (DIFFERS) reads "undecided", naming the settings that differ, with its measured
numbers and what its test read on these runs; runs with the tuned settings would decide
it. Where the record is not in the results folder (NOT_BUILT) the verdict stands and says
that the settings were not checked. CHECKED, and a figure that no sweep tunes ({}), change
nothing.
"""

from __future__ import annotations

from dataclasses import replace

from attnbias.claims.claim import Claim
from attnbias.claims.real_constants import TUNED_KINDS
from attnbias.workflow import tuning_record

UNTUNED_REFERENCE = "; undecided on settings that are not the ones their sweep chose"


def judged(claims: list[Claim], tuning: dict | None) -> list[Claim]:
    """`claims` (rows of one real-data experiment) with the verdicts its settings' check
    (`tuning`, the experiment's `chosen_by`) allows (module docstring)."""
    state = (tuning or {}).get("state")
    if state not in (tuning_record.DIFFERS, tuning_record.NOT_BUILT):
        return claims
    said = tuning_record.words(tuning)
    return [
        (untuned(c, said) if state == tuning_record.DIFFERS else unchecked(c, said))
        if c.kind in TUNED_KINDS
        else c
        for c in claims
    ]


def untuned(claim: Claim, said: str) -> Claim:
    """`claim` undecided: its runs are not the tuned ones (`said`: which differ, and what
    the sweep chose); what its test read on them stays in the detail, its numbers in the
    value."""
    on_these = f"; on these runs: {claim.detail}" if claim.detail else ""
    return replace(
        claim,
        holds=False,
        undecided=True,
        reference=claim.reference + UNTUNED_REFERENCE,
        detail=f"{said}; runs with the tuned settings would decide it{on_these}",
    )


def unchecked(claim: Claim, said: str) -> Claim:
    """`claim` with its verdict, saying that its settings were not checked (`said`: their
    sweep's record is not in the results folder)."""
    note = f"not checked against the tuning: {said}"
    return replace(claim, detail=f"{claim.detail}; {note}" if claim.detail else note)
