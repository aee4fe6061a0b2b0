"""The claims table: results/claims.{md,html,csv,tex}, from the aggregate tables, the SVM
and data files (||W_mm||, the hypotheses their jobs stored), for joint training the final
parameters, and the real-data run tables the build holds.

Inputs are named by experiment (workflow/rules/claims.smk, attnbias.claims.inputs): metrics/<name>,
data/<name>, svm/<name> and, for joint training, final/<name>/<optimizer>. The robustness
table (claims_robustness.parquet, attnbias.claims.robustness) adds the column robustness
where this build holds it; without, the default build's constants' (fig2's caps:
claims_robustness_default.parquet), naming the constants left unmeasured; without either,
the column says why."""

from attnbias.claims import beyond_seeds, layouts, real_constants, robustness, write
from attnbias.claims import inputs as claims_inputs
from attnbias.workflow import io, joblog, parquet, provenance, store

joblog.start(snakemake)
i = snakemake.input
experiments = snakemake.params.experiments
expect = snakemake.params.identities  # input file -> the identity (or seeds') it must hold


inputs = {
    name: claims_inputs.load(claims_inputs.named(i, name), e, expect)
    for name, e in experiments.items()
}
arguments = claims_inputs.claims_arguments(inputs)
tables, W_mm_norms, T_tokens, data_hypotheses, u_margins, feasibility, data_ids = arguments
# the real-data experiments whose run tables this build holds (the others: "not measured")
real = snakemake.params.real
for name, experiment in real.items():
    tables[name] = parquet.load_metrics(experiment["table"], experiment["identity"])
# the token-similarity panels this build holds (Fig. 10 and its variants)
similarity = snakemake.params.similarity
for name, panel in similarity.items():
    tables[name] = parquet.load_frame(panel["table"])
# the geometry experiments whose tables this build holds (beyond the paper)
geometry = snakemake.params.geometry
for name, experiment in geometry.items():
    tables[name] = parquet.load_metrics(experiment["table"], experiment["identity"])
table = layouts.claims(
    experiments | real | similarity | geometry,
    tables,
    W_mm_norms,
    T_tokens,
    data_hypotheses,
    u_margins,
    feasibility,
    data_ids,
)
# robustness to the constants the paper lost and we chose (claims_robustness), where measured
found = snakemake.params.robustness
robust, absent = None, found.get("absent", "")
if "table" in found:
    try:
        robust = parquet.load_frame(found["table"], found["identity"])
    except store.FileContractError as err:
        if "sha256" not in found:  # an input of this build, not a table left by another
            raise
        absent = f"the table found is not of this config ({err})"
        if found.get("fallback"):  # the default build's constants' (an input: must load)
            found = found["fallback"]
            robust = parquet.load_frame(found["table"], found["identity"])
# where only the default build's constants are measured: the others, and how to measure them
unmeasured = (found.get("unmeasured", []), found.get("hint", "")) if robust is not None else None
table = robustness.annotate(table, robust, absent, unmeasured)
# the constants each row names; a real-data race's horizon is its table's last step
real = real_constants.with_horizon(real, tables)
table = robustness.named(table, snakemake.params.constants, experiments | real | geometry)
# as the figures' footnotes say it: where the runs trained, from the aggregates' records
aggregates = [claims_inputs.named(i, name)("metrics") for name in experiments]
records = [record for table_path in aggregates for record in parquet.run_records(table_path)]
backend = provenance.trained_on(provenance.training_info(records)) or "not recorded"
# the experiments of optional targets (not in `snakemake`'s default build): the header says
# what their rows add to the counts
optional = [*real, *(panel["figure"] for panel in similarity.values())]
optional += [name for name, e in geometry.items() if e["optional"]]
# the tuning seed of the geometry experiments and the seeds their rows report
seeds = beyond_seeds.seeds_sentence(geometry, tables)
io.save_text(snakemake.output.md, write.to_markdown(table, backend, optional, seeds))
io.save_text(snakemake.output.html, write.to_html(table, backend, optional, seeds))
io.save_text(snakemake.output.tex, write.to_latex(table))
io.save_csv(snakemake.output.csv, write.to_csv(table))
record = provenance.of_job(snakemake, figure="claims", title="claims", training=aggregates)
provenance.save(snakemake.output.provenance, record)
