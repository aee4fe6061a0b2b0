"""The system packages that some tests need, and the apt-get line that installs them.

Tests never install anything. Where a program is missing, the tests that need it skip, and
their reason is the exact line that installs it. `.ci/run` installs every package listed
here (`python tests/support/system_packages.py` prints those missing), so that CI runs every test.
"""

from __future__ import annotations

import shutil
import sys

import pytest

# Debian package -> the programs the tests run from it
PROGRAMS = {
    "chromium": ("chromium",),  # tests/support/chromium.py: the HTML report, clicked through
    "poppler-utils": ("pdftotext",),  # the figures' titles, read back from the PDFs
    "slurm-wlm": ("slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scancel"),  # slurm_cluster
    "munge": ("munged", "munge"),  # SLURM's authentication
}


def install_line(*packages: str) -> str:
    return f"sudo apt-get install -y --no-install-recommends {' '.join(packages)}"


def absent(*packages: str) -> list[str]:
    """Those of `packages` (default: all) with a program that is not on PATH."""
    return [p for p in packages or PROGRAMS if not all(map(shutil.which, PROGRAMS[p]))]


def missing(*packages: str) -> str | None:
    """None when every program of `packages` is on PATH; otherwise the reason to skip."""
    lacking = absent(*packages)
    if not lacking:
        return None
    return f"{' and '.join(lacking)} not installed: {install_line(*lacking)}"


def requires(*packages: str) -> pytest.MarkDecorator:
    """Mark a test that runs programs of `packages`: it skips where they are missing."""
    reason = missing(*packages)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


if __name__ == "__main__":  # for .ci/run: the packages to install, on one line
    print(" ".join(absent(*sys.argv[1:])))
