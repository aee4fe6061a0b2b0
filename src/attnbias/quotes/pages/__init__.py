"""The registries of the documented pages, one module a page: each a Page (its quoted
numbers and facts by marker name, its generated sections; attnbias.quotes.quote)."""

from __future__ import annotations

from attnbias.quotes.pages import claims, findings, geometry, readme, regime

PAGES = [readme.PAGE, findings.PAGE, claims.PAGE, regime.PAGE, geometry.PAGE]
