"""Locale 0 prints a distributed array (printing gathers: a collective) while the others
reduce it: run with collective checking off, every locale waits in the library's polling."""
import pgas as pg

A = pg.zeros(8)
if pg.here == 0:
    print(A)                                         # LINE print
print(A.sum())                                       # LINE sum
