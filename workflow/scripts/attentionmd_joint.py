"""AttentionMD's joint run, ours and theirs restated (neighbours.attentionmd_joint): the
curves results/attentionmd_joint.csv and the summary .json (the figure is another job's)."""

from attnbias.neighbours import joint_run
from attnbias.workflow import io, joblog

joblog.start(snakemake)
curves, summary = joint_run.run(snakemake.params.settings)
io.save_csv(snakemake.output.csv, curves)
io.save_json(snakemake.output.summary, summary)
