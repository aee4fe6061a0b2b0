# Beyond the paper: which max-margin each optimizer finds (layout geometry). A separate
# target, `results/geometry.pdf`, not part of `rule all` (docs/geometry.md).


rule geometry_figure:
    input:
        **JOB.geometry.figure_inputs(
            rules.aggregate.output[0], rules.data.output[0], rules.svm.output[0]
        ),
        code=code("geometry_figure.py"),
    output:
        pdf=in_report(results("geometry.pdf"), "geometry.rst", "Figures", "geometry"),
        png=in_report(results("geometry.png"), "geometry.rst", "Figures", "geometry"),
        caption=results("geometry.caption.md"),
        provenance=results("geometry.provenance.json"),
    log:
        results("logs/figure/geometry.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        experiments=JOB.geometry.figure(),
    script:
        "../scripts/geometry_figure.py"
