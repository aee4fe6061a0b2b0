# Real-data figures (Figs. 1, 4, 6, 7 and 10; docs/real-data.md): check that data and
# weights are there, train per optimizer and seed, aggregate, draw.

REAL_TRAINING = _alternatives(WF.real_experiments)
SIMILARITY_FIGURES = _alternatives(REAL["similarity"])
# resource `gpu` of the real-data jobs: one, unless the config pins them to the CPU
REAL_GPUS = 0 if REAL["device"] == "cpu" else 1


rule real:
    """Every real-data figure (not part of `all`: they need datasets, weights and a GPU)."""
    default_target: False
    input:
        expand(results("{figure}.pdf"), figure=JOB.real.real_figures()),


rule check_real_data:
    input:
        code=code("check_real_data.py"),
    output:
        results("real/{figure}/source.json"),
    log:
        results("logs/real/{figure}/check.log"),
    conda:
        "../../envs/train-real.yaml"
    params:
        needs=JOB.real_needs,
        data_root=REAL["data_root"],
        download=REAL["download"],
        fetch=REAL["fetch_wheels"],
    script:
        "../scripts/check_real_data.py"


rule train_real:
    input:
        source=rules.check_real_data.output[0],
        code=code("train_real.py"),
        rule_code=JOB.rule_code,  # its optimizer's rule module (codedeps.rule_files)
    output:
        metrics=results("train/{figure}/{optimizer}/seed{seed}.parquet"),
    log:
        results("logs/train/{figure}/{optimizer}/seed{seed}.log"),
    benchmark:
        results("benchmarks/train_real/{figure}/{optimizer}/seed{seed}.tsv")
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/train-real.yaml"
    threads: JOB.real_threads
    resources:
        gpu=REAL_GPUS,
    params:
        experiment=JOB.real_settings,
        optimizer=JOB.optimizer,
        data_root=REAL["data_root"],
        device=REAL["device"],
        autocast=REAL["autocast"],
        checkpoint=results("checkpoints/{figure}/{optimizer}/seed{seed}.pt"),
        identity=JOB.real_run_identity,
    script:
        "../scripts/train_real.py"


rule aggregate_real:
    input:
        runs=JOB.run_tables(rules.train_real.output.metrics),
        code=code("aggregate.py"),
    output:
        results("{figure}/metrics.parquet"),
    log:
        results("logs/aggregate/{figure}.log"),
    benchmark:
        results("benchmarks/aggregate_real/{figure}.tsv")
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/plot.yaml"
    params:
        identity=JOB.metrics_identity,
        runs=JOB.run_table_identities(rules.train_real.output.metrics),
    script:
        "../scripts/aggregate.py"


rule figure_real:
    input:
        metrics=rules.aggregate_real.output[0],
        source=rules.check_real_data.output[0],
        benchmarks=benchmarks("train_real", "aggregate_real"),
        code=code("figure_real.py"),
    output:
        pdf=in_report(
            results("{figure}.pdf"), "real_figure.rst", "Real-data figures", "{figure}"
        ),
        png=in_report(
            results("{figure}.png"), "real_figure.rst", "Real-data figures", "{figure}"
        ),
        caption=results("{figure}.caption.md"),
        provenance=results("{figure}.provenance.json"),
    log:
        results("logs/figure/{figure}.log"),
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/plot.yaml"
    params:
        title=JOB.title,
        legend=JOB.legend,
        settings=JOB.real_settings,
        config=JOB.figure_config,
        # checked against the sweep's record where built (workflow.tuning_record)
        tuning=JOB.real_tuning(results("{figure}_final.csv")),
        identity=JOB.metrics_identity,
    script:
        "../scripts/figure_real.py"


rule token_similarity:
    input:
        source=rules.check_real_data.output[0],
        code=code("token_similarity.py"),
    output:
        results("{figure}/similarity/{dataset}.parquet"),
    log:
        results("logs/{figure}/{dataset}.log"),
    benchmark:
        results("benchmarks/token_similarity/{figure}/{dataset}.tsv")
    wildcard_constraints:
        figure=SIMILARITY_FIGURES,
    conda:
        "../../envs/train-real.yaml"
    threads: REAL["threads"]
    resources:
        gpu=REAL_GPUS,
    params:
        settings=JOB.similarity_settings,
        data_root=REAL["data_root"],
        device=REAL["device"],
    script:
        "../scripts/token_similarity.py"


rule figure_similarity:
    input:
        values=JOB.similarity_tables(rules.token_similarity.output[0]),
        source=rules.check_real_data.output[0],
        benchmarks=benchmarks("token_similarity", jobs=JOB.similarity_datasets),
        code=code("figure_similarity.py"),
    output:
        pdf=in_report(
            results("{figure}.pdf"), "similarity.rst", "Real-data figures", "{figure}"
        ),
        png=in_report(
            results("{figure}.png"), "similarity.rst", "Real-data figures", "{figure}"
        ),
        caption=results("{figure}.caption.md"),
        provenance=results("{figure}.provenance.json"),
    log:
        results("logs/figure/{figure}.log"),
    wildcard_constraints:
        figure=SIMILARITY_FIGURES,
    conda:
        "../../envs/plot.yaml"
    params:
        title=JOB.similarity_title,
        config=JOB.similarity_config,
    script:
        "../scripts/figure_similarity.py"


rule final_values_real:
    """Each optimizer's end point (final train loss, test accuracy, probe area, cap share)
    and the setting of each rule that real_data.tuning's rule chooses: the record of a
    learning-rate sweep's choice (fig6_mnist5k_lr)."""
    input:
        metrics=rules.aggregate_real.output[0],
        code=code("final_values_real.py"),
    output:
        results("{figure}_final.csv"),
    log:
        results("logs/final/{figure}.log"),
    wildcard_constraints:
        figure=REAL_TRAINING,
    conda:
        "../../envs/plot.yaml"
    params:
        optimizers=JOB.real_optimizers,
        tuning_rule=REAL["tuning"]["rule"],
        sweep=JOB.real_sweep,
        identity=JOB.metrics_identity,
    script:
        "../scripts/final_values_real.py"
