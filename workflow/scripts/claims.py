"""The claims table: results/claims.{md,html,csv,tex}, from the aggregate tables, the SVM
and data files (||W_mm||, the hypotheses their jobs stored), for joint training the final
parameters, and the real-data run tables the build holds.

Inputs are named by experiment (workflow/rules/claims.smk, claims_inputs): metrics/<name>,
data/<name>, svm/<name> and, for joint training, final/<name>/<optimizer>."""

from attnbias import claims
from attnbias.data import hypotheses
from attnbias.workflow import io, joblog, provenance
from attnbias.workflow.svm_file import load_svm

joblog.start(snakemake)
i = snakemake.input
experiments = snakemake.params.experiments
expect = snakemake.params.identities  # input file -> the identity (or seeds') it must hold


def path(kind, name, *more):
    """The input of `kind` (metrics, data, svm, final) for experiment `name`."""
    return i["/".join((kind, name, *more))]


tables = {}
W_mm_norms, T_tokens, data_hypotheses, u_margins = {}, {}, {}, {}
for name, experiment in experiments.items():
    tables[name] = io.load_metrics(path("metrics", name), expect[path("metrics", name)])
    data, svm = path("data", name), path("svm", name)
    datasets = io.load_data(data, expect[data])
    svms = load_svm(svm, datasets, expect[svm])
    W_mm_norms[name] = [float((s["W_mm"] ** 2).sum() ** 0.5) for s in svms.values()]
    T_tokens[name] = datasets[0]["X"].shape[1]
    data_hypotheses[name] = hypotheses.summarize(io.hypotheses_by_seed(data, svm, expect))
    if experiment["layout"] == "joint":  # the final u of every optimizer and seed
        u_margins[name] = {}
        for opt in experiment["optimizers"]:
            final = path("final", name, opt)
            finals = io.load_seeds(final, ("u",), expect[final])
            u_margins[name][opt] = [
                claims.u_margin_ratio(d["X"], d["y"], d["opt"], finals[s]["u"], svms[s]["u_mm"])
                for s, d in datasets.items()
            ]
# the real-data experiments whose run tables this build holds (the others: "not measured")
real = snakemake.params.real
for name, experiment in real.items():
    tables[name] = io.load_metrics(experiment["table"], experiment["identity"])
# the token-similarity panels this build holds (Fig. 10 and its variants)
similarity = snakemake.params.similarity
for name, panel in similarity.items():
    tables[name] = io.load_frame(panel["table"])
# the geometry experiments whose tables this build holds (beyond the paper)
geometry = snakemake.params.geometry
for name, experiment in geometry.items():
    tables[name] = io.load_metrics(experiment["table"], experiment["identity"])
table = claims.claims(
    experiments | real | similarity | geometry,
    tables,
    W_mm_norms,
    T_tokens,
    data_hypotheses,
    u_margins,
)
# as the figures' footnotes say it: where the runs trained, from the aggregates' records
aggregates = [path("metrics", name) for name in experiments]
records = [record for table_path in aggregates for record in io.run_records(table_path)]
backend = provenance.trained_on(provenance.training_info(records)) or "not recorded"
# the experiments of optional targets (not in `snakemake`'s default build): the header says
# what their rows add to the counts
optional = [*real, *(panel["figure"] for panel in similarity.values())]
optional += [name for name, e in geometry.items() if e["optional"]]
io.save_text(snakemake.output.md, claims.to_markdown(table, backend, optional))
io.save_text(snakemake.output.html, claims.to_html(table, backend, optional))
io.save_text(snakemake.output.tex, claims.to_latex(table))
io.save_csv(snakemake.output.csv, table)
record = provenance.of_job(snakemake, figure="claims", title="claims", training=aggregates)
provenance.save(snakemake.output.provenance, record)
