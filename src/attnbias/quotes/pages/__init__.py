"""The registries of the documented pages, one module a page: each a Page (its quoted
numbers and facts by marker name, its generated sections; attnbias.quotes.quote)."""

from __future__ import annotations

from attnbias.quotes.pages import (
    claims,
    config,
    findings,
    geometry,
    neighbours,
    readme,
    realdata,
    regime,
)

# config.yaml's comments state numbers too (fig2's caps): held to the build as a page
PAGES = [
    readme.PAGE,
    findings.PAGE,
    claims.PAGE,
    regime.PAGE,
    geometry.PAGE,
    config.PAGE,
    realdata.PAGE,
    neighbours.PAGE,
]
