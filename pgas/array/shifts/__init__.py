"""Circular and end-off shifts (Fortran's CSHIFT and EOSHIFT), the polyshift and its set-up plans."""
