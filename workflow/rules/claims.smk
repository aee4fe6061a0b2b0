rule claims:
    input:
        metrics=expand("results/{experiment}/metrics.parquet", experiment=EXPERIMENTS),
        svm=all_seeds("results/svm/{experiment}/seed{seed}.npz"),
        data=all_seeds("results/data/{experiment}/seed{seed}.npz"),
        code=code("claims.py"),
    output:
        md=report(
            "results/claims.md",
            caption="../report/claims.rst",
            category="Claims",
        ),
        html=report(
            "results/claims.html",
            caption="../report/claims.rst",
            category="Claims",
        ),
        csv="results/claims.csv",
    log:
        "results/logs/claims.log",
    conda:
        "../../envs/plot.yaml"
    params:
        experiments=claims_settings,
        identities=claims_identities,
    script:
        "../scripts/claims.py"
