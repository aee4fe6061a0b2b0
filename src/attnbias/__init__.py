"""Reference implementation of "Implicit Bias and Fast Convergence Rates for Self-attention".

Sub-packages, in their floor order, lowest first: each imports only from its own and those
below it (tests/project/test_import_floors.py; docs/layout.md lists every module; docs/
describes the model, the data models, the regime and the notation):
  model/      the model: attention, losses and gradients in log space; the plain reference
  optim/      the optimizers: full-batch rules, one module each (their direction arithmetic,
              the norm each is expected to favour), and stochastic (SNGD, SPS)
  svm/        the W-SVM and u-SVM (rule svm): our Gram-space solver, cvxpy, KKT checks; the
              attention SVM in other norms (rule svm_geometry)
  data/       the datasets (rule data): the data models and their registry (models), the bad
              direction, MNIST's IDX files, MissingDataError, the hypotheses measured on data
  training/   full-batch training (rule train): the compiled C kernel, the torch reference,
              the full W; the geometry runs' measures against each norm's SVM
  workflow/   what every rule shares: the config's reading and checks, the file contract,
              provenance, a job's settings and log, the modules a script imports
  figures/    the figures (rule figure): panels, drawing, the geometry figure
  realdata/      the real-data figures (Figs. 1, 4, 6, 7, 10):
    sources          are a figure's datasets and weights where the config says?
    errors           MissingDataError, and the marker of test fixtures
    text             a text split (TextSplit) and the data-root check
    mnli             MNLI (official jsonl or GLUE tsv)
    civilcomments    CivilComments from WILDS' release CSV, and WILDS' metrics
    bert             the BERT tokenizer and model, offline
    vision_files     MNIST (through idx) and CIFAR-10 pickles, read with numpy
    vision           MNIST and CIFAR-10 as normalised tensors
    vit              ViT-small (Lee et al. 2021) in plain torch; per-layer norms
    tasks            a real-data experiment's Task: data tensors, model, metrics
    trainer          the mini-batch training loop, with checkpoints and resume
    run              one real-data run (figure, optimizer, seed) from the workflow's settings
    similarity       fig10's within-text cosine similarities of BERT token embeddings
    similarity_data  fig10's numbers for one dataset: texts, BERT, binned cosines
    plots            the real-data figures
    config_check     the refusals of the real_data config (common.smk runs them)
  claims/     the claims table (rule claims), one module per group of results
  studies/    the global-convergence study and the sweeps (rules study, sweep)
  quotes/     the docs' numbers held to a build (python -m attnbias.quotes check)
"""

__version__ = "0.1.0"
