"""Tools built on the library, never imported by it: the ``pgas`` command (:mod:`pgas.tools.cli`),
the launcher and its watchdog (:mod:`pgas.tools.launch`), the benchmarks
(:mod:`pgas.tools.bench`), the calibration measurements (:mod:`pgas.tools.calibrate`) and
``pgas show`` (:mod:`pgas.tools.show`)."""
