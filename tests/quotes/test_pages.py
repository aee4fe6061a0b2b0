"""The quoted pages (attnbias.quotes.pages): every marker registered and every entry marked."""

from __future__ import annotations

from project import REPO

from attnbias.quotes.marks import find
from attnbias.quotes.pages import PAGES


# ---------------------------------------------------------------------------------------
# the registries of the documented pages
def test_every_marker_is_registered_and_every_entry_marked():
    """Without a build: every page's markers are well formed and name an entry of its
    registry, every entry stands on its page, and every section's marker lines once."""
    for page in PAGES:
        text = (REPO / page.path).read_text()
        marks, errors = find(text)
        assert not errors, (page.path, errors)
        names = {m.name for m in marks}
        assert names <= page.names(), (page.path, sorted(names - page.names()))
        assert page.names() <= names, (page.path, sorted(page.names() - names))
        for section in page.sections:
            assert text.count(section.start) == 1 and text.count(section.end) == 1, section.start
    # the other pages hold no marker
    registered = {page.path for page in PAGES}
    for path in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        if str(path.relative_to(REPO)) not in registered:
            assert find(path.read_text()) == ([], []), path


def test_every_optional_number_names_its_target():
    """A sweep's or a real-data figure's numbers name the target that builds them."""
    for page in PAGES:
        for source in [*page.numbers.values(), *page.facts.values()]:
            if any(w in source.what for w in ("sweep", "fig6_mnist5k", "claims_robustness")):
                assert source.target, source.what
