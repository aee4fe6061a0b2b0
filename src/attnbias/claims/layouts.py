"""The whole table (`claims`): every registry statement (statements.STATEMENTS) measured on
every experiment of its layouts, one row per measured run, and a "not measured" row for a
statement that no run of the build measures.

A run bit-identical to another experiment's (fig2's NGD, whose cap never binds, is
fig2_uncapped's NGD) gives its rows once: on the run without the setting that changed
nothing (the uncapped one), which also stands for the other's algorithm (duplicates). A
statement about the data (Statement.of_data) reads experiments whose data and W-SVM arrays
are bit-identical (fig2's and fig2_uncapped's) once, on the first in config order
(same_data).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace

import pandas as pd

from attnbias.claims import real_tuning
from attnbias.claims.beyond import BEYOND
from attnbias.claims.beyond_seeds import seed_words
from attnbias.claims.claim import Claim, Statement, by_result, frame
from attnbias.claims.rows import Rows, Run
from attnbias.claims.statements import STATEMENTS
from attnbias.optim.spec import resolve
from attnbias.realdata import cap_bound


def fingerprint(table: pd.DataFrame, optimizer: str) -> str:
    """A hash of one optimizer's logged numbers (every seed, metric and iteration)."""
    mine = table[table["optimizer"] == optimizer]
    mine = mine.sort_values(["seed", "metric", "iteration"])[
        ["seed", "metric", "iteration", "value"]
    ]
    return hashlib.sha256(
        pd.util.hash_pandas_object(mine, index=False).to_numpy().tobytes()
    ).hexdigest()


def duplicates(experiments: dict, tables: dict, specs: dict) -> tuple[dict, dict]:
    """(dropped, kept): experiment -> {optimizer: the experiment that gives its rows}, and
    experiment -> {optimizer: [(experiment, algorithm) it stands for]}, over runs whose
    logged numbers are bit-identical. The kept run is the one without a cap, else the
    first in config order. specs: experiment -> its optimizers' specs (optim.spec.resolve)."""
    groups: dict[str, list] = {}
    for name, e in experiments.items():
        if name not in tables or e["layout"] == "real":
            continue
        for opt, spec in specs[name].items():
            alg = spec.algorithm(e["layout"])
            groups.setdefault(fingerprint(tables[name], opt), []).append((name, opt, alg))
    dropped: dict = {}
    kept: dict = {}
    for runs in groups.values():
        if len({name for name, _, _ in runs}) < 2:  # within one experiment: a race's rival
            continue
        keep = min(runs, key=lambda r: (r[2].endswith("-capped"), runs.index(r)))
        for name, opt, alg in runs:
            if (name, opt) != keep[:2]:
                dropped.setdefault(name, {})[opt] = keep[0]
                kept.setdefault(keep[0], {}).setdefault(keep[1], []).append((name, alg))
    return dropped, kept


def same_data(data_ids: dict) -> tuple[dict, dict]:
    """(dropped, kept): experiment -> the experiment whose bit-identical data give its rows
    (the first in order with that identity), and experiment -> the ones it stands for, from
    each experiment's data identity (claims.inputs.ExperimentInputs.data_identity)."""
    first: dict[str, str] = {}
    dropped: dict[str, str] = {}
    kept: dict[str, list] = {}
    for name, identity in data_ids.items():
        if identity in first:
            dropped[name] = first[identity]
            kept.setdefault(first[identity], []).append(name)
        else:
            first[identity] = name
    return dropped, kept


def reads(statement: Statement, dataset: str) -> bool:
    """Whether a real-data statement is measured on `dataset`: its own data (a name prefix:
    mnist5k is MNIST's subset) or a stand-in (other data, measured as a comparison)."""
    return dataset.startswith(statement.datasets) or dataset in statement.stand_ins


def where(rows: Rows) -> str:
    """A real-data row's "where": the experiment, its data, model and scale, its seeds (and
    the seed its settings were tuned on, never reported, where a sweep tuned them)."""
    run = rows.run
    seeds = seed_words([int(s) for s in run.seeds]) if "seed" in run.table else ""
    parts = (run.dataset, run.scale, seeds, run.tuning)
    return f"{rows.experiment} ({', '.join(p for p in parts if p)})"


def comparison_scope(statement: Statement, run) -> str:
    """What makes a real-data run a comparison, not a verdict ("" for the statement's own
    data): a stand-in (other data and a smaller model) or a variant (mnist5k: 5,000 MNIST
    images, a ViT reduced to fit a CPU) of the paper's setting."""
    if not statement.datasets or run.dataset in statement.datasets:
        return ""
    if run.dataset in statement.stand_ins:
        return f"{run.dataset} with {run.scale}: other data and model than {statement.data}"
    return f"{run.dataset}, a reduced setting of {statement.data}"


def not_measured(statement: Statement) -> Claim:
    """The row of a statement that no run of this build measures (outside the counts)."""
    return Claim(
        result=statement.result,
        experiment="-",
        claim=statement.quote,
        source=statement.where,
        quantity="",
        window="",
        mean=math.nan,
        low=math.nan,
        high=math.nan,
        reference="",
        holds=False,
        key=f"{statement.key} not measured",
        value_text="",
        algorithm=", ".join(statement.covers or ()),
        kind="not measured",
        statement=statement.key,
        detail=statement.missing,
    )


def claims(
    experiments: dict,
    tables: dict,
    W_mm_norms: dict | None = None,
    T_tokens: dict | None = None,
    hypotheses: dict | None = None,
    u_margins: dict | None = None,
    feasibility: dict | None = None,
    data_ids: dict | None = None,
) -> pd.DataFrame:
    """Every statement of the registry, measured on the configured experiments (one row per
    run measured, or one "not measured" row).

    experiments: name -> layout, optimizers (settings), labels, paper_figure, and for real
    data its dataset (WorkflowConfig.claims_settings); tables: name -> its aggregate table
    (a real-data experiment without a built table is left out); feasibility: name -> each
    seed's sizes and smallest W-SVM constraint value (claims.inputs.ExperimentInputs);
    data_ids: name -> its data identity (same_data; None: every experiment's data its own)."""
    # the optimizer and metric names as categories: every row reads them by equality
    # (the similarity tables have neither: bins and a summary)
    tables = {
        n: t.astype({c: "category" for c in ("optimizer", "metric") if c in t})
        for n, t in tables.items()
    }
    # each experiment's optimizers, resolved once: every row reads their specs
    specs = {
        n: resolve(e["optimizers"], real=e["layout"] == "real")
        for n, e in experiments.items()
        if n in tables
    }
    dropped, kept = duplicates(experiments, tables, specs)
    data_dropped, data_kept = same_data(data_ids or {})
    collectors = []
    for name, e in experiments.items():
        if name not in tables:
            continue
        run = Run(tables[name], e["optimizers"], e["layout"], (W_mm_norms or {}).get(name, []),
                  (T_tokens or {}).get(name, 0), (u_margins or {}).get(name),
                  e.get("dataset", ""), e.get("scale", ""), e.get("data", ""),
                  (feasibility or {}).get(name), e.get("tuning", ""),
                  e.get("chosen_by") or {})  # fmt: skip
        collectors.append(
            Rows(
                e.get("figure", name),
                (hypotheses or {}).get(name),
                # a run whose cap bound at most steps is named as the SGD it became
                cap_bound.relabel(e.get("labels"), e["optimizers"], tables[name]),
                specs[name],
                e["layout"],
                e.get("paper_figure"),
                run,
                dropped.get(name),
                kept.get(name),
            )  # fmt: skip
        )
    out = []
    for statement in STATEMENTS + BEYOND:  # the paper's, then beyond it (counted apart)
        found = []
        for rows in collectors:
            if rows.run.layout not in statement.layouts:
                continue
            if statement.datasets and not reads(statement, rows.run.dataset):
                continue
            if statement.of_data and rows.experiment in data_dropped:
                continue  # its data are another experiment's, bit for bit: read there
            rows.statement, rows.rows = statement, []
            statement.measure(rows)
            twins = data_kept.get(rows.experiment) if statement.of_data else None
            if twins:
                same = f" (= {', '.join(twins)}: bit-identical data and W-SVM)"
                rows.rows = [replace(r, experiment=r.experiment + same) for r in rows.rows]
            if statement.datasets:  # real data: the "where" names the data, model and scale
                rows.rows = [replace(r, experiment=where(rows)) for r in rows.rows]
                # and a race on settings that are not the tuned ones is no verdict
                rows.rows = real_tuning.judged(rows.rows, rows.run.chosen_by)
            scope = comparison_scope(statement, rows.run)
            if scope:  # a row that is a comparison already keeps its reason beside this one
                rows.rows = [
                    replace(
                        r,
                        covered=False,
                        algorithm=scope if r.covered else f"{r.algorithm}; {scope}",
                    )
                    for r in rows.rows
                ]
            found += rows.rows
        out += found or [not_measured(statement)]
    return by_result(frame(out)).reset_index(drop=True)  # grouped by result, as shown
