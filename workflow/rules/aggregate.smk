rule aggregate:
    input:
        runs=run_files(rules.train.output.metrics),
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
        identity=of_job(WF.identity, "metrics"),
        runs=of_job(WF.run_identities, rules.train.output.metrics),
    script:
        "../scripts/aggregate.py"
