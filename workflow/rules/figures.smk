rule figure:
    input:
        metrics=rules.aggregate.output[0],
        data=rules.data.output[0],
        svm=rules.svm.output[0],
        benchmarks=benchmarks("data", "svm", "train", "aggregate"),
        code=code("figure.py"),
    output:
        pdf=in_report(
            results("{experiment}.pdf"), "figure.rst", "Figures", "{experiment}"
        ),
        png=in_report(
            results("{experiment}.png"), "figure.rst", "Figures", "{experiment}"
        ),
        caption=in_report(
            results("{experiment}.caption.md"),
            "figure_caption.rst",
            "Figures",
            "{experiment}",
        ),
        provenance=results("{experiment}.provenance.json"),
    log:
        results("logs/figure/{experiment}.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        kind=lookup(dpath="experiments/{experiment}/layout", within=config),
        description=get_figure_description,
        title=JOB.title,
        legend=JOB.legend,
        config=JOB.figure_config,
        identity=JOB.metrics_identity,
    script:
        "../scripts/figure.py"


# Every figure of `all` on one page (not part of `all`): docs/figures.md
rule contact_sheet:
    input:
        pngs=expand(rules.figure.output.png, experiment=DEFAULT_EXPERIMENTS),
        code=code("contact_sheet.py"),
    output:
        in_report(
            results("contact_sheet.png"),
            "contact_sheet.rst",
            "Figures",
            "contact sheet",
        ),
    log:
        results("logs/figure/contact_sheet.log"),
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/contact_sheet.py"
