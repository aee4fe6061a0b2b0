"""python -m attnbias.quotes check|write [--results DIR] [--root DIR]

check: compare every number README.md's headlines, docs/findings.md, docs/regime.md
       and config/config.yaml's comments quote with the build in --results (default
       results), and refuse a config comment's number that is neither marked nor excused
       (attnbias.quotes.config_comments); print each stale, missing, refused or
       not-built one as page:line, and exit 1 if any is stale or missing (a number of an
       optional target that this build lacks is listed as "not built here" and does not
       fail; exit 2 where there is no build).
write: rewrite the stale numbers and generated sections from the build (and, on a page
       where a number changed, the day the numbers were measured), then check again. The
       day alone is never stale: a rebuild that gives the same numbers leaves it true.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attnbias.quotes.build import Build
from attnbias.quotes.pages import PAGES
from attnbias.quotes.quote import Outcome, check


def report(outcome: Outcome) -> str:
    lines = [str(f) for f in outcome.faults]
    targets = sorted({f.target for f in outcome.unbuilt})
    lines.append(
        f"{outcome.compared} quoted numbers, facts and sections compared with the build; "
        f"{len(outcome.faults)} stale or missing; {len(outcome.unbuilt)} not built here"
        + (f" ({'; '.join(targets)})" if targets else "")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnbias.quotes", description=__doc__)
    parser.add_argument("command", choices=("check", "write"))
    parser.add_argument("--results", default="results", help="the build's results folder")
    parser.add_argument("--root", default=".", help="the repository (README.md, docs/)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the not-built too")
    args = parser.parse_args(argv)
    root, build = Path(args.root), Build(args.results)
    if not (build.results / "claims.csv").exists():
        print(f"no build in {build.results}: build it first (snakemake -c2)")
        return 2
    outcome, written = check(PAGES, build, root)
    if args.command == "write":
        for page, text in written.items():
            if text != outcome.pages[page]:
                (root / page).write_text(text)
        outcome, _ = check(PAGES, Build(args.results), root)
    if args.verbose:
        print("\n".join(str(f) for f in outcome.unbuilt))
    print(report(outcome))
    return 1 if outcome.faults else 0


if __name__ == "__main__":
    sys.exit(main())
