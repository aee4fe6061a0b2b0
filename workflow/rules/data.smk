# One job per experiment draws all its seeds (see common.smk, "the synthetic stages").
per_seed_files(
    "data",
    results("benchmarks/data/{experiment}.tsv"),
    results("data/{experiment}/seed{seed}.npz"),
)

for experiment in EXPERIMENTS:

    rule:
        name:
            f"data_{experiment}"
        input:
            code=data_code(experiment),
        output:
            seeds=every_seed(rules.data.output[0], experiment),
        log:
            results(f"logs/data/{experiment}.log"),
        benchmark:
            expand(rules.data.benchmark, experiment=experiment)[0]
        conda:
            "../../envs/data-svm.yaml"
        resources:
            runtime=RESOURCES["data"]["runtime"],
            mem_mb=RESOURCES["data"]["mem_mb"],
        params:
            experiment=experiment,
            seeds=list(WF.seeds(experiment)),
            data=at(WF.section(experiment), "data"),
            identities=WF.seed_identities("data", experiment),
        script:
            "../scripts/data.py"
