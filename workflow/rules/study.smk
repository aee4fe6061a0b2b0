# The global-convergence study: a separate target, `results/global_convergence.pdf`.


rule study_runs:
    input:
        code=code("study_runs.py"),
    output:
        runs="results/global_convergence/runs/{setting}/{optimizer}.parquet",
        assumptions="results/global_convergence/assumptions/{setting}/{optimizer}.parquet",
    log:
        "results/logs/global_convergence/{setting}/{optimizer}.log",
    benchmark:
        "results/benchmarks/study_runs/{setting}/{optimizer}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        job=job_params(
            setting=study_setting,
            optimizer=study_optimizer,
            inits=study_config("inits"),
            scales=study_config("scales"),
            iterations=study_config("iterations"),
            threshold=study_config("threshold"),
            log_points=study_config("log_points"),
            seed=study_config("seed"),
            device=config["device"],
            identity=study_identity("runs"),
            assumptions_identity=study_identity("assumptions"),
        ),
    shell:
        job_shell("study_runs.py", output=["runs", "assumptions"])


rule study_summary:
    input:
        runs=study_runs("runs"),
        assumptions=study_runs("assumptions"),
        benchmarks=benchmarks("study_runs", jobs=study_jobs),
        code=code("study_summary.py"),
    output:
        runs="results/global_convergence.csv",
        summary="results/global_convergence_summary.csv",
        assumptions="results/global_convergence_assumptions.csv",
        claims_csv="results/global_convergence_claims.csv",
        claims_md="results/global_convergence_claims.md",
        pdf=report(
            "results/global_convergence.pdf",
            caption="../report/study.rst",
            category="Figures",
            subcategory="global_convergence",
        ),
        png=report(
            "results/global_convergence.png",
            caption="../report/study.rst",
            category="Figures",
            subcategory="global_convergence",
        ),
        provenance="results/global_convergence.provenance.json",
    log:
        "results/logs/global_convergence/summary.log",
    conda:
        "../../envs/plot.yaml"
    params:
        legend=study_legend,
        settings=study_config(),
        config=figure_config,
        identities=study_identities,
    script:
        "../scripts/study_summary.py"
