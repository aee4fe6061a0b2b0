"""The library side of the Snakemake workflow: reading the config (config) and refusing bad
entries (configcheck), the file contract and atomic writes (io), provenance, a job's log
(joblog), which results folder belongs to which config (results_folder), and which modules
a script imports (codedeps)."""
