"""Reference implementation of "Implicit Bias and Fast Convergence Rates for Self-attention".

Modules, in the order data flows through them (docs/ describes the model, the data models,
the regime and the notation):
  data           synthetic datasets: Example 1, DM, App. C.1's 2-D instance, bad direction,
                 two-token example, binary digits
  hypotheses     Ass. 1, Ass. 2 and Condition 1 measured on a dataset (our readings)
  svm            W-SVM and u-SVM: our Gram-space solver, cvxpy as the reference, KKT checks
  losses         exponential and logistic losses in log space
  attention      the model's forward quantities in log space; W = W0 + A Q
  gradients      the numerically stable gradients (scaled form e^M * G~)
  reference      the paper's equations in plain torch, the tests' reference for the above
  optimizers     full-batch GD, NGD (caps, momentum, global or per-block norm), Polyak step
  train          the full-batch loop, batched over runs, logging metrics on a grid
  io             the file contract (npz / Parquet) with identities, written atomically
  figures        one seaborn figure per experiment kind, and the study's figure
  claims         the claims table, from the aggregate tables
  provenance     git state, config hash, versions, device and wall times of a figure
  study          the global-convergence study: training over many initial directions
  study_summary  the study's summary table (no torch)
  sweep_runs     the fig3 sweep's training
  sweep          the fig3 sweep's verdicts and figure (no torch)
  configcheck    config checks the JSON schema cannot make, by key path
  codedeps       which package modules a workflow script imports (for reruns)
  joblog         a job's log file receives its script's logging and traceback
  optim          SNGD and SPS as torch.optim optimizers (real data)
  realdata/      the real-data figures (Figs. 1, 4, 6, 7, 10):
    sources          are a figure's datasets and weights where the config says?
    errors           MissingDataError, and the marker of test fixtures
    text             MNLI and CivilComments (through WILDS), the BERT tokenizer and model
    vision_files     MNIST IDX files and CIFAR-10 pickles, read with numpy
    vision           MNIST and CIFAR-10 as normalised tensors
    vit              ViT-small (Lee et al. 2021) in plain torch; per-layer norms
    tasks            a real-data experiment's Task: data tensors, model, metrics
    trainer          the mini-batch training loop, with checkpoints and resume
    run              one real-data run (figure, optimizer, seed) from the workflow's settings
    similarity       fig10's within-text cosine similarities of BERT token embeddings
    similarity_data  fig10's numbers for one dataset: texts, BERT, binned cosines
    plots            the real-data figures
"""

__version__ = "0.1.0"
