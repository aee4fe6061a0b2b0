"""No symbolic link inside a results folder (attnbias.workflow.results_links)."""

from __future__ import annotations

import pytest

from attnbias.workflow import results_links


def _results(tmp_path):
    folder = tmp_path / "results"
    (folder / "logs/figure").mkdir(parents=True)
    (folder / "fig2.pdf").write_bytes(b"%PDF")
    (folder / "logs/figure/fig2.log").write_text("ok\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return folder, elsewhere


def test_a_folder_of_files_passes(tmp_path):
    """The control: files and folders only."""
    folder, _ = _results(tmp_path)
    results_links.check({"results": str(folder)})


def test_a_results_folder_that_is_itself_a_link_passes(tmp_path):
    """A results folder on a scratch disk, linked into the working directory."""
    folder, _ = _results(tmp_path)
    link = tmp_path / "linked-results"
    link.symlink_to(folder)
    results_links.check({"results": str(link)})


@pytest.mark.parametrize("place", ["fig2.pdf", "logs", "logs/figure/fig2.log"])
def test_a_linked_output_or_log_folder_is_refused_by_name(place, tmp_path):
    """A final PDF linked to a file elsewhere (Snakemake took it as up to date), the logs
    folder linked elsewhere (logs went there without a word), one log linked."""
    folder, elsewhere = _results(tmp_path)
    path = folder / place
    target = elsewhere / path.name
    if path.is_dir():
        target.mkdir()
        (folder / place / "figure").rename(target / "figure")
        path.rmdir()
    else:
        target.write_bytes(path.read_bytes())
        path.unlink()
    path.symlink_to(target)
    with pytest.raises(results_links.LinkInResultsError) as err:
        results_links.check({"results": str(folder)})
    message = str(err.value)
    assert f"{path} -> {target}" in message
    assert "(config key results)" in message and "Remove the links" in message


def test_many_links_are_counted_past_the_named_ones(tmp_path):
    folder, elsewhere = _results(tmp_path)
    for i in range(7):
        (folder / f"link{i}").symlink_to(elsewhere)
    with pytest.raises(results_links.LinkInResultsError, match=r"link4 -> .*\(and 2 more\)"):
        results_links.check({"results": str(folder)})
