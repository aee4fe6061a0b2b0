# The global-convergence study: a separate target, `results/global_convergence.pdf`.


rule study_runs:
    input:
        code=code("study_runs.py"),
        rule_code=JOB.study_rule_code,  # its optimizer's rule module (codedeps.rule_files)
    output:
        runs=results("global_convergence/runs/{setting}/{optimizer}.parquet"),
        assumptions=results(
            "global_convergence/assumptions/{setting}/{optimizer}.parquet"
        ),
    log:
        results("logs/global_convergence/{setting}/{optimizer}.log"),
    benchmark:
        results("benchmarks/study_runs/{setting}/{optimizer}.tsv")
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        setting=JOB.study_setting,
        optimizer=JOB.study_optimizer,
        study=WF.study_run_settings(),
        device=config["device"],
        identity=JOB.study_identity,
        assumptions_identity=JOB.study_assumptions_identity,
    script:
        "../scripts/study_runs.py"


rule study_summary:
    input:
        runs=expand(rules.study_runs.output.runs, **WF.study_jobs()),
        assumptions=expand(rules.study_runs.output.assumptions, **WF.study_jobs()),
        benchmarks=benchmarks("study_runs", jobs=JOB.study_jobs),
        code=code("study_summary.py"),
    output:
        runs=results("global_convergence.csv"),
        summary=results("global_convergence_summary.csv"),
        assumptions=results("global_convergence_assumptions.csv"),
        claims_csv=results("global_convergence_claims.csv"),
        claims_md=results("global_convergence_claims.md"),
        pdf=in_report(
            results("global_convergence.pdf"),
            "study.rst",
            "Figures",
            "global_convergence",
        ),
        png=in_report(
            results("global_convergence.png"),
            "study.rst",
            "Figures",
            "global_convergence",
        ),
        caption=results("global_convergence.caption.md"),
        provenance=results("global_convergence.provenance.json"),
    log:
        results("logs/global_convergence/summary.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        legend=WF.study_legend(),
        settings=at(STUDY),
        config=WF.figure_config(),
        identities=WF.study_identities(
            {
                kind: getattr(rules.study_runs.output, kind)
                for kind in ("runs", "assumptions")
            }
        ),
    script:
        "../scripts/study_summary.py"
