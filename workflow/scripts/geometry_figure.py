"""Draw results/geometry.pdf (and its PNG twin) from the geometry experiments' aggregate
tables, with its caption (data, model, the hypotheses the data and svm jobs measured, the
final alignments) and provenance. Inputs named metrics/<name>, data/<name>, svm/<name>."""

from attnbias.data import hypotheses
from attnbias.figures import algorithm_style, geometry_figure
from attnbias.optim.spec import resolve
from attnbias.workflow import joblog, npz, parquet, provenance

joblog.start(snakemake)
i, o = snakemake.input, snakemake.output
settings = snakemake.params.experiments
if not settings:
    raise ValueError("results/geometry.pdf: the config has no experiment of layout geometry")
tables = {
    name: parquet.load_metrics(i[f"metrics/{name}"], s["identity"]) for name, s in settings.items()
}
measured = {
    name: hypotheses.describe(
        hypotheses.summarize(npz.hypotheses_by_seed(i[f"data/{name}"], i[f"svm/{name}"]))
    )
    for name in settings
}
aggregates = [i[f"metrics/{name}"] for name in settings]
record = provenance.of_job(snakemake, figure="geometry", title="geometry", training=aggregates)
# each optimizer drawn as its algorithm is in every figure (algorithm_style)
algorithms = {
    name: key
    for s in settings.values()
    for name, key in algorithm_style.algorithms_of(
        resolve(s["optimizers"], real=False), "geometry"
    ).items()
}
geometry_figure.draw(tables, settings, algorithms, [o.pdf, o.png, o.caption], record, measured)
provenance.save(o.provenance, record)
