"""No symbolic link inside a results folder: every output and log is a file its job wrote there.

Snakemake takes a link among a target's outputs for the file it points to: a final PDF
replaced by a link to a file elsewhere is "up to date" (exit 0, nothing rebuilt, and the
claims and report then show whatever the link points to), and a linked `logs/` folder
sends every job's log elsewhere without a word. `check` (common.smk, before any job and on
`snakemake -n` too) refuses a results folder holding any link, naming each one and where it
points; nothing is removed for the user (the link's target may be theirs). The folder itself
may be a link (a results folder on a scratch disk); only what lies inside it is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

SHOWN = 5  # links named in one refusal; the count says how many more


class LinkInResultsError(ValueError):
    """A symbolic link inside the results folder; the message names it and the fix."""


def links_in(folder) -> list[Path]:
    """Every symbolic link under `folder` (not following any), in path order."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root, name)
            if path.is_symlink():
                found.append(path)
    return sorted(found)


def check(config: dict) -> None:
    """Refuse a run whose results folder (the key `results`) holds a symbolic link."""
    links = links_in(config["results"])
    if not links:
        return
    named = "; ".join(f"{link} -> {os.readlink(link)}" for link in links[:SHOWN])
    more = f" (and {len(links) - SHOWN} more)" if len(links) > SHOWN else ""
    raise LinkInResultsError(
        f"the results folder {config['results']!r} (config key results) holds symbolic "
        f"links: {named}{more}. Every output and log of this workflow is a file its job "
        "writes inside the results folder; Snakemake would take a linked output for the "
        "file it points to (up to date, never rebuilt) and write logs through a linked "
        "folder to wherever it points. Remove the links (`rm` on each; their targets are "
        "kept) and rerun: the build writes those files anew."
    )
