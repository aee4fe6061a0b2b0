"""The library side of the Snakemake workflow: reading the config (config) and refusing bad
entries (configcheck), the file contract and atomic writes (io), provenance, a shell job's
settings (job) and log (joblog), and which modules a script imports (codedeps)."""
