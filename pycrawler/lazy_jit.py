"""Kernels written for numba that run as plain Python until a batch is worth compiling.

Importing numba costs a process ~100 MB and a couple of seconds, which a crawl that hands a
URL cache a few hundred keys per flush never earns back. A module marks its kernels with
:func:`kernel` (the options numba should compile them with) and keeps the numba-typed style
(numpy scalars, fixed-width arithmetic); until :func:`compiled` is called on the module they
are ordinary Python functions, so small batches run without numba at all. :func:`compiled`
swaps every marked function of the module for its numba dispatcher, once: since the kernels
call each other through the module's globals, they then all run compiled, in numba's own
calls and in Python's alike. Both modes give the same results (tests hold them equal).

In Python mode, numpy warns when uint64 arithmetic wraps around, which the hash functions do
on purpose: :func:`wrapping` silences that around such calls.
"""

from __future__ import annotations

import types

import numpy as np

def wrapping() -> np.errstate:
    """Context for Python-mode calls: wrapping uint64 arithmetic is intended, not an error."""
    return np.errstate(over="ignore")


def kernel(**options):
    """Mark a function as a numba kernel compiled with ``options`` by :func:`compiled`."""

    def mark(function):
        function.jit_options = options
        return function

    return mark


def compiled(module: types.ModuleType) -> types.ModuleType:
    """``module`` with its marked kernels compiled by numba (imported here, on first call)."""
    if not getattr(module, "_jit_compiled", False):
        import numba

        for name, value in list(vars(module).items()):
            options = getattr(value, "jit_options", None)
            if isinstance(value, types.FunctionType) and options is not None:
                setattr(module, name, numba.njit(**options)(value))
        module._jit_compiled = True
    return module
