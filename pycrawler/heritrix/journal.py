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
a file may hold several gzip members. A crawl killed mid-write leaves the current file cut
short; Heritrix reads such a file up to where it breaks (``EOFException``: "expected in some
uncleanly-closed recovery logs"). This reader does the same, keeps every whole line before
the break, and says where it broke.

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
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import BadInput
from ..progress import meter

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


@dataclasses.dataclass
class Replay:
    """A replayed journal: the URLs it leaves pending (in ``F+`` order) and its counts."""

    pending: dict[str, Pending]
    files: list[JournalFile]
    events: dict[str, int]           # lines per tag
    skipped: int                     # lines that are no journal event (garbage, a URL that is none)
    ignored: list[Path] = dataclasses.field(default_factory=list)  # files in the folder not read

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def cut(self) -> list[JournalFile]:
        return [f for f in self.files if f.cut]

    def summary(self) -> dict:
        """The facts of the replay, as the import's manifest records them."""
        return {"files": [str(f.path) for f in self.files], "lines": self.lines, "events": self.events,
                "skipped_lines": self.skipped, "cut_short": {str(f.path): f.cut for f in self.cut},
                "ignored_files": [str(p) for p in self.ignored], "pending": len(self.pending)}


# -- finding the files ------------------------------------------------------------------------------

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

_URL = re.compile(rb"[A-Za-z][A-Za-z0-9+.\-]*:\S")
_TAGS = {tag.encode(): tag for tag in EVENTS}
_ADDED, _FINISHED, _NOTES = ADDED.encode(), {tag.encode() for tag in FINISHED}, {tag.encode() for tag in NOTES}


def replay(files: Iterable[Path], ignored: Iterable[Path] = (), *, progress: bool | None = False) -> Replay:
    """Replay journal files, in the order given (see the module docstring); ``progress``: count
    the lines live on stderr (None: when it is a terminal).

    Lines stay bytes until the end, where only the pending URLs are decoded (UTF-8, as
    Heritrix writes them): most of a journal is URLs that finished."""
    pending: dict[bytes, list[bytes]] = {}
    events = dict.fromkeys(_TAGS, 0)
    reports, skipped = [], 0
    with meter("journal", unit="lines", enabled=progress) as bar:
        for path in files:
            report = JournalFile(Path(path))
            reports.append(report)
            for lines in read_line_batches(report.path, report):
                skipped += _replay_lines(lines, events, pending)
                bar.update(len(lines))
    urls = (_pending(fields) for fields in pending.values())
    return Replay({url.url: url for url in urls}, reports, {_TAGS[tag]: n for tag, n in events.items()}, skipped,
                  list(ignored))


def _replay_lines(lines: list[bytes], events: dict[bytes, int], pending: dict[bytes, list[bytes]]) -> int:
    """Count each line's event and keep ``pending`` up to date; returns the lines skipped."""
    skipped = 0
    for line in lines:
        tag, _, rest = line.partition(b" ")
        if tag not in events:
            skipped += tag not in _NOTES and bool(line.strip())
            continue
        fields = rest.split()
        if not fields or not _URL.match(fields[0]):
            skipped += 1
            continue
        events[tag] += 1
        if tag == _ADDED:
            # Queued again without finishing (Heritrix relocated it): its place stays.
            pending.setdefault(fields[0], fields)
        elif tag in _FINISHED:
            pending.pop(fields[0], None)
    return skipped


def _pending(fields: list[bytes]) -> Pending:
    """``F+ URL HOPS VIA`` read as ``CrawlURI.fromHopsViaString`` reads it (a via of one
    character is none)."""
    text = [field.decode("utf-8", "replace") for field in fields[:3]]
    return Pending(text[0], text[1] if len(text) > 1 else "", text[2] if len(text) > 2 and len(text[2]) > 1 else None)


def replay_path(path: str | Path, *, checkpoint: str | None = None, progress: bool | None = False) -> Replay:
    """:func:`replay` of a journal file or of a ``logs/`` folder's journal (:func:`journal_files`)."""
    files, ignored = journal_files(path, checkpoint=checkpoint)
    done = replay(files, ignored, progress=progress)
    if not done.lines or (not any(done.events.values()) and done.skipped):
        raise BadInput(f"recover log {path} holds no Heritrix frontier journal lines (F+, Fs, Ff, ...)"
                       + (f": {done.cut[0].cut}" if done.cut else ""))
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
