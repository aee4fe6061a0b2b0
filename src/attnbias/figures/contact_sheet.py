"""Every figure of a build on one page, so that a reviewer sees them side by side: each
PNG twin at the same width, in the order given, under its name."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnbias.figures.style import FULL_WIDTH, apply_theme  # noqa: E402

COLUMNS = 2


def draw(pngs: list, output, provenance: dict | None = None) -> None:
    """Tile the figures `pngs` (paths) in COLUMNS columns into `output` (a PNG or PDF)."""
    from attnbias.figures.save import save_figure

    if not pngs:
        raise ValueError("a contact sheet needs at least one figure")
    images = [plt.imread(str(p)) for p in pngs]
    apply_theme()
    rows = -(-len(images) // COLUMNS)
    width = FULL_WIDTH / COLUMNS
    heights = [
        max(width * im.shape[0] / im.shape[1] for im in images[r * COLUMNS : (r + 1) * COLUMNS])
        for r in range(rows)
    ]
    fig, axes = plt.subplots(
        rows, COLUMNS, figsize=(FULL_WIDTH, sum(heights) + 0.25 * rows), squeeze=False,
        height_ratios=heights, layout="constrained",
    )  # fmt: skip
    for ax in axes.flat:
        ax.axis("off")
    for ax, image, path in zip(axes.flat, images, pngs, strict=False):
        ax.imshow(image)
        ax.set_title(Path(path).stem, loc="left", fontweight="bold")
    save_figure(fig, [output], provenance)
