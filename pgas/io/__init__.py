"""Data in and out at scale: parallel ``.npy`` files (:func:`save`, :func:`load`)."""

from .npy import load, save

__all__ = ["load", "save"]
