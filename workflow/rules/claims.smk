# The real-data run tables this build holds (Sec. 5, App. C; training them needs data,
# weights and a GPU): the claims read those that exist and say "not measured" for the
# others. Params, not inputs, so that the claims never ask for a real-data training job;
# a table that appears changes the params and reruns this job only.
REAL_TABLES_BUILT = {
    name: results(f"{name}/metrics.parquet")
    for name in WF.claimed_real_experiments()
    if os.path.exists(results(f"{name}/metrics.parquet"))
}


# what the claims read of each built real-data experiment (its dataset, optimizers)
REAL_CLAIMS = {
    name: {**WF.claims_real(name), "table": path}
    for name, path in REAL_TABLES_BUILT.items()
}

# the token-similarity tables this build holds (Fig. 10 and its variants), one per panel
SIMILARITY_CLAIMS = {
    f"{figure}/{dataset}": {**WF.claims_similarity(figure, dataset), "table": path}
    for figure in WF.similarity_figures()
    for dataset in WF.similarity_section(figure)["samples"]
    if os.path.exists(path := results(f"{figure}/similarity/{dataset}.parquet"))
}


rule claims:
    input:
        unpack(get_claims_inputs),
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
        real=REAL_CLAIMS,
        similarity=SIMILARITY_CLAIMS,
        identities=WF.claims_identities(
            rules.aggregate.output[0],
            rules.svm.output[0],
            rules.data.output[0],
            rules.train.output.final,
        ),
    script:
        "../scripts/claims.py"
