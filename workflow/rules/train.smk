# One job per experiment and optimizer trains all its seeds (see common.smk, "the synthetic
# stages"); the optimizer stays a wildcard.
per_seed_files(
    "train",
    results("benchmarks/train/{experiment}/{optimizer}.tsv"),
    metrics=results("train/{experiment}/{optimizer}/seed{seed}.parquet"),
    final=results("train/{experiment}/{optimizer}/seed{seed}.final.npz"),
)


def train_params(experiment):
    """Params `job` of experiment's training jobs: its seeds, settings and identities."""
    seeds = list(WF.seeds(experiment))

    def identities(kind, optimizer=None):
        return [WF.identity(kind, experiment, s, optimizer) for s in seeds]

    def get(wildcards):
        return job.encode(
            dict(wildcards.items(), experiment=experiment),
            {
                "seeds": seeds,
                "train": at(WF.section(experiment), "train"),
                "optimizer": WF.optimizer(experiment, wildcards.optimizer),
                "device": config["device"],
                "dtype": config["dtype"],
                "identities": identities("run", wildcards.optimizer),
                "data": identities("data"),
                "svm": identities("svm"),
            },
        )

    return get


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
            job=train_params(experiment),
        shell:
            job_shell(
                "train.py",
                input=["data", "svm"],
                output=["metrics", "final"],
                lists=["data", "svm", "metrics", "final"],
            )
