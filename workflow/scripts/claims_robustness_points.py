"""One constant of `claims_robustness`: the claims table at each of its values
(attnbias.studies.robustness_points), from the default build's files of the experiments it
reads (and a geometry experiment's svm-geometry file) ->
results/claims_robustness/{constant}.parquet."""

import logging

import pyarrow as pa

from attnbias.claims import inputs as claims_inputs
from attnbias.studies import robustness_points
from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
i, p = snakemake.input, snakemake.params
inputs = {
    name: claims_inputs.load(claims_inputs.named(i, name), e, p.identities)
    for name, e in p.settings.items()
}
# a geometry experiment's runs log each norm's measures: its SVMs, for the retrained runs
for name, e in p.settings.items():
    if e["layout"] == "geometry":
        path = claims_inputs.named(i, name)("svm_geometry")
        inputs[name] = robustness_points.with_geometry(inputs[name], path, e, p.identities[path])
point = p.point
table = robustness_points.points(
    point["paths"], point["values"], point["ours"], p.settings, inputs,
    device=p.device, dtype=p.dtype, threads=snakemake.threads,
)  # fmt: skip
for name in inputs:  # the other token sets' SVMs: solved here, or another job's
    if inputs[name].geometry is not None:
        logging.info("%s: %s", name, inputs[name].geometry.cache.summary())
arrow = pa.Table.from_pandas(table, preserve_index=False)
parquet.save_table(snakemake.output[0], parquet.with_identity(arrow, p.identity))
