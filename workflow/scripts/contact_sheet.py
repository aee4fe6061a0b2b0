"""Tile the PNG twins of the default build's figures into results/contact_sheet.png."""

from attnbias.figures import contact_sheet
from attnbias.workflow import joblog

joblog.start(snakemake)
contact_sheet.draw(list(snakemake.input.pngs), snakemake.output[0])
