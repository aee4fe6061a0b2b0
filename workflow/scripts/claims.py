"""The claims table: results/claims.md and results/claims.csv, from the aggregate tables."""

from attnbias import claims, io, joblog

joblog.start(snakemake)
experiments = snakemake.params.experiments
expect = snakemake.params.identities  # input file -> the identity it must hold
tables = {
    name: io.load_metrics(path, expect[path])
    for name, path in zip(experiments, snakemake.input.metrics, strict=True)
}
svm_files, data_files = iter(snakemake.input.svm), iter(snakemake.input.data)
W_mm_norms, T_tokens = {}, {}
for name, experiment in experiments.items():  # the input lists follow this order, seed by seed
    W_mm_norms[name], T_tokens[name] = [], None
    for _ in range(experiment["seeds"]):
        data_path, svm_path = next(data_files), next(svm_files)
        dataset = io.load_data(data_path, expect[data_path])
        W_mm_norms[name].append(io.W_mm_norm(svm_path, dataset, expect[svm_path]))
        T_tokens[name] = T_tokens[name] or dataset["X"].shape[1]
table = claims.claims(experiments, tables, W_mm_norms, T_tokens)
io.save_text(snakemake.output.md, claims.to_markdown(table))
io.save_text(snakemake.output.html, claims.to_html(table))
io.save_csv(snakemake.output.csv, table)
