rule data:
    input:
        code=code("data.py"),
    output:
        "results/data/{experiment}/seed{seed}.npz",
    params:
        data=experiment_config("data"),
    log:
        "results/logs/data/{experiment}/seed{seed}.log",
    script:
        "../scripts/data.py"
