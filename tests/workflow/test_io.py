"""Atomic writes (attnbias.workflow.io): a killed writer's temporary files removed."""

from __future__ import annotations

from pathlib import Path

from attnbias.workflow import io

# Leftovers of a killed job: a writer killed between mkstemp and its rename
# leaves `.<name>.<8 random>.tmp` beside the file. The next write of the same file removes
# such leftovers of that file, and nothing else: a job's output has one writer (Snakemake
# runs one job per output, and its lock keeps another instance from it), so no other
# writer's file is in flight. Not at the workflow's start: two Snakemake instances may run
# disjoint targets in one folder, and the other one's writes would be in flight.


def _leftovers_and_others(folder: Path, name: str) -> tuple[list[Path], list[Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    leftovers = [folder / f".{name}.k2j4x9_0.tmp", folder / f".{name}.abcdefgh.tmp"]
    leftovers[0].write_bytes(b"")  # a kill before the writer wrote anything
    leftovers[1].write_bytes(b"%PDF-1.4 half")  # or mid-way
    (folder / "elsewhere").write_text("a link's target\n")
    others = [
        folder / f".{name}.abc.tmp",  # not mkstemp's 8 characters
        folder / f".{name}.abcdefgh.tmp.keep",
        folder / f"{name}.abcdefgh.tmp",  # no leading dot
        folder / f".other-{name}.abcdefgh.tmp",  # another file's: removed at its own write
        folder / "notes.txt",
    ]
    for path in others:
        path.write_text("not ours\n")
    link = folder / f".{name}.linkname.tmp"  # mkstemp makes regular files: a link is not ours
    link.symlink_to(folder / "elsewhere")
    folder_in_place = folder / f".{name}.folder12.tmp"
    folder_in_place.mkdir()
    (folder_in_place / "kept").write_text("kept\n")
    return leftovers, [*others, link, folder_in_place, folder / "elsewhere"]


def test_a_killed_writers_temporary_file_is_removed_at_the_next_write(tmp_path):
    leftovers, others = _leftovers_and_others(tmp_path / "results", "run.json")
    io.save_json(tmp_path / "results/run.json", {"a": 1})
    assert io.load_json(tmp_path / "results/run.json") == {"a": 1}
    assert not any(p.exists() for p in leftovers)
    assert all(p.is_symlink() or p.exists() for p in others)
    assert (tmp_path / "results/.run.json.folder12.tmp/kept").read_text() == "kept\n"
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(
        ["run.json", *(p.name for p in others)]
    )


def test_a_killed_figure_jobs_temporary_pdf_is_removed_when_the_figure_is_drawn(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbias.figures.save import save_figure

    leftovers, others = _leftovers_and_others(tmp_path / "results", "fig3.pdf")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(fig, [tmp_path / "results/fig3.pdf"])
    assert (tmp_path / "results/fig3.pdf").read_bytes().startswith(b"%PDF")
    assert not any(p.exists() for p in leftovers)
    assert all(p.is_symlink() or p.exists() for p in others)
