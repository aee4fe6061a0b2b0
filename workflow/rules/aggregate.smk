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
    script:
        "../scripts/aggregate.py"
