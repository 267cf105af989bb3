"""Running the tasks of a clipped domain (:mod:`pgas.plan.clip`).

A clipped task's views cover its piece's lattice hull: every element there is
inside the arrays (the box is the domain's exact projection, and bounds are
checked on it) and inside the fetched buffers (footprints are the hull's).
The value is computed on the whole hull with floating-point warnings off (a
point outside the domain may divide by zero), by a fused kernel for a small
task, by NumPy a box at a time for a large one (:func:`finish_boxes`: a kernel's
value would be a temporary of the hull's size), then:

- a plain write stores only where the task's :func:`~pgas.plan.clip.mask` holds;
- a reduction first replaces the values outside by the reduction's neutral
  element, and combines only into the written elements that have at least one
  point inside, so the others keep their exact old values (signed zeros too).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.clip import mask
from .tasks import evaluate_boxes, evaluate_reduced


@dataclass
class Clipped:
    """A task's value and where (broadcastable to the written view) to store it."""

    value: np.ndarray
    where: np.ndarray


def neutral(reducer, dtype):
    """The neutral element of ``reducer`` (a ufunc) in ``dtype``."""
    dtype = np.dtype(dtype)
    if reducer in (np.minimum, np.fmin, np.maximum, np.fmax):
        low = reducer in (np.maximum, np.fmax)
        if dtype.kind in "fc":
            return np.asarray(-np.inf if low else np.inf, dtype)
        if dtype.kind == "b":
            return np.asarray(not low, dtype)
        info = np.iinfo(dtype)
        return np.asarray(info.min if low else info.max, dtype)
    return np.asarray(reducer.identity).astype(dtype)


def finish(task, value, axes, reducer):
    """The :class:`Clipped` result of a clipped ``task`` whose value over the whole
    hull is ``value`` (broadcast to the task's shape)."""
    keep = np.broadcast_to(mask(task.shape, task.clip), task.shape)
    if axes:
        value = np.where(keep, value, neutral(reducer, value.dtype))
        return Clipped(reducer.reduce(value, axis=axes, keepdims=True), keep.any(axis=axes, keepdims=True))
    return Clipped(value, keep)


def finish_boxes(task, prog, ctx, axes, reducer, target=None):
    """:func:`finish` of ``prog``'s value on a clipped ``task``, computed box by box by NumPy
    (:func:`pgas.exec.tasks.evaluate_boxes`, :func:`~pgas.exec.tasks.evaluate_reduced`),
    with the same values: a reduction's boxes are masked and reduced one by one; a plain
    write's boxes are stored into ``target`` (the written elements, where the statement
    may store in place, see :func:`pgas.exec.fuse.in_place`) only inside the domain as
    they are computed (None is returned), or else gathered into one array of the task's
    size."""
    shape = task.shape
    if axes:
        def inside(key, value):
            return np.where(mask(shape, task.clip, key), value, neutral(reducer, value.dtype))

        keep = np.broadcast_to(mask(shape, task.clip), shape)
        return Clipped(evaluate_reduced(prog, ctx, shape, axes, reducer, inside), keep.any(axis=axes, keepdims=True))
    if target is None:
        return Clipped(evaluate_boxes(prog, ctx, shape), np.broadcast_to(mask(shape, task.clip), shape))
    return evaluate_boxes(prog, ctx, shape, target, lambda key: mask(shape, task.clip, key))


def store(target, value: Clipped, combine=None) -> None:
    """Write a clipped result into ``target`` (combined with its old values by
    ``combine`` for a reduction)."""
    new = combine(target, value.value) if combine is not None else value.value
    np.copyto(target, np.broadcast_to(new, target.shape), casting="unsafe", where=value.where)
