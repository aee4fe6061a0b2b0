rule figure:
    input:
        metrics="results/{experiment}/metrics.parquet",
        code=code("figure.py"),
    output:
        pdf="results/{experiment}.pdf",
        png="results/{experiment}.png",
    params:
        kind=experiment_config("figure"),
        title=experiment_config("title"),
        legend=optimizer_legend,
    log:
        "results/logs/figure/{experiment}.log",
    script:
        "../scripts/figure.py"
