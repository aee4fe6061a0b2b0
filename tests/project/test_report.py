"""The HTML report (`snakemake --report`), opened in a real headless chromium and clicked
through as a reader would: every figure (PDF and PNG) and the claims table are there, each
shows, and each has its caption, rendered with the config it was built with.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import time
import uuid
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from chromium import Chromium, unavailable
from project import copy_project, snakemake
from snakemake.report import html_reporter as snakemake_report

from attnbias.optim.spec import OptimizerSpec
from attnbias.workflow import (
    csvcells,
)

pytestmark = pytest.mark.slow


class _Elements(HTMLParser):
    """Every start tag of an HTML page: (tag, attributes), as a browser's tokenizer sees
    them (the text inside <script> is not parsed for tags, up to its `</script`)."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


@pytest.mark.slow
def test_hostile_title_and_label_stay_text_in_the_report(tmp_path, request):
    """A title with a raw-HTML directive, an include and markup, and labels that would be
    javascript: links (HTML tags are refused by the config checks: see above): the report
    holds no injected element and includes no local file; opened in headless chromium (where
    installed) it runs no script, holds no injected link and shows the texts as text."""
    (tmp_path / "project").mkdir()
    workdir = copy_project(tmp_path / "project")
    # a path that escaping would leave alone (no underscore, no markup), outside the project
    secret_dir = Path(tempfile.gettempdir()) / f"attnbiassecret{uuid.uuid4().hex}"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret.write_text("SECRET-6f1d0c\n")
    request.addfinalizer(lambda: shutil.rmtree(secret_dir, ignore_errors=True))
    title = (
        "Hostile **bold** title\n\n"
        ".. raw:: html\n\n"
        "   img src=x id=injected onerror=window.pwned=1\n\n"
        f".. include:: {secret}\n\n"
        "`link javascript:window.pwned=4`_ |sub| :math:`x` & &amp; \"quoted\" 'single'"
    )
    labels = {"gd": "javascript:window.pwned=2", "ngd": "`N javascript:window.pwned=3`_"}
    config = {
        "device": "cpu",
        "experiments": {
            "hostile": {
                "title": title,
                "layout": "two_token",
                "seeds": 1,
                "data": {"model": "two_token", "params": {"d": 2}},
                "train": {"iterations": 50, "log_points": 10},
                "optimizers": {
                    "gd": {"label": labels["gd"], "rule": "gd", "lr": 1.0},
                    "ngd": {"label": labels["ngd"], "rule": "ngd", "lr": 0.1},
                },
            }
        },
    }
    (workdir / "config/hostile.yaml").write_text(yaml.safe_dump(config))
    target, report = "results/hostile.pdf", "results/report.html"
    snakemake(workdir, target, "-c2", "-q", config="config/hostile.yaml")
    snakemake(workdir, target, "--report", report, config="config/hostile.yaml")
    html = (workdir / report).read_text()
    assert "SECRET-6f1d0c" not in html
    elements = _Elements(html).found
    assert not [e for e in elements if e[1].get("id", "").lower() == "injected"]
    assert not [e for e in elements if e[0] in ("img", "b", "strong", "a", "iframe")]
    # the template's own script elements, and no more (each ends where it should)
    template = (Path(snakemake_report.__file__).parent / "template/index.html.jinja2").read_text()
    assert sum(tag == "script" for tag, _ in elements) == template.count("<script")

    reason = unavailable()
    if reason:
        pytest.skip(f"the HTML is checked; the page in a browser is not: {reason}")
    browser = Chromium()
    try:
        page = browser.page((workdir / report).as_uri())
        page.wait_until("typeof app !== 'undefined' && document.querySelectorAll('a').length > 3")
        page.evaluate(HELPERS)
        open_listing(page, "Figures", None)  # one subcategory: the listing opens at once
        text = caption(page, target)  # also: no docutils "System Message" in it
        assert ".. raw:: html" in text and "onerror" in text and ".. include::" in text
        assert "Hostile **bold** title" in text
        for label in labels.values():
            assert label in text
        assert "SECRET-6f1d0c" not in page.evaluate("document.documentElement.outerHTML")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("document.getElementById('injected') === null")
        links = "[...document.querySelectorAll('a')].filter(a => /script:/i.test(a.href)).length"
        assert page.evaluate(links) == 0
        assert page.evaluate("document.querySelectorAll('strong b, #raw').length") == 0
    finally:
        browser.close()


STUDY = "results-tiny/global_convergence.pdf"  # not part of `all`


REPORT = "results-tiny/report.html"


# Helpers in the page: links by their text, rows of the results table by their file.
HELPERS = """
window.reportTest = {
  links(text) {
    return [...document.querySelectorAll('a')].filter(a => a.innerText.trim() === text);
  },
  click(text) {
    const links = this.links(text);
    if (links.length === 0) throw new Error('no link named ' + text);
    links[0].click();
  },
  row(path) {
    return [...document.querySelectorAll('tbody tr')].find(r => r.innerText.trim() === path);
  },
  press(path, icon) {
    this.row(path).querySelector('a[iconname="' + icon + '"]').click();
  },
  payload(src) { return src.slice(src.indexOf('base64,') + 7); },
};
"""


@pytest.fixture(scope="module")
def project(built_project):
    # targets first: -q and --configfile (added last) would take them as their values
    snakemake(built_project, "all", STUDY, "-c2", "-q")  # a no-op where they are built
    snakemake(built_project, "all", STUDY, "--report", REPORT)
    return built_project


@pytest.fixture(scope="module")
def config(project):
    return yaml.safe_load((project / "config/tiny.yaml").read_text())


@pytest.fixture(scope="module")
def page(project):
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    browser = Chromium()
    try:
        page = browser.page((project / REPORT).as_uri())
        page.wait_until("typeof app !== 'undefined' && document.querySelectorAll('a').length > 3")
        page.evaluate(HELPERS)
        yield page
    finally:
        browser.close()


def open_listing(page, category: str, subcategory: str | None) -> None:
    """From wherever the report is, to the table of results of (category, subcategory)."""
    if page.evaluate("reportTest.links('Results').length"):  # breadcrumb back to the menu
        page.evaluate("reportTest.click('Results')")
    page.evaluate(f"reportTest.click({json.dumps(category)})")
    if subcategory is not None:
        page.evaluate(f"reportTest.click({json.dumps(subcategory)})")


def show(page, path: str) -> str:
    """Press the result's eye button; wait until it is displayed; return its CSS selector."""
    page.wait_until(f"!!reportTest.row({json.dumps(path)})")
    page.evaluate(f"reportTest.press({json.dumps(path)}, 'eye')")
    mime = {"png": "image/png", "pdf": "application/pdf", "html": "text/html"}[path.rsplit(".")[-1]]
    selector = f'{"img" if mime == "image/png" else "iframe"}[src^="data:{mime};"]'
    page.wait_until(f"!!document.querySelector({json.dumps(selector)})")
    return selector


def shown_bytes(page, selector: str) -> bytes:
    """The file that the displayed element shows, decoded from its data URI."""
    src = f"document.querySelector({json.dumps(selector)}).src"
    return base64.b64decode(page.evaluate(f"reportTest.payload({src})"))


def caption(page, path: str) -> str:
    """Press the result's info button and return the caption (DESCRIPTION) as text."""
    page.evaluate(f"reportTest.press({json.dumps(path)}, 'information-circle')")
    text = page.wait_until(
        "document.body.innerText.includes('DESCRIPTION') && document.body.innerText"
    )
    about, described = text.split("DESCRIPTION", 1)
    assert path in about.split("PATH", 1)[1], f"the info shown is not {path}'s:\n{about}"
    described = described.split("SIZE", 1)[0]
    # a caption's RST or Jinja error shows as a docutils message or as raw template text
    assert "System Message" not in described and "{{" not in described and "{%" not in described
    return " ".join(described.split())


def figure_cases(config):
    """(subcategory, file, words its caption must hold) for every built figure."""
    for name, e in config["experiments"].items():
        words = [
            e["title"],
            f"results-tiny/{name}.provenance.json",
            f"{e['seeds']} seed(s)",
            f"Data model {e['data']['model']}",
            f"{e['train']['iterations']} iterations",
            f"device {config['device']} in {config['dtype']}",
            *(
                f"{opt['label']} ({OptimizerSpec(**spec(opt)).caption()})"
                for opt in e["optimizers"].values()
            ),
        ]
        for fmt in ("pdf", "png"):
            yield name, f"results-tiny/{name}.{fmt}", words
    study = config["global_convergence"]
    words = [
        "Global convergence over random initial directions and scales",
        f"{study['inits']} random initial W0",
        f"{study['iterations']} steps",
        *study["settings"],
        "results-tiny/global_convergence.provenance.json",
    ]
    for fmt in ("pdf", "png"):
        yield "global_convergence", f"results-tiny/global_convergence.{fmt}", words


def spec(opt):
    return {k: v for k, v in opt.items() if k != "label"}


def test_every_figure_shows_with_its_caption(project, config, page, tmp_path):
    cases = list(figure_cases(config))
    assert len(cases) == 2 * (len(config["experiments"]) + 1)
    for subcategory, path, words in cases:
        open_listing(page, "Figures", subcategory)
        shown = show(page, path)
        assert shown_bytes(page, shown) == (project / path).read_bytes(), path
        if path.endswith(".png"):  # chromium decoded it: the image has its real width
            width = page.evaluate(f"document.querySelector({json.dumps(shown)}).naturalWidth")
            assert width > 500, path
        text = caption(page, path)
        missing = [w for w in words if w not in text]
        assert not missing, f"{path}: caption lacks {missing}:\n{text}"
    # the last view: the study's PNG with its caption beside it
    time.sleep(0.5)
    shot = page.screenshot(project / "results-tiny" / "report_screenshot.png")
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000


def test_claims_table_shows_with_its_caption(project, config, page):
    open_listing(page, "Claims", None)  # one subcategory: the listing opens at once
    shown = show(page, "results-tiny/claims.html")
    assert shown_bytes(page, shown) == (project / "results-tiny/claims.html").read_bytes()
    # read the table as chromium rendered it, inside the report's iframe
    browser, session = page.browser, page.session
    frames = browser.call("Page.getFrameTree", session)["frameTree"].get("childFrames", [])
    assert len(frames) == 1
    world = browser.call("Page.createIsolatedWorld", session, frameId=frames[0]["frame"]["id"])
    rendered = browser.call(
        "Runtime.evaluate",
        session,
        expression="""JSON.stringify({
            heading: document.querySelector('h1').innerText,
            experiments: [...document.querySelectorAll('tbody tr')].map(
                r => r.querySelector('td').innerText),
        })""",
        contextId=world["executionContextId"],
        returnByValue=True,
    )["result"]["value"]
    rendered = json.loads(rendered)
    assert rendered["heading"] == "The paper's claims, measured"
    table = csvcells.read(project / "results-tiny/claims.csv", keep_default_na=False)
    # every row, in order: its experiment, on its data where the row names them
    rows = zip(table["experiment"], table["data"], strict=True)
    assert rendered["experiments"] == [f"{e}, on {d}" if d else e for e, d in rows]
    for path in ("results-tiny/claims.html", "results-tiny/claims.md"):
        open_listing(page, "Claims", None)
        text = caption(page, path)
        assert "The paper's claims, measured" in text
        for name, e in config["experiments"].items():
            assert f"{name} ({e['seeds']} seed" in text, (path, name, text)
