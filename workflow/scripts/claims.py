"""The claims table: results/claims.{md,html,csv,tex}, from the aggregate tables, the SVM
and data files (||W_mm||, the hypotheses their jobs stored), for joint training the final
parameters, and the real-data run tables the build holds."""

from attnbias import claims
from attnbias.data import hypotheses
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
experiments = snakemake.params.experiments
expect = snakemake.params.identities  # input file -> the identity it must hold
tables = {
    name: io.load_metrics(path, expect[path])
    for name, path in zip(experiments, snakemake.input.metrics, strict=True)
}
svm_files, data_files = iter(snakemake.input.svm), iter(snakemake.input.data)
final_files = iter(snakemake.input.final)
W_mm_norms, T_tokens, data_hypotheses, u_margins = {}, {}, {}, {}
for name, experiment in experiments.items():  # the input lists follow this order, seed by seed
    seeds = range(experiment["seeds"])
    data_paths = [next(data_files) for _ in seeds]
    svm_paths = [next(svm_files) for _ in seeds]
    datasets = [io.load_data(p, expect[p]) for p in data_paths]
    svms = [io.load_svm(p, d, expect[p]) for p, d in zip(svm_paths, datasets, strict=True)]
    W_mm_norms[name] = [float((s["W_mm"] ** 2).sum() ** 0.5) for s in svms]
    T_tokens[name] = datasets[0]["X"].shape[1]
    data_hypotheses[name] = hypotheses.summarize(
        [io.seed_hypotheses(d, s, expect) for d, s in zip(data_paths, svm_paths, strict=True)]
    )
    if experiment["layout"] == "joint":  # the final u of every optimizer and seed
        u_margins[name] = {}
        for opt in experiment["optimizers"]:
            finals = [next(final_files) for _ in seeds]
            u_margins[name][opt] = [
                claims.u_margin_ratio(
                    d["X"], d["y"], d["opt"], io.load_npz(f, expect=expect[f])["u"], s["u_mm"]
                )
                for d, s, f in zip(datasets, svms, finals, strict=True)
            ]
# the real-data experiments whose run tables this build holds (the others: "not measured")
real = snakemake.params.real
for name, experiment in real.items():
    tables[name] = io.load_metrics(experiment["table"], experiment["identity"])
# the token-similarity panels this build holds (Fig. 10 and its variants)
similarity = snakemake.params.similarity
for name, panel in similarity.items():
    tables[name] = io.load_frame(panel["table"])
table = claims.claims(
    experiments | real | similarity, tables, W_mm_norms, T_tokens, data_hypotheses, u_margins
)
# as the figures' footnotes say it, from the runs' files
backend = provenance.trained_on(provenance.training_info(snakemake.input.runs)) or "not recorded"
io.save_text(snakemake.output.md, claims.to_markdown(table, backend))
io.save_text(snakemake.output.html, claims.to_html(table, backend))
io.save_text(snakemake.output.tex, claims.to_latex(table))
io.save_csv(snakemake.output.csv, table)
provenance.save(
    snakemake.output.provenance, provenance.of_job(snakemake, figure="claims", title="claims")
)
