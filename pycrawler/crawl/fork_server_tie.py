"""The first module the fetchers' fork server imports: it ties the server to the crawl.

See :func:`pycrawler.worker_processes.use_tied_fork_server`; imported anywhere else (no
starter named in the environment), it does nothing.
"""

from ..worker_processes import tie_fork_server

tie_fork_server()
