rule aggregate:
    input:
        runs=run_files("results/train/{experiment}/{optimizer}/seed{seed}.parquet"),
        code=code("aggregate.py"),
    output:
        "results/{experiment}/metrics.parquet",
    log:
        "results/logs/aggregate/{experiment}.log",
    benchmark:
        "results/benchmarks/aggregate/{experiment}.tsv"
    conda:
        "../../envs/plot.yaml"
    params:
        identity=identity_of("metrics"),
        runs=run_identities,
    script:
        "../scripts/aggregate.py"
