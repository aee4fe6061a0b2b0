"""The numbers that the docs quote from a build (README.md's headlines, docs/findings.md,
docs/regime.md, the generated sections of docs/claims.md), held to the build. Each quoted
number is named where it stands by an inline marker, two HTML comments that no renderer
shows:

    NGD first crosses 1e-3 at t = <!--q:fig2_uncapped.ngd.first.1e-3-->819 to 1,137<!--/q-->

so the check reads names, not sentences: the words around a marker are free to change.
Each page's registry maps the names to how the build gives them; whole sections are
generated between marker lines of their own.

    python -m attnbias.quotes check [--results results]   # exit 1 naming each stale number
    python -m attnbias.quotes write [--results results]   # rewrite them from the build

marks     the inline marker (its form, reading a page's markers)
quote     the entries (Source, Section, Page), the check and the writer
numbers   a quoted number's style (decimals, e-notation, powers of ten, ...), and the
          built value written in it
build     a build's files: the claims table by row key, the aggregate tables, the data
          hypotheses, the sweeps' tables, the robustness points, the provenance records
sources   where a number comes from (a claims row, a metric, a crossing, a race, ...)
sweeps    the sweeps' numbers (optional targets) and the eta sweep's generated table
robustness_points  the robustness target's points (optional): a row's outcome, range
          and seeds at the values tried, and the constants' jobs' CPU seconds
pages     the registries, one module a page: readme, findings, claims, regime, geometry,
          config (config/config.yaml's comments)
config_comments  config.yaml's comments state no number that nothing checks: each is
          marked, a reference to the paper or an exception with its reason
"""
