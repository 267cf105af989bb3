"""Medians, quantiles and percentiles of distributed arrays: NumPy's arithmetic on a few ranks, the distributed selection, the NumPy functions."""
