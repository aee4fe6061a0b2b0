"""The figures: what each figure kind draws, panel by panel (panels), the drawing with
seaborn (drawing) in its kind's layout (layout; tokens_2d for App. C.1's), its parts
(lines, log_axes, overlap, references, notes, save), the geometry experiments' figure
(geometry_figure: results/geometry.pdf) and the study's figure (study_figure)."""
