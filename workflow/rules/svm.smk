rule svm:
    input:
        data="results/data/{experiment}/seed{seed}.npz",
        code=code("svm.py"),
    output:
        "results/svm/{experiment}/seed{seed}.npz",
    params:
        train_u=experiment_config("train", "train_u"),
    log:
        "results/logs/svm/{experiment}/seed{seed}.log",
    script:
        "../scripts/svm.py"
