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
        real=WF.claims_real_built(results("{figure}/metrics.parquet")),
        similarity=WF.claims_similarity_built(
            results("{figure}/similarity/{dataset}.parquet")
        ),
        # the geometry experiments' tables (beyond the paper): the default build's (inputs)
        # and the others where they exist; without them the section reads "not measured"
        geometry=JOB.geometry.claims_built(results("{experiment}/metrics.parquet")),
        identities=WF.claims_identities(
            rules.aggregate.output[0],
            rules.svm.output[0],
            rules.data.output[0],
            rules.train.output.final,
        ),
    script:
        "../scripts/claims.py"
