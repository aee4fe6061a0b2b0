rule figure:
    input:
        metrics="results/{experiment}/metrics.parquet",
        code=code("figure.py"),
    output:
        pdf="results/{experiment}.pdf",
        png="results/{experiment}.png",
    log:
        "results/logs/figure/{experiment}.log",
    params:
        kind=experiment_config("figure"),
        title=experiment_config("title"),
        legend=optimizer_legend,
    script:
        "../scripts/figure.py"
