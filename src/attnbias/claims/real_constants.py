"""The constants of ours that a real-data row's verdict may depend on beyond its optimizers'
settings (which claims.robustness.named reads from every experiment alike), in words, as the
claims' column `constants` names them: for a race, the paired test's level
(claims.paired_race.ALPHA), the curve it reads (the probe subset's size, the horizon) and the
rule that chose the settings on the tuning seed (realdata.tuning, with the cap rule's
limit realdata.cap_bound.MAX_CAP_SHARE); for Adam's gap, its factor (claims.real.ADAM_GAP).

An experiment here is what the claims read of a real-data experiment
(workflow.real_config.RealDataConfig.claims_real): `probe_samples`, `chosen_by` ({seed,
sweeps, rule} and the state of the check against the sweep's record,
workflow.tuning_record; {} where no sweep tunes the settings) and, once its table is read, `steps`
(with_horizon).
"""

from __future__ import annotations

from attnbias.claims.paired_race import ALPHA
from attnbias.realdata.cap_bound import MAX_CAP_SHARE
from attnbias.workflow import tuning_record

# "no significant gap between Adam and SGD": final train losses within this factor (ours);
# claims.real reads it from here, so the row and its constants cell say one number
ADAM_GAP = 2.0
# the kinds of test (claims.claim.KINDS) whose real-data rows compare optimizers, so read
# the settings their sweep chose: their constants name the tuning (tuning_words), and
# their verdicts wait for the tuned settings (claims.real_tuning)
TUNED_KINDS = ("race", "threshold")


def with_horizon(experiments: dict, tables: dict) -> dict:
    """`experiments` (name -> what the claims read of it), each with `steps`: the last
    logged step of its table in `tables` (the horizon its races read)."""
    return {
        name: {**e, "steps": int(tables[name]["iteration"].max())} if name in tables else e
        for name, e in experiments.items()
    }


def race_words(experiment: dict) -> list[str]:
    """The constants of a paired race on `experiment`'s runs, the tuning aside."""
    found = [f"paired t-test's one-sided level = {ALPHA:g}"]
    probe = experiment.get("probe_samples")
    found.append(
        f"probe subset = {probe:,} training samples" if probe else "curve = train loss (no probe)"
    )
    if experiment.get("steps"):
        found.append(f"horizon = {experiment['steps']:,} steps")
    return found


def tuning_words(experiment: dict) -> list[str]:
    """The rule that chose the settings and the seed it read, where the sweep's record says
    the figure runs exactly its choice (workflow.tuning_record.CHECKED); otherwise that the
    settings are not the tuned ones, or are as configured with no record to check them
    against (never "chosen by"); [] where no sweep tunes them."""
    tuning = experiment.get("chosen_by") or {}
    if not tuning:
        return []
    said = tuning_record.words(tuning)
    if tuning["state"] != tuning_record.CHECKED:
        return [said]
    return [f"{said}, cap bound at <= {MAX_CAP_SHARE:.0%} of the steps"]


def words(experiment: dict, kind: str) -> list[str]:
    """The constants of ours beyond the optimizers' settings that a real-data row of test
    `kind` (claims.claim.KINDS) depends on; [] for other kinds."""
    if kind not in TUNED_KINDS:
        return []
    if kind == "race":
        return race_words(experiment) + tuning_words(experiment)
    return [f"Adam/SGD final-loss factor = {ADAM_GAP:g}", *tuning_words(experiment)]
