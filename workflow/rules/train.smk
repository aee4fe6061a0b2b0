rule train:
    input:
        data=rules.data.output[0],
        svm=rules.svm.output[0],
        # a geometry experiment's each-norm SVM solutions (none for the others)
        geometry=JOB.svm_geometry_file(rules.svm_geometry.output[0]),
        code=code("train.py"),
        # the module of its optimizer's rule, which no import names (codedeps.rule_files)
        rule_code=JOB.rule_code,
    output:
        metrics=results("train/{experiment}/{optimizer}.parquet"),
        final=results("train/{experiment}/{optimizer}.final.npz"),
    log:
        results("logs/train/{experiment}/{optimizer}.log"),
    benchmark:
        results("benchmarks/train/{experiment}/{optimizer}.tsv")
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        train=JOB.train_settings,
        optimizer=JOB.optimizer,
        device=config["device"],
        dtype=config["dtype"],
        identities=JOB.run_identities,
        data=JOB.data_identities,
        svm=JOB.svm_identities,
        geometry=JOB.train_geometry,
    script:
        "../scripts/train.py"
