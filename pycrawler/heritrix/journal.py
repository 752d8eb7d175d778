"""Heritrix's frontier recover journal (``logs/frontier.recover.gz``): reading and writing.

Every Heritrix crawl writes it (``FrontierJournal``, a ``CrawlerJournal``): gzip text, one
frontier event a line, a three-character tag first.

=========  ===========================  ============================================================
tag        fields                       written when
=========  ===========================  ============================================================
``F+``     ``URL HOPS VIA``             a URL joins a queue (``sendToQueue``: after the seen check)
``Fs``     ``URL HOPS VIA``             it finished with success (a fetch status > 0, 404 included)
``Ff``     ``URL HOPS VIA``             it finished with failure (retries spent, or a status <= 0)
``Fd``     ``URL``                      it was disregarded (robots.txt, scope changed): left its queue
``Fr``     ``URL``                      it is to be retried: it stays at its place in its queue
``Fe``     ``URL``                      it was handed out to a fetch thread (still in its queue)
``Fi``     ``URL``                      it was marked seen by an import (``includeOnly``), not queued
``T``      ``TIMESTAMP``                every 10,000 lines
``E``      ``TIMESTAMP ERROR``          a serious error, followed by a blank line
=========  ===========================  ============================================================

``HOPS`` is the hop path from the seed (``LLX``; empty for a seed) and ``VIA`` the URL it was
found on (empty for a seed): ``F+ http://example.com/ `` ends in spaces for a seed. Heritrix
reads a line by splitting what follows the tag on whitespace (``CrawlURI.fromHopsViaString``),
so an empty hop path followed by a via would read the via as the hop path: the writer puts a
seed's via nowhere.

At each checkpoint the journal is closed and renamed ``frontier.recover.gz.cpNNNNN-TIMESTAMP``
(``CrawlerJournal.rotateForCheckpoint``) and a new one started, so a crawl's journal is its
rotated parts, oldest first (the names sort so), then the current file. With Heritrix's
``forgetAllButLatest`` the older parts are concatenated into the newest (gzip allows that):
a file may hold several gzip members. Heritrix 3.13 leaves the new current file at 0 bytes
until its gzip stream first fills a buffer (32 KiB), so right after a checkpoint, or after a
kill before that, it is empty: read as no lines, and said so. A crawl killed mid-write leaves
the current file cut short; Heritrix reads such a file up to where it breaks
(``EOFException``: "expected in some uncleanly-closed recovery logs"). This reader does the
same, keeps every whole line before the break, and says where it broke.

Replaying a journal (:func:`replay`) gives what the frontier held when it was written: a
URL is *pending* from its ``F+`` line until a ``Fs``, ``Ff`` or ``Fd`` line finishes it (a
later ``F+``, as a forced revisit writes, makes it pending again); ``Fr``, ``Fe``, ``Fi``
leave it where it is. Pending URLs come out in the order of the ``F+`` lines that queued them:
the order Heritrix scheduled them, which within a queue is the order of their ordinals.
Lines that are none of these (cut, binary garbage) are counted and skipped, as Heritrix skips
them.

Heritrix re-imports a journal itself (``Frontier.importURIs`` with ``format: recoveryLog``:
``Fs``/``Ff`` lines mark URLs seen, ``F+`` lines not finished are scheduled again);
:func:`write_journal` writes one it imports.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from hashlib import md5
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..errors import BadInput
from ..progress import meter
from ..spill import SpillFile

RECOVER_LOG = "frontier.recover.gz"
H1_RECOVER_LOG = "recover.gz"   # Heritrix 1.14's name for the same journal
ROTATED_PART = re.compile(r"^(?:frontier\.)?recover\.gz\.(cp\d{5}-\d{14})$")
"""A part rotated at a checkpoint (``CrawlerJournal``: ``NAME.cpNNNNN-yyyyMMddHHmmss``)."""

ADDED, SUCCESS, FAILURE, DISREGARDED, RESCHEDULED, EMITTED, INCLUDED = "F+", "Fs", "Ff", "Fd", "Fr", "Fe", "Fi"
FINISHED = (SUCCESS, FAILURE, DISREGARDED)
EVENTS = frozenset((ADDED, SUCCESS, FAILURE, DISREGARDED, RESCHEDULED, EMITTED, INCLUDED))
NOTES = frozenset(("T", "E"))   # timestamp and error lines: no frontier event
GZIP_MAGIC = b"\x1f\x8b"
READ_CHUNK = 1 << 20
INFLATE_LIMIT = 8 << 20   # bytes inflated per call
MAX_LINE = 1 << 20
OVERLONG = b"<a line longer than 1 MiB>"   # what such a line reads as: no event, so skipped


@dataclasses.dataclass(slots=True)
class Pending:
    """A URL the journal leaves queued: how it was found."""

    url: str
    hops: str
    via: str | None


@dataclasses.dataclass
class JournalFile:
    """What reading one file gave: its lines, and where (if anywhere) it broke off."""

    path: Path
    lines: int = 0
    cut: str | None = None      # why the file ends early ("cut short after byte N", ...)
    empty: bool = False         # 0 bytes: nothing written to it yet


@dataclasses.dataclass
class Replay:
    """A replayed journal: the URLs it leaves pending (in ``F+`` order) and its counts."""

    pending: PendingURLs             # in F+ order, on disk
    files: list[JournalFile]
    events: dict[str, int]           # lines per tag
    skipped: int                     # lines that are no journal event (garbage, a URL that is none)
    ignored: list[Path] = dataclasses.field(default_factory=list)  # files in the folder not read
    checkpoint: str | None = None    # read up to this checkpoint's rotation

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def cut(self) -> list[JournalFile]:
        return [f for f in self.files if f.cut]

    @property
    def after_checkpoint(self) -> list[Path]:
        """Files not read because they were written after the checkpoint read (its rotated
        later parts and the current file)."""
        return [p for p in self.ignored if self.checkpoint is not None and written_after_rotation(p)]

    @property
    def relaunched(self) -> list[Path]:
        """Files not read because Heritrix moved them aside at a relaunch: another run."""
        later = set(self.after_checkpoint)
        return [p for p in self.ignored if p not in later]

    def summary(self) -> dict:
        """The facts of the replay, as the import's manifest records them. ``ignored_files``
        lists every file of the folder not read; ``after_checkpoint`` those of them written
        after the checkpoint read, ``relaunched`` those moved aside at a relaunch."""
        return {"files": [str(f.path) for f in self.files], "lines": self.lines, "events": self.events,
                "skipped_lines": self.skipped, "cut_short": {str(f.path): f.cut for f in self.cut},
                "empty_files": [str(f.path) for f in self.files if f.empty],
                "ignored_files": [str(p) for p in self.ignored], "checkpoint": self.checkpoint,
                "after_checkpoint": [str(p) for p in self.after_checkpoint],
                "relaunched": [str(p) for p in self.relaunched], "pending": len(self.pending)}

    def close(self) -> None:
        """Free the pending URLs' spill file."""
        self.pending.close()


# -- finding the files ------------------------------------------------------------------------------

def written_after_rotation(path: Path) -> bool:
    """Whether ``path`` is a part of the journal that goes on after a rotation (a later rotated
    part or the current file), not a file moved aside at a relaunch."""
    return Path(path).name in (RECOVER_LOG, H1_RECOVER_LOG) or bool(ROTATED_PART.match(Path(path).name))


def journal_files(path: str | Path, *, checkpoint: str | None = None) -> tuple[list[Path], list[Path]]:
    """(files to read, oldest first; other journal files of the folder, not read).

    ``path`` is a journal file, or a folder (a job's ``logs/``) holding ``frontier.recover.gz``
    and its rotated parts. With ``checkpoint`` (a checkpoint's name, as a state read from that
    checkpoint has), only the parts up to that checkpoint's rotation are read: what the
    checkpoint's ``pending`` database saw. Files Heritrix moved aside at a relaunch
    (``frontier.recover.gz.TIMESTAMP``: a run the state does not continue) are not read."""
    path = Path(path)
    if path.is_file():
        return [path], []
    if not path.is_dir():
        raise BadInput(f"recover log {path} does not exist: give a frontier.recover.gz file or the job's logs/ folder")
    parts, current, ignored = [], None, []
    for child in sorted(path.iterdir()):
        rotated = ROTATED_PART.match(child.name)
        if child.name in (RECOVER_LOG, H1_RECOVER_LOG):
            current = child
        elif rotated and (checkpoint is None or rotated.group(1) <= checkpoint):
            parts.append(child)
        elif child.name.startswith((RECOVER_LOG + ".", H1_RECOVER_LOG + ".")):
            ignored.append(child)
    if current is not None:
        (parts if checkpoint is None else ignored).append(current)
    if not parts:
        raise BadInput(f"{path} holds no Heritrix recover log ({RECOVER_LOG} or its rotated parts "
                       f"{RECOVER_LOG}.cpNNNNN-TIMESTAMP)" + (f" up to checkpoint {checkpoint}" if checkpoint else ""))
    return parts, ignored


# -- reading ------------------------------------------------------------------------------------------

def read_line_batches(path: Path, report: JournalFile) -> Iterator[list[bytes]]:
    """The whole lines (bytes, without their ends) of one journal file, a list per chunk read:
    gzip, every member; or plain text when the file is not gzip and not named ``.gz``. A
    cut-short or corrupt gzip ends the lines at the last whole one before the break, and
    ``report.cut`` says where."""
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise BadInput(f"cannot read recover log {path}: {exc.strerror}") from None
    with stream:
        head = stream.read(2)
        stream.seek(0)
        if not head:
            report.empty = True
            return
        if head == GZIP_MAGIC[:1] and len(head) == 1:   # a kill after the gzip header's first byte
            report.cut = "gzip cut short at byte 1 (an unclean end, as a killed crawl leaves)"
            return
        if head != GZIP_MAGIC:
            if path.name.endswith(".gz") or ROTATED_PART.match(path.name):
                raise BadInput(f"recover log {path} is not gzip (Heritrix writes its journal gzipped)")
            chunks = iter(lambda: stream.read(READ_CHUNK), b"")
        else:
            chunks = _gunzip(stream, report)
        for lines in _split_lines(chunks, report):
            report.lines += len(lines)
            yield lines


def _gunzip(stream: BinaryIO, report: JournalFile) -> Iterator[bytes]:
    """The decompressed bytes of every gzip member of ``stream``, stopping (with ``report.cut``
    set) where the data is cut short or stops being gzip."""
    inflater, member_open, offset = _inflater(), False, 0
    for chunk in iter(lambda: stream.read(READ_CHUNK), b""):
        offset += len(chunk)
        while chunk:
            try:  # bounded output per call: a small file may inflate to gigabytes
                data = inflater.decompress(chunk, INFLATE_LIMIT)
            except zlib.error as exc:
                report.cut = f"not gzip from somewhere in bytes {offset - len(chunk)}..{offset} on ({exc})"
                return
            member_open = True
            if data:
                yield data
            if inflater.eof:  # what follows is the next member (or not gzip: the next call says so)
                chunk, inflater, member_open = inflater.unused_data, _inflater(), False
            else:
                chunk = inflater.unconsumed_tail
    if member_open:
        report.cut = f"gzip cut short at byte {offset} (an unclean end, as a killed crawl leaves)"


def _inflater():
    return zlib.decompressobj(zlib.MAX_WBITS | 16)


def _split_lines(chunks: Iterable[bytes], report: JournalFile) -> Iterator[list[bytes]]:
    """The lines of a byte stream (without ``\\n``; a ``\\r`` before it stays and is
    whitespace to the fields), a list per chunk. An unfinished last line of a file that broke
    off is dropped (``report.cut`` says so); a line longer than :data:`MAX_LINE` (no journal
    line is: Heritrix's URLs are a few KB at most) comes out as :data:`OVERLONG`."""
    rest, overlong = b"", False
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        if overlong and lines:
            lines[0], overlong = OVERLONG, False
        yield lines
        if len(rest) > MAX_LINE:
            rest, overlong = b"", True
    if overlong:
        yield [OVERLONG]
    elif rest:
        if report.cut:
            report.cut += "; its last line is incomplete and not read"
        else:
            yield [rest]


# -- replaying ----------------------------------------------------------------------------------------
#
# A journal of a 100M-URL crawl has some 200M event lines and leaves millions of URLs pending:
# more than a dict of URLs holds in a few GiB. So a replay takes two passes and keeps neither
# the URLs nor the events in memory:
#
# 1. every F+ and finishing line becomes a 24-byte event (the URL's MD5, its line number, and
#    whether it finishes); events gather in memory up to a bound, then spread over partition
#    files by the MD5's first bits, so that all events of one URL land in one partition;
# 2. partition by partition, the events are sorted by URL and line: a URL is pending when an
#    F+ follows its last finish, at the line of the first such F+;
# 3. a second read of the files takes those lines' fields into a spill file, in line order,
#    which is F+ order.
#
# 128 bits of MD5 make two URLs' events mix with odds of about 1 in 10^22 at a billion URLs.

_URL = re.compile(rb"[A-Za-z][A-Za-z0-9+.\-]*:\S")
_TAGS = {tag.encode(): tag for tag in EVENTS}
_ADDED, _FINISHED, _NOTES = ADDED.encode(), {tag.encode() for tag in FINISHED}, {tag.encode() for tag in NOTES}
EVENT = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("at", "<u8")])   # MD5 halves; line * 2 + finishes
PARTITION_BITS = 6
MEMORY_EVENTS = 1 << 22   # events held before they go to partition files (96 MiB)


class PendingURLs:
    """The URLs a replay leaves pending, in the order of the F+ lines that queued them: a
    sized, re-iterable sequence kept in a :class:`~pycrawler.spill.SpillFile`, read back in
    order (iteration, :meth:`batches`) or by number (:meth:`read`)."""

    def __init__(self, spill: SpillFile):
        self._spill = spill

    def __len__(self) -> int:
        return len(self._spill)

    def __iter__(self) -> Iterator[Pending]:
        for batch in self.batches():
            yield from batch

    def batches(self, size: int = 65536) -> Iterator[list[Pending]]:
        for records in self._spill.batches(size):
            yield [_pending(record.split(b" ")) for record in records]

    def read(self, numbers) -> list[Pending]:
        """The pending URLs with these numbers (0 = the first F+), in the order asked."""
        return [_pending(record.split(b" ")) for record in self._spill.read(numbers)]

    def close(self) -> None:
        self._spill.close()


def replay(files: Iterable[Path], ignored: Iterable[Path] = (), *, progress: bool | None = False,
           memory_events: int = MEMORY_EVENTS) -> Replay:
    """Replay journal files, in the order given (see the module docstring); ``progress``: count
    the lines live on stderr (None: when it is a terminal). ``memory_events``: events kept in
    memory before they spill to partition files in ``TMPDIR`` (24 bytes each there)."""
    files = [Path(path) for path in files]
    events = dict.fromkeys(_TAGS, 0)
    reports, skipped = [], 0
    with _Events(memory_events) as found, meter("journal", unit="lines", enabled=progress) as bar:
        line = 0
        for path in files:
            report = JournalFile(path)
            reports.append(report)
            for lines in read_line_batches(path, report):
                skipped += _replay_lines(lines, line, events, found)
                line += len(lines)
                bar.update(len(lines))
        wanted = found.pending_lines()
    spill = SpillFile()
    try:
        _take_lines(reports, wanted, spill)
    except BaseException:
        spill.close()
        raise
    return Replay(PendingURLs(spill), reports, {_TAGS[tag]: n for tag, n in events.items()}, skipped,
                  list(ignored))


def _replay_lines(lines: list[bytes], first: int, events: dict[bytes, int], found: _Events) -> int:
    """Count each line's event and note the adds and finishes (``first``: the number of the
    first line); returns the lines skipped."""
    skipped = 0
    digests, at = [], []
    for number, line in enumerate(lines, first):
        tag, _, rest = line.partition(b" ")
        if tag not in events:
            skipped += tag not in _NOTES and bool(line.strip())
            continue
        fields = rest.split(None, 1)
        if not fields or not _URL.match(fields[0]):
            skipped += 1
            continue
        events[tag] += 1
        finishes = tag in _FINISHED
        if finishes or tag == _ADDED:
            digests.append(md5(fields[0]).digest())
            at.append(number * 2 + finishes)
    found.add(digests, at)
    return skipped


class _Events:
    """The adds and finishes of a journal, in memory up to a bound, then in partition files."""

    def __init__(self, memory_events: int):
        self._limit = memory_events
        self._held: list[np.ndarray] = []
        self._count = 0
        self._parts: list | None = None

    def add(self, digests: list[bytes], at: list[int]) -> None:
        if not at:
            return
        halves = np.frombuffer(b"".join(digests), dtype="<u8").reshape(-1, 2)
        batch = np.empty(len(at), EVENT)
        batch["hi"], batch["lo"], batch["at"] = halves[:, 0], halves[:, 1], at
        self._held.append(batch)
        self._count += len(batch)
        if self._count >= self._limit:
            self._spill()

    def _spill(self) -> None:
        if self._parts is None:
            self._parts = [tempfile.TemporaryFile(prefix="pycrawler-journal-") for _ in range(1 << PARTITION_BITS)]
        held = np.concatenate(self._held)
        self._held, self._count = [], 0
        part = held["hi"] >> np.uint64(64 - PARTITION_BITS)
        order = np.argsort(part, kind="stable")
        held, bounds = held[order], np.searchsorted(part[order], np.arange((1 << PARTITION_BITS) + 1))
        for number, out in enumerate(self._parts):
            held[bounds[number]:bounds[number + 1]].tofile(out)

    def pending_lines(self) -> np.ndarray:
        """The line numbers of the F+ lines that leave a URL pending, ascending."""
        if self._parts is None:
            found = [_pending_adds(np.concatenate(self._held))] if self._held else []
        else:
            if self._held:
                self._spill()
            found = []
            for part in self._parts:
                part.seek(0)
                found.append(_pending_adds(np.fromfile(part, dtype=EVENT)))
        return np.sort(np.concatenate(found)) if found else np.empty(0, np.uint64)

    def __enter__(self) -> _Events:
        return self

    def __exit__(self, *exc) -> None:
        for part in self._parts or ():
            part.close()


def _pending_adds(events: np.ndarray) -> np.ndarray:
    """The line of the F+ that leaves each URL pending: the first F+ after its last finish."""
    if not len(events):
        return np.empty(0, np.uint64)
    events = events[np.lexsort((events["at"], events["lo"], events["hi"]))]
    url = np.cumsum(np.r_[True, (events["hi"][1:] != events["hi"][:-1]) | (events["lo"][1:] != events["lo"][:-1])]) - 1
    finishes = (events["at"] & np.uint64(1)).astype(bool)
    starts = np.flatnonzero(np.r_[True, url[1:] != url[:-1]])
    # Events are in line order within a URL: a row is after the last finish when no finish
    # lies at or after it, i.e. its URL's count of finishes so far equals the URL's total.
    seen_finishes = np.cumsum(finishes)
    before_url = np.r_[0, seen_finishes][starts]
    total = np.add.reduceat(finishes.astype(np.int64), starts)
    after_last_finish = (seen_finishes - before_url[url]) == total[url]
    adds = np.flatnonzero(after_last_finish & ~finishes)
    first_of_url = adds[np.r_[True, url[adds][1:] != url[adds][:-1]]] if len(adds) else adds
    return events["at"][first_of_url] >> np.uint64(1)


def _take_lines(reports: list[JournalFile], wanted: np.ndarray, spill: SpillFile) -> None:
    """Read the files again and spill the URL, hop path and via of each wanted line (F+ lines,
    ascending). Only as many lines of each file are read as the first pass read, so a journal
    that grew in between (a crawl still writing it) gives the same lines."""
    line, taken = 0, 0
    for report in reports:
        if taken == len(wanted):
            return
        again, end = JournalFile(report.path), line + report.lines
        for lines in read_line_batches(report.path, again):
            lines = lines[:end - line]
            stop = int(np.searchsorted(wanted, line + len(lines)))
            records = []
            for number in wanted[taken:stop].tolist():
                tag, _, rest = lines[number - line].partition(b" ")
                if tag != _ADDED:
                    raise BadInput(f"recover log {report.path} changed while it was read: line {number - line + 1} "
                                   "is no longer the F+ line it was")
                records.append(b" ".join(rest.split()[:3]))
            spill.extend(records)
            taken, line = stop, line + len(lines)
            if line >= end:
                break
        line = end
    if taken < len(wanted):
        raise BadInput(f"recover log {reports[-1].path} changed while it was read: it ends before line "
                       f"{int(wanted[taken]) + 1} of the journal")


def _pending(fields: list[bytes]) -> Pending:
    """``F+ URL HOPS VIA`` read as ``CrawlURI.fromHopsViaString`` reads it (a via of one
    character is none)."""
    text = [field.decode("utf-8", "replace") for field in fields[:3]]
    return Pending(text[0], text[1] if len(text) > 1 else "", text[2] if len(text) > 2 and len(text[2]) > 1 else None)


def replay_path(path: str | Path, *, checkpoint: str | None = None, progress: bool | None = False) -> Replay:
    """:func:`replay` of a journal file or of a ``logs/`` folder's journal (:func:`journal_files`)."""
    files, ignored = journal_files(path, checkpoint=checkpoint)
    done = replay(files, ignored, progress=progress)
    done.checkpoint = checkpoint
    if not done.lines or (not any(done.events.values()) and done.skipped):
        why = done.cut[0].cut if done.cut else ("every file is empty (0 bytes: Heritrix had not yet flushed its "
                                                "gzip stream)" if all(f.empty for f in done.files) else "")
        raise BadInput(f"recover log {path} holds no Heritrix frontier journal lines (F+, Fs, Ff, ...)"
                       + (f": {why}" if why else ""))
    return done


# -- writing ------------------------------------------------------------------------------------------

_SPACE = re.compile(r"\s")
COMPRESS_LEVEL = 6   # what Java's GZIPOutputStream uses, as Heritrix writes it


def journal_line(tag: str, url: str, hops: str = "", via: str | None = None) -> str:
    """One journal line as ``FrontierJournal`` writes it. ``F+``, ``Fs`` and ``Ff`` carry the hop
    path and via; whitespace in the URL (which Heritrix's parsed URLs never hold) is escaped, and
    a via without a hop path is left out (Heritrix would read it as the hop path)."""
    if tag not in EVENTS:
        raise BadInput(f"not a frontier journal event: {tag!r}")
    url = _SPACE.sub(lambda m: f"%{ord(m.group()):02X}", url)
    if tag not in (ADDED, SUCCESS, FAILURE):
        return f"{tag} {url}\n"
    return f"{tag} {url} {hops} {(via or '') if hops else ''}\n"


def write_journal(out: BinaryIO, lines: Iterable[str]) -> int:
    """Write journal lines (:func:`journal_line`) gzipped to ``out``; returns how many."""
    count = 0
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=COMPRESS_LEVEL, mtime=0) as packed:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) == 65536:
                packed.write("".join(batch).encode("utf-8"))
                count += len(batch)
                batch = []
        packed.write("".join(batch).encode("utf-8"))
        count += len(batch)
    return count
