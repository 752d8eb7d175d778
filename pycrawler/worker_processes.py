"""Worker processes that end with the process that started them, even when it is killed -9.

A process pool's worker outlives a parent killed -9: nothing tells it, and it waits for its
next task forever, holding the parent's stdout and stderr open (so a caller reading them to
their end waits too) and the ``multiprocessing`` resource tracker alive (which ends when the
last holder of its pipe does). A thread in the worker watching for its parent cannot do it at
every instant: a parent killed while the worker still starts (its imports take a second on a
busy machine) is gone before the thread looks, and a thread needs the GIL, which a long parse
holds.

So the kernel does it: a worker asks Linux for ``SIGKILL`` when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and checks that its parent is still the one that started it
(a parent that died before that is not signalled: its worker has already been handed to
another). It does so as it unpickles its start-up arguments, before it imports the modules its
work needs (:class:`ParentTie`): a kill after that ends the worker within milliseconds, a kill
before it as soon as the worker gets there (what is left of its interpreter's start: a tenth of
a second on a quiet machine, more than a second at a load of 40 on two cores), and the resource
tracker follows.

Linux sends the signal when the *thread* that started the worker ends, not the process: a pool
whose workers are tied starts them all at once, in the thread that makes it (which must
outlive it), never on demand from whichever thread submits work.
"""

from __future__ import annotations

import ctypes
import multiprocessing.connection
import multiprocessing.forkserver
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1
"""prctl's option: the signal the calling process gets when its parent (thread) dies."""


def tie_to_parent(parent: int, forked_by_server: bool = False) -> None:
    """In a worker: be killed when the process ``parent`` ends, and end now if it has already.

    ``forked_by_server``: the worker's parent is ``multiprocessing``'s fork server, not
    ``parent`` (the pool's process); the worker checks that ``parent`` still runs, and is
    killed when the fork server ends. The fork server ends only once every worker has (each
    holds its pipe), so the worker also watches ``parent`` itself (:func:`start_tied`)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the check below still ends a late orphan
        pass
    if not (_runs(parent) if forked_by_server else os.getppid() == parent):
        os._exit(0)


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone (PermissionError: its pid is another user's now)
        return False
    return True


class ParentTie:
    """A pool initializer's first argument that ties the worker to this process while the
    worker unpickles it (before the initializer and its own arguments, which may import
    much, are even loaded); then :func:`start_tied` calls the real initializer."""

    def __init__(self, start_method: str) -> None:
        self.parent = os.getpid()
        self.forked_by_server = start_method == "forkserver"

    def __reduce__(self):
        return _tied, (self.parent, self.forked_by_server)


def _tied(parent: int, forked_by_server: bool) -> bool:
    tie_to_parent(parent, forked_by_server)
    return forked_by_server


def start_tied(forked_by_server: bool, initializer: Callable | None = None, *initargs) -> None:
    """A pool's ``initializer``, with ``initargs=(ParentTie(start_method), initializer, *initargs)``
    (the tie unpickles as ``forked_by_server``)."""
    if forked_by_server:
        threading.Thread(target=_exit_with_pool_process, name="pool-process-watch", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _exit_with_pool_process() -> None:
    """End this worker when the pool's process ends: the pipe it writes this worker's tasks
    from reaches its end (``multiprocessing``'s parent sentinel)."""
    multiprocessing.connection.wait([multiprocessing.parent_process().sentinel])
    os._exit(0)


class TiedProcessPool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` whose workers are tied to this process (:class:`ParentTie`),
    all started now, in this thread: ``initializer(*initargs)`` runs in each once it is tied.
    :meth:`wait_started` waits until every worker has started."""

    def __init__(self, workers: int, context, initializer: Callable | None = None, initargs: tuple = ()):
        super().__init__(workers, mp_context=context, initializer=start_tied,
                         initargs=(ParentTie(context.get_start_method()), initializer, *initargs))
        # With spawn or forkserver a submit starts a worker while none is idle, and none is
        # before the first has started (a fraction of a second): one submit a worker.
        self._starting = [self.submit(os.getpid) for _ in range(workers)]

    def wait_started(self) -> None:
        for started in self._starting:
            started.result()


FORK_SERVER_STARTER = "PYCRAWLER_FORK_SERVER_STARTER"
"""The environment variable in which a process names itself to the fork server it starts."""


_fork_server_users = 0
_fork_server_lock = threading.Lock()


def use_tied_fork_server(context, modules: list[str]) -> None:
    """Use ``context``'s fork server until :func:`release_fork_server`. The first user has the
    server, which the next process started from it starts, import ``modules`` before it forks
    any, and end with this process from its first import on; the last one's release ends it.

    The server imports its preload list before it reads the pipe whose end tells it that its
    starter is gone, so a starter killed -9 meanwhile (the imports take a third of a second on
    a quiet machine, seconds on a busy one) would leave it running that long, holding the
    starter's stdout and stderr. So the list begins with :mod:`pycrawler.crawl.fork_server_tie`,
    which ties the server to this process (:func:`tie_fork_server`), named in the environment
    the server inherits."""
    global _fork_server_users
    with _fork_server_lock:
        if not _fork_server_users:
            os.environ[FORK_SERVER_STARTER] = str(os.getpid())
            context.set_forkserver_preload(["pycrawler.crawl.fork_server_tie", *modules])
        _fork_server_users += 1


def release_fork_server() -> None:
    """One user of :func:`use_tied_fork_server` is done; the last one ends the server
    (:func:`_stop_fork_server`), which the processes of the others were forked from."""
    global _fork_server_users
    with _fork_server_lock:
        _fork_server_users -= 1
        if not _fork_server_users:
            _stop_fork_server()


def tie_fork_server() -> None:
    """In a fork server started by :func:`use_tied_fork_server`: be killed with the starter
    (or end now if it has ended), and leave SIGINT and SIGTERM to it, as the workers do: a stop
    sent to the whole process group (a terminal's Ctrl-C, a service manager's stop) is the
    starter's to carry out, and the server's death would kill every worker it forked."""
    starter = os.environ.pop(FORK_SERVER_STARTER, None)
    if starter is None:
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    tie_to_parent(int(starter))


def _stop_fork_server() -> None:
    """End ``multiprocessing``'s fork server of this process, if it runs, and reap it.

    Left alone, it ends only once this process has (it then reads the end of its pipe), so it
    outlives the work it served, and the CPU of the workers it forked and reaped is counted to
    no one who waits for this process. A server started afresh for the next work also takes
    that work's environment and working folder. ``multiprocessing`` has no public call for it;
    its own tests use this one (Python 3.8 to 3.14), and without it the server still ends with
    this process."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if stop is not None:
        stop()
