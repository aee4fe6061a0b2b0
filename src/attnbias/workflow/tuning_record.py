"""Whether a real-data figure runs the settings its learning-rate sweep chose, read from the
sweep's record (results/<sweep>_final.csv, written by final_values_real: its `best_of_rule`
column marks the setting of each rule that real_data.tuning's rule chose on the tuning seed),
never assumed from the config.

Three states, in the figure's caption and its claims rows: CHECKED (the record is in the
results folder and marks exactly the figure's settings), DIFFERS (it is there and marks other
settings: which optimizer's, and what the sweep chose) and NOT_BUILT (no record: the
settings are as configured). The workflow reads the record when it plans the jobs
(RealDataConfig.tuning), so a record that appears or changes reruns the
jobs that print these words, never a training job.
"""

from __future__ import annotations

import os

import pandas as pd

from attnbias.optim.spec import resolve

CHECKED, DIFFERS, NOT_BUILT = "checked", "differs", "not built"

# a sweep's record's columns, as realdata.final_values writes them (defined here, where the
# workflow reads the record when it plans the jobs, below realdata's floor)
COLUMNS = [
    "optimizer", "label", "rule", "settings", "seeds", "final_iteration",
    "final_train_loss", "final_test_accuracy", "probe_area", "cap_bound_share", "best_of_rule",
]  # fmt: skip


def chosen(record: pd.DataFrame) -> dict[str, str]:
    """Rule -> the settings (spec.settings_text) a sweep's record marks `best_of_rule`."""
    marked = record[record["best_of_rule"].astype(str) == "True"]
    return dict(zip(marked["rule"], marked["settings"], strict=True))


def mismatches(choice: dict[str, str], runs) -> list[dict]:
    """Where a figure's runs ((optimizer, rule, settings) each) and a sweep's `choice`
    (chosen) differ: each run whose rule the sweep chose other settings for (`chosen`) or
    none (None), and each chosen rule that no run runs (`optimizer` None). [] where the
    figure runs exactly what the sweep chose."""
    runs = list(runs)
    out = [
        {"optimizer": name, "rule": rule, "runs": settings, "chosen": choice.get(rule)}
        for name, rule, settings in runs
        if choice.get(rule) != settings
    ]
    ran = {rule for _, rule, _ in runs}
    out += [
        {"optimizer": None, "rule": rule, "runs": None, "chosen": settings}
        for rule, settings in choice.items()
        if rule not in ran
    ]
    return out


def configured(optimizers: dict) -> list[tuple[str, str, str]]:
    """A figure's optimizers (name -> config entry) as (name, rule, settings), the settings
    in the words final_values writes (spec.settings_text)."""
    specs = resolve(optimizers, real=True)
    return [(name, spec.rule, spec.settings_text()) for name, spec in specs.items()]


def read(path: str) -> dict[str, str]:
    """The choice (chosen) of the sweep record at `path`; a file whose columns are not those
    final_values_real writes, or whose best_of_rule is not True/False, is refused by name."""
    # read at planning time, so every run stops here until the file is rebuilt
    again = f"delete it, then rebuild it (snakemake {path})"
    try:
        record = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a sweep's record ({e}); {again}") from e
    if list(record.columns) != COLUMNS:
        raise ValueError(
            f"{path}: a sweep's record has the columns final_values_real writes ({COLUMNS}), "
            f"not {list(record.columns)}; {again}"
        )
    odd = sorted(set(record["best_of_rule"]) - {"True", "False"})
    if odd:
        raise ValueError(f"{path}: best_of_rule is True or False, not {odd}; {again}")
    return chosen(record)


def check(optimizers: dict, sweeps: list[str], record: str) -> dict:
    """The state of a figure's settings (its `optimizers`) against the records of its
    `sweeps` (`record`: the records' path, a pattern of {figure}): {state, records: the
    records' paths, chosen: rule -> settings where every record is built, mismatches}."""
    paths = [record.format(figure=sweep) for sweep in sweeps]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        return {"state": NOT_BUILT, "records": missing}
    choice = {rule: s for p in paths for rule, s in read(p).items()}
    differ = mismatches(choice, configured(optimizers))
    return {"state": DIFFERS if differ else CHECKED, "records": paths, "chosen": choice,
            "mismatches": differ}  # fmt: skip


def _difference(m: dict, sweeps: str) -> str:
    if m["optimizer"] is None:
        return f"{sweeps} chose {m['rule']} {m['chosen']}, which no optimizer runs"
    if m["chosen"] is None:
        return f"{m['optimizer']} runs {m['rule']}, which {sweeps} did not tune"
    return f"{m['optimizer']} runs {m['runs']} where {sweeps} chose {m['chosen']}"


def words(tuning: dict) -> str:
    """A figure's tuning (workflow.real_config.RealDataConfig.tuning: seed, sweeps, rule and
    check's state) in words; "" for {} (no sweep)."""
    if not tuning:
        return ""
    sweeps = ", ".join(tuning["sweeps"])
    by = f"{tuning['rule']} on seed {tuning['seed']}"
    if tuning["state"] == CHECKED:
        return f"settings chosen by {by} ({sweeps}, checked against its record)"
    if tuning["state"] == DIFFERS:
        found = "; ".join(_difference(m, sweeps) for m in tuning["mismatches"])
        return f"settings not the tuned ones: {found} (by {by})"
    their = "their sweep {} is" if len(tuning["sweeps"]) == 1 else "their sweeps {} are"
    return (
        f"settings as configured: {their.format(sweeps)} not in this results folder "
        f"(snakemake {' '.join(tuning['records'])})"
    )
