rule figure:
    input:
        unpack(geometry_files),
        metrics=rules.aggregate.output[0],
        runs=run_files(rules.train.output.metrics),
        data=seed_files(rules.data.output[0]),
        svm=seed_files(rules.svm.output[0]),
        benchmarks=benchmarks("data", "svm", "train", "aggregate"),
        code=code("figure.py"),
    output:
        pdf=report(
            results("{experiment}.pdf"),
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{experiment}",
        ),
        png=report(
            results("{experiment}.png"),
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{experiment}",
        ),
        provenance=results("{experiment}.provenance.json"),
    log:
        results("logs/figure/{experiment}.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        kind=section("layout"),
        description=of_job(WF.description),
        title=of_job(WF.title),
        legend=of_job(WF.legend),
        config=of_job(WF.figure_config),
        identity=of_job(WF.identity, "metrics"),
    script:
        "../scripts/figure.py"
