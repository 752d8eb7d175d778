import sys

if sys.implementation.name == "graalpy":
    # scripts/graalpy's JVM blocks no signal and ends by itself: launch's front (signal masks,
    # the exit before numba's teardown) has nothing to do there, and GraalPy has no pthread_sigmask.
    from .cli import main
else:
    from .launch import main

sys.exit(main())
