"""results/claims_neighbours.md (attnbias.claims.neighbours_write): a section per paper,
each under its own summary line counting its statements' rows apart from the defects of
their code, with its registry."""

from neighbour_tables import control, tables

from attnbias.claims.neighbours import AMD, DEFECTS, TFSVM, measure
from attnbias.claims.neighbours_write import summary_line, to_markdown


def test_a_section_per_paper_with_its_registry():
    text = to_markdown(measure(tables()))
    for paper in (TFSVM, AMD):
        assert f"# {paper}" in text
        assert f"## The registry: {paper.split(' (')[0]}" in text
    assert (
        text.index(TFSVM)
        < text.index("TF-as-SVM: the nuclear SVM has the lower rank")
        < text.index(f"# {AMD}")
    )


def test_the_summary_counts_the_defects_apart():
    table = measure(tables())
    tfsvm = table[table["statement"].str.startswith("tfsvm")]
    assert summary_line(tfsvm) == (
        "3 counted rows (3 holds, 0 does not hold, 0 undecided); 2 comparisons (not counted); "
        "1 consistency checks; defects of their code, measured: 2 rows (2 holds, 0 does not "
        "hold, 0 undecided); 1 not measured."
    )
    failed = measure(control("tfsvm-defect-scs"))  # control: a defect measured
    failed = failed[failed["statement"].isin(DEFECTS) & failed["statement"].str.startswith("tfsvm")]
    assert "measured: 2 rows (1 holds, 1 does not hold" in summary_line(failed)
