"""Provenance of a figure: which code, config, software and hardware made it, and how long
the jobs behind it took.

Every figure carries the same record twice: in a sidecar JSON beside it
(results/<figure>.provenance.json) and in its files' metadata (PDF: Title, Subject,
Keywords, Creator and a custom `Provenance` key holding the whole record as JSON; PNG: text
chunks of the same names). The record:

  figure, title, created  which figure, and when it was drawn (UTC)
  git                     commit of the workflow's checkout and whether its tree had changes
                          ("unknown" outside a git checkout, e.g. a copy without .git)
  config, config_sha256   the config values of the jobs behind the figure (their params) and
                          the sha256 of their canonical JSON (sorted keys, no spaces)
  packages                versions in the figure job's own environment
  training                devices and torch versions of the training runs (each run table
                          records them, parquet.with_run_info, and an aggregate table carries its
                          runs' records merged, parquet.concat_tables)
  wall_time_s             per upstream rule: jobs, total and longest wall time in seconds, as
                          Snakemake measured them (`benchmark:` files), and the sum
  inputs_sha256           every input file of the job (tables, data, code; not the wall-time
                          files) and the sha256 of its bytes, as `sha256sum` prints it

The git state is read when the figure is drawn, so it describes the code that drew it;
the training's code is pinned by the workflow's reruns (a changed module reruns its jobs).
"""

from __future__ import annotations

import csv
import hashlib
import json
import platform
import subprocess
import warnings
from collections.abc import Iterable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import attnbias
from attnbias.workflow import io, parquet, store

UNKNOWN = "unknown"
PACKAGES = (
    "attnbias",
    "snakemake",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "seaborn",
    "torch",
)
PDF_KEY = "Provenance"  # custom PDF Info / PNG text key: the whole record as JSON


def canonical_json(value) -> str:
    """JSON with sorted keys and no spaces: equal values give equal text. Strict JSON: NaN
    and inf raise ValueError (the config refuses them, so none should reach here)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def config_sha256(config) -> str:
    """sha256 (hex) of the canonical JSON of `config`; non-JSON values raise TypeError."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def git_state(path) -> dict:
    """{"commit": HEAD's hash, "dirty": whether tracked or untracked files differ from it}.

    Both are "unknown" where `path` is in no git checkout or git is missing.
    """

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=60
        )

    try:
        head = git("rev-parse", "HEAD")
        status = git("status", "--porcelain") if head.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": UNKNOWN, "dirty": UNKNOWN}
    if status is None:
        return {"commit": UNKNOWN, "dirty": UNKNOWN}
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else UNKNOWN
    return {"commit": head.stdout.strip(), "dirty": dirty}


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Python's version and each package's, "not installed" where it is absent.

    attnbias's is the imported package's own (a source tree on PYTHONPATH may differ from the
    installed distribution's metadata).
    """
    versions = {"python": platform.python_version()}
    for name in names:
        if name == "attnbias":
            versions[name] = attnbias.__version__
            continue
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _rule_of(path) -> str:
    parts = Path(path).parts
    if "benchmarks" not in parts[:-1]:
        raise ValueError(f"{path}: a benchmark file must lie in results/benchmarks/<rule>/")
    return parts[parts.index("benchmarks") + 1]


def wall_times(benchmark_files: Iterable) -> dict:
    """Wall times from Snakemake's benchmark files (results/benchmarks/<rule>/...).

    Returns {"total": seconds, "rules": {rule: {"jobs", "total", "max"}}}; a file with
    several rows (benchmark repeats) counts as one job with the sum of its rows.
    """
    per_rule: dict[str, list[float]] = {}
    for path in benchmark_files:
        with open(path, newline="") as fh:
            seconds = sum(float(row["s"]) for row in csv.DictReader(fh, delimiter="\t"))
        per_rule.setdefault(_rule_of(path), []).append(seconds)
    rules = {
        rule: {"jobs": len(times), "total": round(sum(times), 3), "max": round(max(times), 3)}
        for rule, times in per_rule.items()
    }
    return {"total": round(sum(r["total"] for r in rules.values()), 3), "rules": rules}


# the names of attnbias.training.dispatch.backend's values
BACKEND_NAMES = {"c": "the compiled C kernel", "torch": "torch", "full": "numpy on the full W"}


def trained_on(training: dict) -> str:
    """ "the compiled C kernel (cpu)", from training_info's backends and devices; "" where the
    runs record no backend."""
    backends = training.get("backends")
    if not backends:
        return ""
    names = " and ".join(BACKEND_NAMES.get(b, b) for b in backends)
    devices = ", ".join(training.get("devices", []))
    return names + (f" ({devices})" if devices else "")


def training_info(infos: list[dict]) -> dict:
    """The devices (and their names), torch versions and, where recorded, the backends
    (attnbias.training.kernel: "c", the compiled kernel; or "torch") of the runs whose
    records (parquet.run_records) are `infos`."""

    def values(key):
        return sorted({info.get(key, UNKNOWN) for info in infos})

    out = {"runs": len(infos), "devices": values("device"), "torch": values("torch")}
    if any("backend" in info for info in infos):
        out["backends"] = values("backend")
    names = sorted({info["device_name"] for info in infos if "device_name" in info})
    if names:
        out["device_names"] = names
    return out


def collect(
    *,
    figure: str,
    title: str,
    config,
    source_dir,
    benchmark_files: Iterable,
    run_files: Iterable,
    input_files: Iterable = (),
) -> dict:
    """The provenance record of one figure (see the module's docstring)."""
    return {
        "figure": figure,
        "title": title,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git": git_state(source_dir),
        "config_sha256": config_sha256(config),
        "config": config,
        "packages": package_versions(),
        "training": training_info([r for path in run_files for r in parquet.run_records(path)]),
        "wall_time_s": wall_times(benchmark_files),
        "inputs_sha256": files_sha256(input_files),
    }


def files_sha256(paths: Iterable) -> dict[str, str]:
    """{path: sha256 of the file's bytes}, sorted by path."""
    out = {}
    for path in sorted(set(map(str, paths))):
        with store.open_regular(path) as fh:  # a FIFO or device refused unopened
            out[path] = hashlib.file_digest(fh, "sha256").hexdigest()
    return out


def of_job(job, *, figure: str, title: str, training: Iterable | None = None) -> dict:
    """`collect` for a Snakemake figure (or claims) job: its params.config, its benchmark
    inputs, the runs' records of the `training` files (default: its `runs` input, where it
    has one; a figure's: its aggregate table) and every other input's sha256."""
    benchmarks = set(job.input.get("benchmarks", []))
    # a job without params.config (claims) records the params it has
    config = job.params.get("config", None) or dict(job.params.items())
    return collect(
        figure=figure,
        title=title,
        config=config,
        source_dir=job.scriptdir,
        benchmark_files=benchmarks,
        run_files=job.input.get("runs", []) if training is None else training,
        input_files=[path for path in job.input if path not in benchmarks],
    )


def save(path, record: dict) -> None:
    """Write the sidecar JSON (atomically, like every result)."""
    io.save_text(
        path,
        json.dumps(record, indent=2, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n",
    )


def _summary(record: dict) -> dict[str, str]:
    git, training = record["git"], record["training"]
    packages = record["packages"]
    return {
        "Title": record["title"],
        "Subject": (
            f"{record['figure']}: attnbias figure; its provenance is in this file's "
            f"'{PDF_KEY}' entry and in {record['figure']}.provenance.json"
        ),
        "Keywords": (
            f"commit={git['commit']}; dirty={str(git['dirty']).lower()}; "
            f"config_sha256={record['config_sha256']}; "
            f"devices={','.join(training['devices']) or 'none'}; "
            f"wall_time_s={record['wall_time_s']['total']:g}"
        ),
        "Creator": (
            f"attnbias {packages['attnbias']} via Snakemake {packages['snakemake']}; "
            f"python {packages['python']}, matplotlib {packages['matplotlib']}"
        ),
    }


def file_metadata(record: dict, fmt: str) -> dict[str, str] | None:
    """`metadata=` for matplotlib's savefig in format `fmt` (pdf, png; None for others)."""
    summary = _summary(record)
    full = canonical_json(record)
    if fmt == "pdf":
        return {**summary, PDF_KEY: full}
    if fmt == "png":
        return {
            "Title": summary["Title"],
            "Description": summary["Subject"],
            "Comment": summary["Keywords"],
            "Software": summary["Creator"],
            PDF_KEY: full,
        }
    return None


def savefig(fig, path, fmt: str, record: dict | None, **kwargs) -> None:
    """fig.savefig with the record in the file's metadata (where the format has any)."""
    meta = file_metadata(record, fmt) if record is not None else None
    with warnings.catch_warnings():
        # the PDF Info dictionary may hold any key; matplotlib warns about non-standard ones
        warnings.filterwarnings("ignore", message="Unknown infodict keyword")
        fig.savefig(path, format=fmt, metadata=meta, **kwargs)
