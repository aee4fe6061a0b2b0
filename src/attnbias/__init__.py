"""Reference implementation of "Implicit Bias and Fast Convergence Rates for Self-attention".

Modules, in the order data flows through them (docs/ describes the model, the data models,
the regime and the notation):
  data           synthetic datasets: Example 1, DM, App. C.1's 2-D instance, bad direction,
                 two-token example, binary digits
  idx            MNIST's IDX files, read with numpy (fig9's digits, fig6)
  missing        MissingDataError: a dataset or weights that are not where the config says
  hypotheses     Ass. 1, Ass. 2 and Condition 1 measured on a dataset (our readings)
  svm            W-SVM and u-SVM: our Gram-space solver, cvxpy as the reference, KKT checks
  losses         exponential and logistic losses in log space
  attention      the model's forward quantities in log space; W = W0 + A Q
  gradients      the numerically stable gradients (scaled form e^M * G~)
  reference      the paper's equations in plain torch, the tests' reference for the above
  optimizers     full-batch GD, NGD (caps, momentum, global or per-block norm), Polyak step
  spec           an optimizer's config settings (OptimizerSpec), torch-free; `without`
  train          the full-batch loop, batched over runs, logging metrics on a grid (torch:
                 the reference, and the CUDA and float32 path)
  fast           the same loop on the CPU without torch: a compiled C step (_kernel.c)
  devices        which torch device a run uses, and its description for the provenance
  job            a shell: job's files and settings (the data, svm, train and study rules)
  io             the file contract (npz / Parquet) with identities, written atomically
  panels         what each figure kind draws, panel by panel (drawing and captions)
  figures        one seaborn figure per experiment kind, and the study's figure
  claims/        the claims table, from the aggregate tables: one module per group of results
  provenance     git state, config hash, versions, device and wall times of a figure
  study          the global-convergence study: training over many initial directions
  study_summary  the study's summary table (no torch)
  sweep_grid     a sweep's grid (`sweeps:`): its points, their names and experiments
  sweep_config   the workflow's reading of `sweeps:` (what each sweep job gets)
  sweep_metrics  the registry of per-run metrics (numpy only; PLUGINS adds modules)
  sweep_claims   the registry of per-point claims (ahead, fastest, below_throughout, ...)
  sweep_runs     one sweep point: data, SVMs, every optimizer x seed (C kernel; torch)
  sweep          a sweep's tables: claims judged per point, tallied (no torch)
  sweep_figure   a sweep's figure (no torch)
  sweepcheck     the refusals of bad sweep entries, by key path
  configcheck    config checks the JSON schema cannot make, by key path
  workflow_config  the workflow's reading of the config (params, identities), torch-free
  codedeps       which package modules a workflow script imports (for reruns)
  joblog         a job's log file receives its script's logging and traceback
  stochastic     SNGD and SPS as torch.optim optimizers (real data)
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
"""

__version__ = "0.1.0"
