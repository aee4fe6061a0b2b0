"""AttentionMD's joint run, ours and theirs restated (neighbours.attentionmd_joint): the
curves results/attentionmd_joint.csv, the summary .json and the figure (PNG, caption,
provenance)."""

from attnbias.figures import neighbours_figures
from attnbias.neighbours import joint_run
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
curves, summary = joint_run.run(snakemake.params.settings)
io.save_csv(snakemake.output.csv, curves)
io.save_json(snakemake.output.summary, summary)
record = provenance.of_job(
    snakemake, figure="attentionmd_joint", title=neighbours_figures.JOINT_TITLE
)
neighbours_figures.draw_joint(
    curves,
    summary,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
