"""The numbers that the docs quote from a build (README.md's headlines, docs/findings.md,
docs/regime.md, the generated sections of docs/claims.md), held to the build: each is
found by the page's own words around it and compared with what the build gives, at the
precision it is written with; whole sections are generated.

    python -m attnbias.quotes check [--results results]   # exit 1 naming each stale number
    python -m attnbias.quotes write [--results results]   # rewrite them from the build

numbers   a quoted number's style (decimals, e-notation, powers of ten, ...), and the
          built value written in it
build     a build's files: the claims table by row key, the aggregate tables, the data
          hypotheses, the sweeps' tables, the provenance records
quote     the entries (Quote, Fact, Section), the check and the writer
sources   where a number comes from (a claims row, a metric, a crossing, a race, ...)
sweeps    the sweeps' numbers (optional targets) and the eta sweep's generated table
pages     the registry: every entry of README.md, docs/findings.md and docs/claims.md
regime    docs/regime.md's entries
"""
