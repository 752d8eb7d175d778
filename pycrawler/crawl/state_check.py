"""A crawl state checked against what is written beside it, before the crawl goes on.

Two checks, at two moments of the open:

**Before anything is written** (:func:`require_crawl_folder`): ``--state`` must be absent, an
empty folder (but for pycrawler's own markers, :data:`OWN_MARKERS`), or a crawl state (a folder
holding ``crawl.json``, what every crawl and import writes before its JE files; a cluster
worker's ``cluster.json`` may come first). Anything else, a JE environment of another program
included, is refused before a byte goes into it.

**Once JE and the outputs are open** (:func:`check_state`): the state's commits against
crawl.log. Each flush commits its completions together with the length crawl.log had when
the flush made it durable (:class:`LogMark`, a record of the ``crawl_log_mark`` database),
then writes the same length into ``crawl.log.committed`` beside it: every line before the
mark is of a URL the state counts as done. On open, with ``M`` the mark JE holds, ``C`` the
file's and ``S`` crawl.log's length (its torn tail cut):

- ``C <= M <= S``: whole. ``M > C`` is a kill between the commit and the file's write, ``S > M``
  the lines of the flush a kill cut short (those URLs are pending: fetched again, as ever).
- ``M < C``: the JE files lost commits they had acknowledged (a ``.jdb`` cut or damaged: JE's
  recovery keeps the log up to the damage and drops the rest, silently). A state whose seen
  table keeps files outside JE (``--seen bloom`` or ``drum``) is refused: those files hold what
  the lost commits added, so URLs found in them would be called seen and never fetched. In a
  state of the ``exact`` table (the default) the fetches crawl.log holds past ``M`` are replayed (:class:`Replays`): when the frontier hands one of those URLs
  out, its response is read back from the WARC files instead of fetched, and goes through the
  page workers, the record and the flush as a fetch does (no output line is written again), so
  its links are found again and no page is fetched twice. A fetch no WARC file holds (no
  ``--warc``, or the file gone) is refused in one line, unless ``--repair`` says to fetch it
  again.
- ``S < max(M, C)``: crawl.log lost lines the state counts on (more than the torn tail a kill
  leaves, which comes after the mark); refused.

A state with neither mark (made before the marks, or by an import, which writes no crawl.log)
is not checked until its first flush. The check's cost on an intact state is one JE read and
two small file reads.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from ..atomic_write import PARTIAL_SUFFIX
from ..errors import BadInput
from ..fetch.result import DEFAULT_MAX_BODY, FetchResult, decode_payload
from ..parse.links import absolute_url
from ..store import Environment
from .settings import SETTINGS_FILE

MARK_DB = "crawl_log_mark"
MARK_KEY = b"crawl.log"
COMMITTED_FILE = "crawl.log.committed"
_MARK_WIDTH = 20
OWN_MARKERS = ".pycrawler-"
"""Files pycrawler's own tools put in a folder they made for a crawl (the demo's ``.pycrawler-demo``)."""
WORKER_FILE = "cluster.json"
"""A cluster worker's id (``pycrawler.cli.cluster``), written into its state before the crawl starts."""
STARTING_FILES = {SETTINGS_FILE + PARTIAL_SUFFIX, WORKER_FILE, WORKER_FILE + PARTIAL_SUFFIX}
"""What a crawl's start-up writes before ``crawl.json`` (a kill may leave them alone in a new folder)."""


def require_crawl_folder(state: Path) -> None:
    """Refuse ``state`` unless it is absent, an empty folder or a crawl state (``crawl.json``);
    nothing is written before this check."""
    if not state.exists():
        return
    if not state.is_dir():
        raise BadInput(f"--state {state} is a file, not a folder: give a new folder or a crawl's --state")
    entries = {path.name for path in state.iterdir() if not path.name.startswith(OWN_MARKERS)}
    if SETTINGS_FILE in entries or entries <= STARTING_FILES:
        return
    what = "a JE environment" if any(name.endswith(".jdb") for name in entries) else f"{len(entries):,} other files"
    raise BadInput(f"--state {state} holds {what} but no {SETTINGS_FILE}: it is not a crawl state; "
                   "give a new or empty folder, or a crawl's --state")


class LogMark:
    """crawl.log's length at each commit: in JE, written in the commit's transaction
    (:meth:`put`), and in ``crawl.log.committed``, written once it is committed
    (:meth:`acknowledged`)."""

    def __init__(self, env: Environment, state: Path):
        self.db = env.open_database(MARK_DB, create=True)
        self.path = state / COMMITTED_FILE
        self._fd: int | None = None
        self.floor: tuple[int, int] | None = None  # (JE's, the file's) kept while fetches wait to be replayed

    def held(self) -> int | None:
        """The length JE holds, None when it holds none."""
        value = self.db.get(MARK_KEY)
        return None if value is None else int.from_bytes(value, "big")

    def put(self, length: int, txn) -> None:
        """``length`` into JE in ``txn``; while fetches wait to be replayed, the mark stays where
        the lost ones begin, so a run stopped before it replayed them all leaves them to the next."""
        self.db.put(MARK_KEY, (length if self.floor is None else self.floor[0]).to_bytes(8, "big"), txn=txn)

    def acknowledged(self, length: int) -> None:
        """``length`` into ``crawl.log.committed``, in place (one write of a fixed width: a kill
        cannot leave half of it), reaching the disk as JE's commits do: with the OS."""
        self._write(length if self.floor is None else self.floor[1])

    def settle(self, length: int) -> None:
        """Both marks to ``length`` (the fetches left to replay will never be handed out: the
        crawl ran to its end without them)."""
        self.floor = None
        with self.db.env.begin() as txn:
            self.put(length, txn)
        self._write(length)

    def _write(self, length: int) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o666)
        os.pwrite(self._fd, f"{length:0{_MARK_WIDTH}d}\n".encode(), 0)

    def recorded(self) -> int | None:
        """The length ``crawl.log.committed`` holds, None when there is no such file (or an empty
        one: a kill between its creation and its first write)."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            raise BadInput(f"{self.path} is damaged ({text[:40]!r}): it holds crawl.log's committed length") from None

    def require_log(self, log_path: Path) -> None:
        """Refuse a state that has committed fetches but lost its crawl.log (checked before the
        outputs open, which would create an empty one)."""
        if not log_path.is_file() and (self.held() is not None or self.recorded() is not None):
            raise BadInput(f"{log_path.parent}'s crawl.log is gone, so what the state counts as fetched cannot be "
                           "checked: restore it, or crawl into a fresh --state")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclasses.dataclass(slots=True)
class LoggedFetch:
    """A URL's last crawl.log line past the mark, and where the WARC files hold its response."""

    status: int
    warc: tuple[Path, int] | None = None  # (file, offset of the response record)


class Replays:
    """The fetches crawl.log holds and the state lost, replayed when the frontier hands their
    URLs out (:meth:`take`); ``lost``: how many the state lost, ``unheld``: of those, the pages
    no WARC file holds (fetched again, under ``--repair``)."""

    def __init__(self, fetches: dict[str, LoggedFetch], lost: int, unheld: int, mark: LogMark):
        self.fetches, self.lost, self.unheld, self.mark = fetches, lost, unheld, mark
        self.replayed = 0

    def take(self, url: str) -> FetchResult | None:
        """The logged fetch of ``url`` as the fetcher gave it (its response read back from the
        WARC files), once; None when there is none to replay."""
        logged = self.fetches.pop(url, None)
        if logged is None:
            return None
        self.replayed += 1
        if not self.fetches:  # the commits from now on cover every replay
            self.mark.floor = None
        if logged.warc is None:  # no response: a failure or a refusal, replayed by its status
            return FetchResult(url=url, status=logged.status)
        return _read_response(*logged.warc)

    def line(self) -> str:
        """What was lost and rebuilt, for the summary."""
        return (f"state: its JE files had lost commits, crawl.log holds {self.lost:,} fetches past the last one "
                f"they keep; {self.replayed:,} replayed from crawl.log and the WARC files, not fetched again"
                + (f"; {self.unheld:,} no WARC file holds were fetched again (--repair)" if self.unheld else ""))


def _read_response(path: Path, offset: int) -> FetchResult:
    """The response record at ``offset`` of ``path`` as the fetcher gave it: the payload as
    received, the body decoded, the redirect's target."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as stream:
        stream.seek(offset)
        record = next(iter(ArchiveIterator(stream)))
        http = record.http_headers
        warc = record.rec_headers
        result = FetchResult(url=warc.get_header("WARC-Target-URI"), status=int(http.get_statuscode()),
                             reason=http.statusline.partition(" ")[2], headers=list(http.headers),
                             payload=record.raw_stream.read(), ip=warc.get_header("WARC-IP-Address"))
    result.body = decode_payload(result, DEFAULT_MAX_BODY)
    if 300 <= result.status < 400 and (location := result.header("Location")):
        result.redirect = absolute_url(result.url, location)
    return result


def check_state(state: Path, mark: LogMark, log_path: Path, warc_dir: Path | None, *, repair: bool,
                is_transient: Callable[[int], bool], seen: str = "exact") -> Replays | None:
    """Check the state against crawl.log (see the module docstring): the fetches to replay,
    None for a whole state; raises :class:`BadInput` for what cannot be repaired. ``mark``: the
    state's :class:`LogMark`; ``warc_dir``: the crawl's WARC folder; ``repair``: fetch again what
    no WARC file holds, rather than refuse; ``is_transient``: the statuses the crawl
    retries (a URL whose last line has one is pending, not replayed); ``seen``: the state's
    seen table (only ``exact`` lives in JE alone, so only its states are repaired)."""
    held, recorded = mark.held(), mark.recorded()
    if held is None and recorded is None:
        return None
    size, committed = log_path.stat().st_size, max(held or 0, recorded or 0)
    if size < committed:
        raise BadInput(f"{state}'s crawl.log ends at byte {size:,} but the state committed fetches up to byte "
                       f"{committed:,}: it lost lines; restore it, or crawl into a fresh --state")
    if recorded is None or (held or 0) >= recorded:
        return None
    fetches = logged_fetches(log_path, held or 0, is_transient)
    lost = len(fetches)
    if seen != "exact":
        raise BadInput(f"{state}: its JE files lost commits, crawl.log holds {lost:,} fetches past the last one they "
                       f"keep, and its --seen {seen} table keeps files outside JE that those commits had changed "
                       "(it would call URLs seen that the state never queued): it cannot be repaired; crawl into a "
                       "fresh --state")
    wanted = {url for url, logged in fetches.items() if logged.status > 0}
    if wanted and warc_dir is not None and warc_dir.is_dir():
        for url, place in _responses(warc_dir, wanted).items():
            fetches[url].warc = place
    unheld = [url for url in wanted if fetches[url].warc is None]
    if unheld and not repair:
        raise BadInput(f"{state}: its JE files lost commits, crawl.log holds {lost:,} fetches past the last one they "
                       f"keep, and no WARC file holds {len(unheld):,} of their pages: run again with --repair to "
                       "fetch those again, or crawl into a fresh --state")
    for url in unheld:
        del fetches[url]
    mark.floor = (held or 0, recorded) if fetches else None
    return Replays(fetches, lost, len(unheld), mark)


def logged_fetches(log_path: Path, start: int, is_transient: Callable[[int], bool]) -> dict[str, LoggedFetch]:
    """Each URL's last final outcome in crawl.log from byte ``start``: a transient failure is
    left out (the frontier retries it)."""
    fetches: dict[str, LoggedFetch] = {}
    with open(log_path, "rb") as log:
        log.seek(start)
        for line in log:
            fields = line.split()
            if len(fields) < 4 or not fields[1].lstrip(b"-").isdigit():
                continue  # not a crawl.log entry
            url, status = fields[3].decode("utf-8", "surrogateescape"), int(fields[1])
            if is_transient(status):
                fetches.pop(url, None)
            else:
                fetches[url] = LoggedFetch(status)
    return fetches


def _responses(warc_dir: Path, urls: set[str]) -> dict[str, tuple[Path, int]]:
    """Where the WARC files under ``warc_dir`` hold the last response of each of ``urls``."""
    from warcio.archiveiterator import ArchiveIterator

    found: dict[str, tuple[Path, int]] = {}
    for path in sorted(p for p in warc_dir.iterdir() if p.name.endswith((".warc", ".warc.gz"))):
        with open(path, "rb") as stream:
            records = ArchiveIterator(stream)
            for record in records:
                if record.rec_type == "response":
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    if url in urls:
                        found[url] = (path, records.get_record_offset())
    return found
