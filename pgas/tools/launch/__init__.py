"""``pgas run``: the launcher (:mod:`~pgas.tools.launch.launcher`), what each locale runs
(:mod:`~pgas.tools.launch.runner`) and the watchdog (:mod:`~pgas.tools.launch.watch`)."""
