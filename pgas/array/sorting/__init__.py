"""Sorting distributed arrays: the sample sort, ``sort`` / ``argsort``, ``unique`` and ``searchsorted``."""
