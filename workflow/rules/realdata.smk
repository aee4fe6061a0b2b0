# Real-data figures (Figs. 1, 4, 6, 7 and 10): check that data and weights are where the
# config says, train per optimizer and seed, aggregate, draw. Helpers live in common.smk.


rule real:
    """Every real-data figure (not part of `all`: they need datasets, weights and a GPU)."""
    default_target: False
    input:
        real_figure_targets(),


rule check_real_data:
    input:
        code=code("check_real_data.py"),
    output:
        "results/real/{figure}/source.json",
    log:
        "results/logs/real/{figure}/check.log",
    conda:
        "../../envs/train-real.yaml"
    params:
        needs=real_needs,
        data_root=REAL["data_root"],
        download=REAL["download"],
    script:
        "../scripts/check_real_data.py"


rule train_real:
    input:
        source="results/real/{figure}/source.json",
        code=code("train_real.py"),
    output:
        metrics="results/train/{figure}/{optimizer}/seed{seed}.parquet",
    log:
        "results/logs/train/{figure}/{optimizer}/seed{seed}.log",
    benchmark:
        "results/benchmarks/train_real/{figure}/{optimizer}/seed{seed}.tsv"
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/train-real.yaml"
    threads: REAL["threads"]
    resources:
        gpu=real_gpus,
    params:
        experiment=real_experiment_settings,
        optimizer=real_optimizer_settings,
        data_root=REAL["data_root"],
        device=REAL["device"],
        autocast=REAL["autocast"],
        checkpoint="results/checkpoints/{figure}/{optimizer}/seed{seed}.pt",
        identity=real_identity_of("run"),
    script:
        "../scripts/train_real.py"


rule aggregate_real:
    input:
        runs=real_run_files("results/train/{figure}/{optimizer}/seed{seed}.parquet"),
        code=code("aggregate.py"),
    output:
        "results/{figure}/metrics.parquet",
    log:
        "results/logs/aggregate/{figure}.log",
    benchmark:
        "results/benchmarks/aggregate_real/{figure}.tsv"
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/plot.yaml"
    params:
        identity=real_identity_of("metrics"),
        runs=real_run_identities,
    script:
        "../scripts/aggregate.py"


rule figure_real:
    input:
        metrics="results/{figure}/metrics.parquet",
        source="results/real/{figure}/source.json",
        runs=real_run_files("results/train/{figure}/{optimizer}/seed{seed}.parquet"),
        benchmarks=benchmarks("train_real", "aggregate_real", jobs=real_jobs),
        code=code("figure_real.py"),
    output:
        pdf=report(
            "results/{figure}.pdf",
            caption="../report/real_figure.rst",
            category="Real-data figures",
            subcategory="{figure}",
        ),
        png=report(
            "results/{figure}.png",
            caption="../report/real_figure.rst",
            category="Real-data figures",
            subcategory="{figure}",
        ),
        provenance="results/{figure}.provenance.json",
    log:
        "results/logs/figure/{figure}.log",
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/plot.yaml"
    params:
        title=real_title,
        legend=real_legend,
        settings=real_experiment_settings,
        config=real_figure_config,
        identity=real_identity_of("metrics"),
    script:
        "../scripts/figure_real.py"


rule token_similarity:
    input:
        source=f"results/real/{SIMILARITY_FIGURE}/source.json",
        code=code("token_similarity.py"),
    output:
        f"results/{SIMILARITY_FIGURE}/similarity/{{dataset}}.parquet",
    log:
        f"results/logs/{SIMILARITY_FIGURE}/{{dataset}}.log",
    benchmark:
        f"results/benchmarks/token_similarity/{SIMILARITY_FIGURE}/{{dataset}}.tsv"
    conda:
        "../../envs/train-real.yaml"
    threads: REAL["threads"]
    resources:
        gpu=real_gpus,
    params:
        settings=similarity_settings,
        data_root=REAL["data_root"],
        device=REAL["device"],
    script:
        "../scripts/token_similarity.py"


rule figure_similarity:
    input:
        values=expand(
            f"results/{SIMILARITY_FIGURE}/similarity/{{dataset}}.parquet",
            dataset=REAL["similarity"]["samples"],
        ),
        source=f"results/real/{SIMILARITY_FIGURE}/source.json",
        benchmarks=benchmarks("token_similarity", jobs=similarity_jobs),
        code=code("figure_similarity.py"),
    output:
        pdf=report(
            f"results/{SIMILARITY_FIGURE}.pdf",
            caption="../report/similarity.rst",
            category="Real-data figures",
            subcategory=SIMILARITY_FIGURE,
        ),
        png=report(
            f"results/{SIMILARITY_FIGURE}.png",
            caption="../report/similarity.rst",
            category="Real-data figures",
            subcategory=SIMILARITY_FIGURE,
        ),
        provenance=f"results/{SIMILARITY_FIGURE}.provenance.json",
    log:
        f"results/logs/figure/{SIMILARITY_FIGURE}.log",
    conda:
        "../../envs/plot.yaml"
    params:
        title=REAL["similarity"]["title"],
        config=similarity_figure_config,
    script:
        "../scripts/figure_similarity.py"
