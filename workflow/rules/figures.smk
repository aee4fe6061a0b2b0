from attnbias.panels import describe


def figure_description(wildcards):
    """The report caption's description of the figure's panels (attnbias.panels)."""
    experiment = EXPERIMENTS[wildcards.experiment]
    return describe(experiment["figure"], experiment["data"]["model"])


rule figure:
    input:
        unpack(geometry_files),
        metrics="results/{experiment}/metrics.parquet",
        runs=run_files("results/train/{experiment}/{optimizer}/seed{seed}.parquet"),
        data=seed_files("results/data/{experiment}/seed{seed}.npz"),
        benchmarks=benchmarks("data", "svm", "train", "aggregate"),
        code=code("figure.py"),
    output:
        pdf=report(
            "results/{experiment}.pdf",
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{experiment}",
        ),
        png=report(
            "results/{experiment}.png",
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{experiment}",
        ),
        provenance="results/{experiment}.provenance.json",
    log:
        "results/logs/figure/{experiment}.log",
    conda:
        "../../envs/plot.yaml"
    params:
        kind=experiment_config("figure"),
        description=figure_description,
        title=figure_title,
        legend=optimizer_legend,
        config=figure_config,
        identity=identity_of("metrics"),
    script:
        "../scripts/figure.py"
