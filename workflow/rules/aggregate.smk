rule aggregate:
    input:
        runs=get_train_tables,
        code=code("aggregate.py"),
    output:
        results("{experiment}/metrics.parquet"),
    log:
        results("logs/aggregate/{experiment}.log"),
    benchmark:
        results("benchmarks/aggregate/{experiment}.tsv")
    conda:
        "../../envs/plot.yaml"
    params:
        identity=get_metrics_identity,
        runs=get_train_table_identities,
    script:
        "../scripts/aggregate.py"
