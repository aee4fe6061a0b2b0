# One job per experiment and optimizer trains all its seeds (see common.smk, "the synthetic
# stages"); the optimizer stays a wildcard.
per_seed_files(
    "train",
    results("benchmarks/train/{experiment}/{optimizer}.tsv"),
    metrics=results("train/{experiment}/{optimizer}/seed{seed}.parquet"),
    final=results("train/{experiment}/{optimizer}/seed{seed}.final.npz"),
)


for experiment in EXPERIMENTS:

    rule:
        name:
            f"train_{experiment}"
        input:
            data=every_seed(rules.data.output[0], experiment),
            svm=every_seed(rules.svm.output[0], experiment),
            code=code("train.py"),
        output:
            metrics=every_seed(rules.train.output.metrics, experiment),
            final=every_seed(rules.train.output.final, experiment),
        log:
            results(f"logs/train/{experiment}/{{optimizer}}.log"),
        benchmark:
            expand(rules.train.benchmark, experiment=experiment, allow_missing=True)[0]
        conda:
            "../../envs/train.yaml"
        threads: config["threads"]
        resources:
            runtime=RESOURCES["train"]["runtime"],
            mem_mb=RESOURCES["train"]["mem_mb"],
        params:
            experiment=experiment,
            seeds=list(WF.seeds(experiment)),
            train=at(WF.section(experiment), "train"),
            optimizer=of_job(WF.optimizer, experiment),
            device=config["device"],
            dtype=config["dtype"],
            identities=of_job(WF.seed_identities, "run", experiment),
            data=WF.seed_identities("data", experiment),
            svm=WF.seed_identities("svm", experiment),
        script:
            "../scripts/train.py"
