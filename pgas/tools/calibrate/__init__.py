"""``pgas calibrate``: measuring the network model's figures (:mod:`~pgas.tools.calibrate.network`)
and, through real statements, the per-strip and write-back costs
(:mod:`~pgas.tools.calibrate.statements`).  The model itself, its cache file and the
figures statements use at run time are :mod:`pgas.exec.calibration`."""
