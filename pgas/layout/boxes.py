"""Cutting an array's index space into boxes of bounded size, in C order.

Code that fills or computes a large array piece by piece (constructors filling
a window in place, the NumPy evaluation of a large task) walks these boxes, so
its temporaries are never larger than one box, whatever the array's size.
"""

from __future__ import annotations

import itertools
import math

#: Elements in one box by default: 256 Ki (2 MiB of float64).
BOX = 1 << 18


def boxes(shape, most: int = BOX):
    """Index tuples (``slice`` per leading axis) that cut ``shape`` into C-order boxes of at
    most ``most`` elements each (one element at least): the trailing axes that fit whole
    are kept whole, the axis before them is cut into runs of rows, and each index of the
    axes before that is a box of its own.  An empty shape gives no box; a shape that fits
    whole gives one key, ``()``.

    >>> list(boxes((3, 4), 8))
    [(slice(0, 2, None),), (slice(2, 3, None),)]
    >>> list(boxes((2, 3), 2))
    [(slice(0, 1, None), slice(0, 2, None)), (slice(0, 1, None), slice(2, 3, None)), (slice(1, 2, None), slice(0, 2, None)), (slice(1, 2, None), slice(2, 3, None))]
    >>> list(boxes((2, 3), 6)), list(boxes((0, 3)))
    ([()], [])
    """
    shape = tuple(int(n) for n in shape)
    if math.prod(shape) == 0:
        return
    most = max(int(most), 1)
    inner, ax = 1, len(shape)
    while ax > 0 and inner * shape[ax - 1] <= most:
        ax -= 1
        inner *= shape[ax]
    if ax == 0:
        yield ()
        return
    ax -= 1                                          # the axis cut into runs
    step = max(most // inner, 1)
    for outer in itertools.product(*(range(n) for n in shape[:ax])):
        head = tuple(slice(i, i + 1) for i in outer)
        for r in range(0, shape[ax], step):
            yield head + (slice(r, min(r + step, shape[ax])),)


def box_shape(shape, key) -> tuple:
    """The shape of ``shape``'s box ``key`` (from :func:`boxes`).

    >>> box_shape((3, 4), (slice(2, 3),))
    (1, 4)
    """
    return tuple(len(range(*k.indices(n))) for k, n in zip(key, shape)) + tuple(shape[len(key):])
