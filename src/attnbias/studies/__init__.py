"""Studies over many settings: the global-convergence study (global_convergence and its
summary) and the sweeps of `sweeps:` (sweep_grid, sweep_config, sweep_check, the registries
sweep_metrics and sweep_claims, a point's runs in sweep_runs, the tables in sweep_tables, the
figure in sweep_figure)."""
