"""Heritrix checkpoints: find them, check them, and assemble one into a scratch environment.

Heritrix 3 (``BdbModule.doCheckpoint``) writes ``STATE/<name>/jdbfiles.manifest``, one line
``00000abc.jdb,<length>`` per log file of the checkpoint (Heritrix 3.0 separated the two with
a space), and hard-links each file into that folder *under the whole line as its name*
(``STATE/<name>/00000abc.jdb,12345``). Without hard links (``useHardLinkCheckpoints=false``) the
files stay in the state folder, where JE's cleaner renames obsolete ones to ``.del``.
Checkpoint names are ``cpNNNNN-<timestamp>``.

Heritrix 1.14 (``CrawlController.processBdbLogs``) writes ``<checkpoint>/bdbje-logs-manifest.txt``,
one file name per line, and copies the files into ``<checkpoint>/bdbje-logs/``; with
``checkpoint-copy-bdbje-logs`` off it copies nothing and the files stay in the state folder
(again possibly as ``.del``). Its checkpoints live in the job's ``checkpoints/`` folder, beside
``state/``.

Opening a checkpoint never writes the user's folders: its files are symbolically linked into
a private scratch folder (a file longer than the manifest says, as after Heritrix recovered
from the checkpoint and appended to it, is copied up to that length instead), and JE opens the
scratch folder read-only.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from pathlib import Path

from ..errors import BadInput

H3_MANIFEST = "jdbfiles.manifest"
H1_MANIFEST = "bdbje-logs-manifest.txt"
H1_LOG_FOLDER = "bdbje-logs"
LATEST = "latest"
_LOG_FILE = re.compile(r"^[0-9a-fA-F]{8}\.jdb$")
COPY_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class LogFile:
    """One file a checkpoint needs: its JE name, where it is, and the length it must have
    (None when the manifest does not say, as in Heritrix 1)."""

    name: str
    source: Path
    length: int | None


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    name: str
    folder: Path
    manifest: Path
    heritrix: int  # 1 or 3: whose manifest format

    def files(self, state: Path) -> list[LogFile]:
        """The log files, each found where Heritrix would look; BadInput naming the first one
        missing or shorter than the manifest says."""
        found = []
        for name, length, stored_as in self._entries():
            candidates = [self.folder / stored_as] if self.heritrix == 3 else [self.folder / H1_LOG_FOLDER / name]
            candidates += [state / name, state / name.replace(".jdb", ".del")]
            source = next((c for c in candidates if c.is_file()), None)
            if source is None:
                raise BadInput(f"checkpoint {self.name} is incomplete: its log file {name} is missing "
                               f"(looked for {', '.join(str(c) for c in candidates)})")
            if length is not None and source.stat().st_size < length:
                raise BadInput(f"checkpoint {self.name} is damaged: {source} has {source.stat().st_size} bytes, "
                               f"its manifest says {length}")
            found.append(LogFile(name, source, length))
        if not found:
            raise BadInput(f"checkpoint {self.name}: {self.manifest} lists no log files")
        return found

    def _entries(self) -> list[tuple[str, int | None, str]]:
        """(JE file name, length or None, name the hard link has) per manifest line."""
        entries = []
        for number, line in enumerate(self.manifest.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            if self.heritrix == 3:
                name, _, length = line.replace(" ", ",", 1).partition(",")
            else:
                name, length = line, ""
            if not _LOG_FILE.match(name) or (length and not length.isdigit()):
                raise BadInput(f"{self.manifest} line {number} is not a log file entry: {line[:80]!r}")
            entries.append((name, int(length) if length else None, line))
        return entries


def find_checkpoints(state: Path) -> list[Checkpoint]:
    """Every checkpoint of the crawl whose state folder is ``state``, oldest name first."""
    found = []
    for folder in sorted(p for p in state.iterdir() if p.is_dir()) if state.is_dir() else ():
        if (folder / H3_MANIFEST).is_file():
            found.append(Checkpoint(folder.name, folder, folder / H3_MANIFEST, 3))
    h1_root = state.parent / "checkpoints"
    for folder in sorted(p for p in h1_root.iterdir() if p.is_dir()) if h1_root.is_dir() else ():
        if (folder / H1_MANIFEST).is_file():
            found.append(Checkpoint(folder.name, folder, folder / H1_MANIFEST, 1))
    return sorted(found, key=lambda c: c.name)


def checkpoint_at(folder: Path) -> Checkpoint | None:
    """The checkpoint whose own folder is ``folder``, if it is one."""
    if (folder / H3_MANIFEST).is_file():
        return Checkpoint(folder.name, folder, folder / H3_MANIFEST, 3)
    if (folder / H1_MANIFEST).is_file():
        return Checkpoint(folder.name, folder, folder / H1_MANIFEST, 1)
    return None


def resolve(state: Path, name: str) -> Checkpoint:
    """The checkpoint ``name`` (a name, ``latest``, or a checkpoint's folder) of ``state``."""
    direct = checkpoint_at(Path(name)) if Path(name).is_dir() else None
    if direct is not None:
        return direct
    known = find_checkpoints(state)
    if not known:
        raise BadInput(f"{state} has no checkpoints (looked for {state}/cp*/{H3_MANIFEST} and "
                       f"{state.parent}/checkpoints/*/{H1_MANIFEST})")
    if name == LATEST:
        return known[-1]
    for checkpoint in known:
        if checkpoint.name == name:
            return checkpoint
    raise BadInput(f"{state} has no checkpoint {name!r} (it has: {', '.join(c.name for c in known)})")


def assemble(checkpoint: Checkpoint, state: Path) -> Path:
    """A new scratch folder holding the checkpoint's log files under their JE names; the
    caller removes it (:func:`shutil.rmtree`) when done."""
    files = checkpoint.files(state)
    scratch = Path(tempfile.mkdtemp(prefix="pycrawler-checkpoint-"))
    try:
        for log in files:
            target = scratch / log.name
            if log.length is None or log.source.stat().st_size == log.length:
                target.symlink_to(log.source.resolve())
            else:
                _copy_prefix(log.source, target, log.length)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return scratch


def _copy_prefix(source: Path, target: Path, length: int) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        left = length
        while left:
            chunk = src.read(min(COPY_CHUNK, left))
            if not chunk:
                raise BadInput(f"{source} shrank while it was copied")
            dst.write(chunk)
            left -= len(chunk)
