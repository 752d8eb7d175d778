"""The GraalPy leg: these tests run under GraalPy only (``scripts/graalpy -m pytest -c
tests/graalpy/pytest.ini``, the third leg of scripts/test); CPython's legs skip the folder."""

import sys

collect_ignore_glob = [] if sys.implementation.name == "graalpy" else ["test_*.py"]
