# Robustness to the constants the paper lost and we chose (`claims_robustness`; docs/claims.md):
# a job per constant measures the claims at each of its values, one compares them with ours.
# A constant of the geometry experiments (beyond the paper) reads their files as
# results/geometry.pdf's jobs build them, and their svm-geometry files.


wildcard_constraints:
    constant=_alternatives(JOB.robustness.constants),


rule claims_robustness_points:
    input:
        unpack(
            JOB.robustness.inputs(
                rules.aggregate.output[0],
                rules.data.output[0],
                rules.svm.output[0],
                rules.train.output.final,
                rules.svm_geometry.output[0],
            )
        ),
        code=code("claims_robustness_points.py"),
    output:
        results("claims_robustness/{constant}.parquet"),
    log:
        results("logs/claims_robustness/{constant}.log"),
    benchmark:
        results("benchmarks/claims_robustness/{constant}.tsv")
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        point=lambda wildcards: JOB.robustness.point(wildcards.constant),
        settings=lambda wildcards: JOB.robustness.settings(wildcards.constant),
        identity=lambda wildcards: JOB.robustness.identity(wildcards.constant),
        identities=JOB.robustness.input_identities(
            rules.aggregate.output[0],
            rules.data.output[0],
            rules.svm.output[0],
            rules.train.output.final,
            rules.svm_geometry.output[0],
        ),
        device=config["device"],
        dtype=config["dtype"],
    script:
        "../scripts/claims_robustness_points.py"


rule claims_robustness:
    input:
        **JOB.robustness.point_files(rules.claims_robustness_points.output[0]),
        code=code("claims_robustness.py"),
    output:
        table=results("claims_robustness.parquet"),
        csv=results("claims_robustness.csv"),
        md=results("claims_robustness.md"),
    log:
        results("logs/claims_robustness.log"),
    benchmark:
        results("benchmarks/claims_robustness.tsv")
    conda:
        "../../envs/plot.yaml"
    params:
        constants=JOB.robustness.described(),
        identities=JOB.robustness.identities(),
        identity=JOB.robustness.summary_identity(),
    script:
        "../scripts/claims_robustness.py"


# the constants of the default build only (a constant's own default_build: fig2's caps), read
# by the claims job where the whole summary is not built
use rule claims_robustness as claims_robustness_default with:
    input:
        **JOB.robustness.point_files(
            rules.claims_robustness_points.output[0], JOB.robustness.in_default
        ),
        code=code("claims_robustness.py"),
    output:
        table=results("claims_robustness_default.parquet"),
        csv=results("claims_robustness_default.csv"),
        md=results("claims_robustness_default.md"),
    log:
        results("logs/claims_robustness_default.log"),
    benchmark:
        results("benchmarks/claims_robustness_default.tsv")
    params:
        constants=JOB.robustness.described(JOB.robustness.in_default),
        identities=JOB.robustness.identities(JOB.robustness.in_default),
        identity=JOB.robustness.summary_identity(JOB.robustness.in_default),


rule claims:
    input:
        **WF.claims_inputs(
            rules.aggregate.output[0],
            rules.data.output[0],
            rules.svm.output[0],
            rules.train.output.final,
        ),
        # the default-build geometry experiments' tables (beyond the paper)
        **JOB.geometry.claims_inputs(rules.aggregate.output[0]),
        # the robustness table where it is of the default build, else the default build's
        # constants' (fig2's caps; params: the whole table where built)
        **JOB.robustness.claims_input(
            rules.claims_robustness.output.table,
            rules.claims_robustness_default.output.table,
        ),
        code=code("claims.py"),
    output:
        md=in_report(results("claims.md"), "claims.rst", "Claims"),
        html=in_report(results("claims.html"), "claims.rst", "Claims"),
        csv=results("claims.csv"),
        tex=results("claims.tex"),
        provenance=results("claims.provenance.json"),
    log:
        results("logs/claims.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        # layouts, optimizers, labels and paper_figure: a change to any reruns this job only
        experiments=WF.claims_settings(),
        # the real-data tables this build holds (Sec. 5, App. C), read where they exist
        # (with each figure's settings checked against its sweep's record where built)
        real=JOB.real.claims_real_built(
            results("{figure}/metrics.parquet"), results("{figure}_final.csv")
        ),
        similarity=JOB.real.claims_similarity_built(
            results("{figure}/similarity/{dataset}.parquet")
        ),
        # the geometry experiments' tables (beyond the paper): the default build's (inputs)
        # and the others where they exist; without them the section reads "not measured"
        geometry=JOB.geometry.claims_built(results("{experiment}/metrics.parquet")),
        # the robustness table (claims_robustness, or the default build's constants' with
        # those it lacks), or why there is none
        robustness=JOB.robustness.claims_table(
            rules.claims_robustness.output.table,
            rules.claims_robustness_default.output.table,
        ),
        # the constants of ours each row names, built or not (claims.robustness.named)
        constants=JOB.robustness.described(),
        identities=WF.claims_identities(
            rules.aggregate.output[0],
            rules.svm.output[0],
            rules.data.output[0],
            rules.train.output.final,
        ),
    script:
        "../scripts/claims.py"
