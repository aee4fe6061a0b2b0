rule svm:
    input:
        data="results/data/{experiment}/seed{seed}.npz",
        code=code("svm.py"),
    output:
        "results/svm/{experiment}/seed{seed}.npz",
    log:
        "results/logs/svm/{experiment}/seed{seed}.log",
    benchmark:
        "results/benchmarks/svm/{experiment}/seed{seed}.tsv"
    conda:
        "../../envs/data-svm.yaml"
    params:
        job=job_params(
            train_u=experiment_config("train", "train_u"),
            identity=identity_of("svm"),
            data=identity_of("data"),
        ),
    shell:
        job_shell("svm.py", input=["data"])
