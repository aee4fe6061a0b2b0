"""The claims table: results/claims.md and results/claims.csv, from the aggregate tables."""

from attnbias import claims, io

experiments = snakemake.params.experiments
tables = dict(zip(experiments, map(io.load_metrics, snakemake.input.metrics), strict=True))
svm_files, data_files = iter(snakemake.input.svm), iter(snakemake.input.data)
W_mm_norms, T_tokens = {}, {}
for name, experiment in experiments.items():  # the input lists follow this order, seed by seed
    seeds = range(experiment["seeds"])
    W_mm_norms[name] = [io.W_mm_norm(next(svm_files)) for _ in seeds]
    T_tokens[name] = [io.load_data(next(data_files))["X"].shape[1] for _ in seeds][0]
table = claims.claims(experiments, tables, W_mm_norms, T_tokens)
io.save_text(snakemake.output.md, claims.to_markdown(table))
io.save_text(snakemake.output.html, claims.to_html(table))
io.save_csv(snakemake.output.csv, table)
