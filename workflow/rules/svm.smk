# One job per experiment solves all its seeds (see common.smk, "the synthetic stages").
per_seed_files(
    "svm",
    results("benchmarks/svm/{experiment}.tsv"),
    results("svm/{experiment}/seed{seed}.npz"),
)

for experiment in EXPERIMENTS:

    rule:
        name:
            f"svm_{experiment}"
        input:
            data=every_seed(rules.data.output[0], experiment),
            code=code("svm.py"),
        output:
            seeds=every_seed(rules.svm.output[0], experiment),
        log:
            results(f"logs/svm/{experiment}.log"),
        benchmark:
            expand(rules.svm.benchmark, experiment=experiment)[0]
        conda:
            "../../envs/data-svm.yaml"
        resources:
            runtime=RESOURCES["svm"]["runtime"],
            mem_mb=RESOURCES["svm"]["mem_mb"],
        params:
            experiment=experiment,
            seeds=list(WF.seeds(experiment)),
            train_u=at(WF.section(experiment), "train", "train_u"),
            identities=WF.seed_identities("svm", experiment),
            data=WF.seed_identities("data", experiment),
        script:
            "../scripts/svm.py"
