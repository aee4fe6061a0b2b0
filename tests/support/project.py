"""Run the real Snakemake workflow on a temporary copy of the project.

The copy includes src/, put first on PYTHONPATH, so that tests can edit library modules
and check which jobs Snakemake would rerun, without touching the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def checked_config(config: dict) -> None:
    """The workflow's checks of `config`, in workflow/rules/common.smk's order (the results
    folder's aside): a refusal raises configkeys.ConfigError naming its key path."""
    import yaml
    from snakemake.utils import validate

    from attnbias.realdata.config_check import check_real
    from attnbias.studies import robustness_check, sweep_check
    from attnbias.workflow import configcheck

    schema = yaml.safe_load(SCHEMA.read_text())
    configcheck.check(config, schema)
    validate(config, schema=str(SCHEMA), set_default=True)
    configcheck.check_workflow(config, schema)
    check_real(config)
    sweep_check.check_sweeps(config, schema)
    robustness_check.check(config, schema)


def snakemake(workdir: Path, *args: str, config: str | None = "config/tiny.yaml", check=True):
    """Run snakemake in `workdir` with `config` (which replaces the default config; None:
    the default, config/config.yaml)."""
    # prepend: a Snakemake (or other package) installed through PYTHONPATH stays importable
    path = [str(workdir / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args, *(["--configfile", config] if config else [])],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {args} failed:\n{result.stdout}\n{result.stderr}")
    return result


def planned_jobs(workdir: Path, config: str = "config/tiny.yaml", target: str = "") -> Counter:
    """Jobs a dry run of `target` (default: rule all) would execute, counted per rule (empty
    when nothing is to be done)."""
    out = snakemake(workdir, *([target] if target else []), "-n", config=config).stdout
    if "Nothing to be done" in out:
        return Counter()
    table = out.split("Job stats:")[1].split("total")[0]
    jobs = Counter()
    for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M):
        jobs[m[1]] += int(m[2])
    return jobs


def copy_project(dest: Path) -> Path:
    for item in ("Snakefile", "workflow", "config", "src", "envs"):
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / item)
    return dest
