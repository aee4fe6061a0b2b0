"""A figure's files: every format its outputs name, written atomically with the provenance
in their metadata, and its caption beside them."""

from __future__ import annotations

import matplotlib.pyplot as plt

from attnbias.figures import caption as captions
from attnbias.workflow.provenance import savefig
from attnbias.workflow.store import atomic_path


def save_figure(fig, outputs, provenance: dict | None = None, caption: str | None = None) -> None:
    """Save `fig` to every path (its format from the suffix), atomically, and close it; a
    `.caption.md` path gets `caption` instead.

    `provenance` (a record of attnbias.workflow.provenance) goes into each file's metadata.
    """
    # the raster first: the layout is solved on the first file, and Agg's text is a little
    # wider than the PDF's, so a layout solved on the PDF clipped the PNG's longest labels
    # at the edge (the sweep figure's claims, at the left)
    for path in sorted(outputs, key=lambda p: str(p).rsplit(".", 1)[-1] != "png"):
        if captions.is_caption(path):
            if caption is None:
                raise ValueError(f"{path}: this figure has no caption to write")
            captions.write(path, caption)
            continue
        with atomic_path(path) as tmp:
            savefig(fig, tmp, str(path).rsplit(".", 1)[-1], provenance, dpi=150)
        # the layout is fixed by the first file (in inches, so the same at any dpi): the
        # other formats keep it instead of solving it again (a second of CPU per figure).
        # No engine at all, not "none": with one, savefig draws the figure twice
        fig.set_layout_engine(None)
    plt.close(fig)
