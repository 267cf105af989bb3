"""Reductions and scans: whole-array, along axes, cumulative, NaN-ignoring, and their NumPy
function forms."""
