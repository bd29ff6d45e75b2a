"""Notebooks: renderings and values as Jupyter outputs (outputs), a lecture laid out as cells
(cells), and the export of a trace to a notebook or markdown (export)."""
