"""``pgas show``: ownership maps and a statement's footprints, as text and as PNG files
(the pictures are drawn by :mod:`pgas.plan.draw`)."""

from __future__ import annotations

from pgas.plan.draw import (
    MissingMatplotlib,
    draw_footprints,
    draw_ownership,
    footprint_line,
    footprints,
    merged_line,
    ownership_text,
)


def jacobi_statement(n: int):
    """The paper's Figure 5 statement ``B[i, j] = A[i+1, j] + A[i-1, j] + A[i, j+1] + A[i, j-1]``
    over the interior of ``n x n`` arrays (B slot 0, A slot 1), for pictures without MPI."""
    from pgas.plan import Access, Statement

    eye = ((1, 0), (0, 1))
    reads = [Access(1, eye, c) for c in ((1, 0), (-1, 0), (0, 1), (0, -1))]
    return Statement(((1, 1, n - 2), (1, 1, n - 2)), (Access(0, eye, (0, 0)), *reads), 0)


def main(argv, Parser) -> int:
    """``pgas show``: ownership maps and a statement's footprints; returns the exit status."""
    import os

    from pgas.layout import Block, BlockCyclic, Cyclic

    p = Parser(prog="pgas show", description="Show which locale owns each element under Block, Cyclic and "
               "Block-Cyclic (the modulo-unrolling paper's Figures 1-3) and which elements one statement "
               "moves for one locale, aggregated into one message per source locale (its Figure 6): the "
               "5-point Jacobi statement, or the statements of one step of a benchmark kernel (--kernel). "
               "Text on the terminal; PNG files with --out (pip install 'pgas[plot]').")
    p.add_argument("--shape", default="8,8", help="array shape for the maps, e.g. 8,8 or 16 (default 8,8)")
    p.add_argument("--locales", type=int, default=4, help="locale count (default 4)")
    p.add_argument("--block", type=int, default=2, help="Block-Cyclic block size (default 2, as Figure 3)")
    p.add_argument("--locale", type=int, default=3, help="the locale whose footprints are shown (default 3)")
    p.add_argument("--dist", default="cyclic", help="distribution of the footprints: block, cyclic or "
                   "blockcyclic (default cyclic)")
    p.add_argument("--kernel", default=None, help="show one step of this benchmark kernel (pgas bench list) "
                   "instead of the Jacobi statement")
    p.add_argument("--size", type=int, default=8, help="the kernel's (or the Jacobi arrays') size (default 8)")
    p.add_argument("--out", default=None, metavar="DIR", help="write ownership.png and footprints.png here")
    args = p.parse_args(argv)
    try:
        shape = tuple(int(x) for x in args.shape.split(","))
    except ValueError:
        p.error(f"--shape expects whole numbers separated by commas, got {args.shape!r}")
    if not 1 <= len(shape) <= 2 or min(shape) < 1:
        p.error(f"--shape must be 1-D or 2-D with positive extents, got {args.shape}")
    for name in ("locales", "block", "size"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not 0 <= args.locale < args.locales:
        p.error(f"--locale must be in 0..{args.locales - 1}, got {args.locale}")
    dists = {"block": Block(), "cyclic": Cyclic(), "blockcyclic": BlockCyclic(args.block)}
    if args.dist.lower() not in dists:
        p.error(f"--dist must be block, cyclic or blockcyclic, got {args.dist!r}")
    maps = {"Block": dists["block"], "Cyclic": dists["cyclic"], f"BlockCyclic({args.block})": dists["blockcyclic"]}
    layouts = {k: d.bind(shape, args.locales) for k, d in maps.items()}
    for title, L in layouts.items():
        print(f"{title}, {'x'.join(map(str, shape))} on {args.locales} locales:\n{ownership_text(L)}\n")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    try:
        if args.out:
            print(f"wrote {draw_ownership(layouts, os.path.join(args.out, 'ownership.png'))}")
        dist = dists[args.dist.lower()]
        png = os.path.join(args.out, "footprints.png") if args.out else None
        if args.kernel:
            _show_kernel(p, args, dist, png)
        else:
            if args.size < 3:
                p.error("--size must be >= 3 for the Jacobi statement")
            stmt = jacobi_statement(args.size)
            lay = tuple(dist.bind((args.size, args.size), args.locales) for _ in range(2))
            print(f"B[i, j] = A[i+1, j] + A[i-1, j] + A[i, j+1] + A[i, j-1] over the interior of "
                  f"{args.size}x{args.size}, {args.dist}, seen from locale {args.locale}:")
            for f in footprints(stmt, lay, args.locale, names=["B", "A"]):
                print(f"  {f['text']}: {footprint_line(f)}")
            print(f"  in all: {merged_line(stmt, lay, 0, args.locale)}")
            if png:
                print(f"wrote {draw_footprints([(stmt, lay, 0, ['B', 'A'])], args.locale, png)}")
    except MissingMatplotlib as e:
        print(f"pgas show: {e}")
        return 1
    return 0


def _show_kernel(p, args, dist, png) -> None:
    import pgas as pg
    from pgas.tools.bench.kernels import KERNELS

    if args.kernel not in KERNELS:
        p.error(f"unknown kernel {args.kernel!r}; choose from {', '.join(KERNELS)}")
    k = KERNELS[args.kernel]
    state = k.setup(args.size, dist)
    print(pg.explain(lambda: k.step(state, 1), locales=args.locales, locale=args.locale, plot=png))
    if png:
        print(f"wrote {png}")
