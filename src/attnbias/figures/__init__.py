"""The figures: what each figure kind draws, panel by panel (panels), the drawing with
seaborn (drawing), and a sweep's figure (sweep_figure)."""
