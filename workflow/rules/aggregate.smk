rule aggregate:
    input:
        runs=JOB.run_tables(rules.train.output.metrics),
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
        identity=JOB.metrics_identity,
        runs=JOB.run_table_identities(rules.train.output.metrics),
    script:
        "../scripts/aggregate.py"
