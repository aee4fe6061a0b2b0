rule claims:
    input:
        metrics=expand(rules.aggregate.output[0], experiment=DEFAULT_EXPERIMENTS),
        svm=all_seeds(rules.svm.output[0]),
        data=all_seeds(rules.data.output[0]),
        final=[
            path
            for name in WF.joint()
            for path in expand(
                rules.train.output.final, experiment=name, **WF.jobs(name)
            )
        ],
        runs=[
            path
            for name in DEFAULT_EXPERIMENTS
            for path in expand(
                rules.train.output.metrics, experiment=name, **WF.jobs(name)
            )
        ],
        code=code("claims.py"),
    output:
        md=report(
            results("claims.md"),
            caption="../report/claims.rst",
            category="Claims",
        ),
        html=report(
            results("claims.html"),
            caption="../report/claims.rst",
            category="Claims",
        ),
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
        identities=WF.claims_identities(
            rules.aggregate.output[0],
            rules.svm.output[0],
            rules.data.output[0],
            rules.train.output.final,
        ),
    script:
        "../scripts/claims.py"
