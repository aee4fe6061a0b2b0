rule train:
    input:
        data="results/data/{experiment}/seed{seed}.npz",
        svm="results/svm/{experiment}/seed{seed}.npz",
        code=code("train.py"),
    output:
        metrics="results/train/{experiment}/{optimizer}/seed{seed}.parquet",
        final="results/train/{experiment}/{optimizer}/seed{seed}.final.npz",
    log:
        "results/logs/train/{experiment}/{optimizer}/seed{seed}.log",
    benchmark:
        "results/benchmarks/train/{experiment}/{optimizer}/seed{seed}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        job=job_params(
            train=experiment_config("train"),
            optimizer=optimizer_settings,
            device=config["device"],
            dtype=config["dtype"],
            identity=identity_of("run"),
            data=identity_of("data"),
            svm=identity_of("svm"),
        ),
    shell:
        job_shell("train.py", input=["data", "svm"], output=["metrics", "final"])
