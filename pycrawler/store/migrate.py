"""Copy a JE environment into another JE's format: JE 3.3 (log version 6, Heritrix 1 and the
book), JE 7 (log version 15, Heritrix 3: the user's own ``je-7.*.jar``) or JE 18 (log version 17).

Two JE releases cannot share one JVM (same class names), and JPype starts one JVM per
process, so the copy runs as two child processes, each on its own JE: a *reader* on the
JE chosen for the source (:mod:`pycrawler.store.je_choice`) opens the source read-only and writes every database as a DbDump section to its
standard output; a *writer* on the target JE reads those sections from its standard input
and loads each into a new environment. DbDump text carries every key and value byte for
byte, and each section's header the database's name and whether it has sorted duplicates
(plus, here, whether JE prefixes its keys). The records cross JNI in batches on both sides.

The source is opened read-only, so it is left as it was; the target must not exist yet (or be
an empty folder). The writer loads into ``DST.part``, which takes the target's place only once
the copy is whole (:mod:`pycrawler.whole_folder`), and is removed if the copy fails: a failed
or killed migration leaves nothing that looks like a copy, and the same command run again
starts over. The
source may be a served environment's address (``py4j://HOST:PORT``): the reader then reads it
through the gateway, a page of records per round trip, and needs no JE of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from .. import failpoints, jvm
from ..errors import BadInput, PycrawlerError, SetupError
from ..jvm.jar_folder import SETUP_HINT
from ..jvm.je_releases import JeRelease
from ..whole_folder import building, require_new_folder
from . import gateway_address, je_choice, logfile

TARGETS = {3: "3.3.98", 7: None, 18: "18.3.12"}
"""``--to`` and the known release that writes it (JE 7: none is served by Maven Central; the
user names theirs, e.g. a Heritrix 3 ``lib/je-7.5.11.jar``)."""
KEY_PREFIXING = "keyprefixing"   # a DbDump header field of our own: JE's DbLoad has no such option
BATCH_RECORDS = 10_000


def writer_je(to: int, je7_jar: Path | None) -> JeRelease:
    """The JE that writes the copy for ``--to``."""
    if to == 7:
        if je7_jar is None:
            raise SetupError("--to 7 needs JE 7's jar, which no Maven repository serves: pass --je7-jar PATH "
                             "(a Heritrix 3 lib/ holds je-7.5.11.jar) or put it on PYCRAWLER_CLASSPATH")
        return JeRelease.of_jar(je7_jar) or JeRelease("7", je7_jar)
    release = next((je for je in [jvm.user_je(), *jvm.known_jes()] if je and je.version == TARGETS[to]), None)
    if release is None:
        raise SetupError(f"JE {TARGETS[to]} is not here: {SETUP_HINT}")
    return release


def classpath_for(je: JeRelease) -> str:
    """``PYCRAWLER_CLASSPATH`` for a child on ``je``: the JE first, then the user's entries
    without any JE (a folder holding a JE jar, such as a Heritrix 3 ``lib/``, gives its other
    jars one by one)."""
    kept = [path for path in jvm.user_entries() if JeRelease.of_jar(path) is None
            and not (path.is_dir() and any(map(JeRelease.of_jar, path.glob("*.jar"))))]
    return os.pathsep.join(map(str, [je.jar, *kept]))


def find_je7_jar(given: str | Path | None) -> Path | None:
    """``given``, else a ``je-7.*.jar`` on ``PYCRAWLER_CLASSPATH`` (a jar, or in a folder there)."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise BadInput(f"--je7-jar {given}: no such file")
        return path
    return next((path for path in jvm.user_entries() if (JeRelease.of_jar(path) or JeRelease("0.0", path)).line[0] == 7),
                None)


def migrate(source: str | Path, target: str | Path, to: int, *, je7_jar: str | Path | None = None) -> dict[str, int]:
    """Copy every database of ``source`` (a folder, or a served environment's address) into a
    new environment ``target`` written by JE ``to`` (3 or 7); returns the records copied per
    database."""
    served = gateway_address.is_address(str(source))
    source, target = str(source) if served else Path(source), Path(target)
    if to not in TARGETS:
        raise BadInput(f"--to is 3, 7 or 18, not {to}")
    if not served and (not source.is_dir() or not logfile.jdb_files(source)):
        raise BadInput(f"{source} is not a JE environment (no .jdb files)")
    require_new_folder(target, "migrate")
    writing_je = writer_je(to, find_je7_jar(je7_jar))
    if served:
        gateway_address.read(source)  # no token, no gateway: one line now rather than from the reader
        reading, reader_env = f"reading {source}", None
    else:
        reading_je = je_choice.chosen_for(source)
        reading, reader_env = f"reading {source} with {reading_je}", _child_env(reading_je)
    command = [sys.executable, "-m", __name__]
    with building(target, "migrate") as build:
        reader = subprocess.Popen([*command, "read", str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=reader_env)
        try:  # the writer holds the build's lock too: a run after this one's death waits for it to end
            writer = subprocess.run([*command, "write", str(build.path)], stdin=reader.stdout, capture_output=True,
                                    env=_child_env(writing_je), pass_fds=[build.lock_fd])
        finally:
            reader.stdout.close()
            read_errors = reader.stderr.read().decode("utf-8", "replace")
            reader.wait()
        if reader.returncode != 0 or writer.returncode != 0:
            # A reader cut off by the writer's end failed because the writer did: name the writer.
            blame_reader = reader.returncode != 0 and not (reader.returncode == WRITER_GONE and writer.returncode)
            failed = reader if blame_reader else writer
            message = (read_errors if blame_reader else writer.stderr.decode("utf-8", "replace")).strip()
            if not message:
                message = (f"killed by {signal.Signals(-failed.returncode).name}" if failed.returncode < 0
                           else "no message")
            side = reading if blame_reader else f"writing {target} with {writing_je}"
            raise PycrawlerError(f"migration failed {side}: {message.splitlines()[-1]}")
    counts = {}
    for line in writer.stdout.decode().splitlines():
        name, _, count = line.rpartition("\t")
        counts[name] = int(count)
    return counts


def _child_env(je: JeRelease) -> dict[str, str]:
    return os.environ | {"PYCRAWLER_CLASSPATH": classpath_for(je)}


# -- the two children -----------------------------------------------------------------------------

def _read(source: str) -> None:
    """Every database of ``source`` (a folder or an address) as DbDump sections on standard output."""
    from . import dbdump, open as open_environment

    out = sys.stdout.buffer
    with open_environment(source, read_only=True) as env:
        prefixing = env.stored_key_prefixing()
        for name in env.database_names():
            if not dbdump.header_safe(name):
                raise BadInput(f"{source}: database {name!r} has a name a DbDump header cannot carry")
            db = env.open_database(name)
            with dbdump.DbDumpWriter(out, database=name, dupsort=db.sorted_duplicates) as writer:
                writer.header.extra[KEY_PREFIXING] = str(int(prefixing[name]))
                for chunk in _chunks(db.items()):
                    writer.write_many(chunk)
            db.close()
    out.flush()


def _write(target: Path) -> None:
    """Load the DbDump sections on standard input into a new environment ``target``; prints
    ``NAME<TAB>RECORDS`` per database."""
    from . import Environment, dbdump

    source = sys.stdin.buffer
    with Environment(target, create=True) as env:
        while source.peek(1):
            reader = dbdump.DbDumpReader(source, name="the migration stream")
            header = reader.header
            db = env.open_database(header.database, create=True, sorted_duplicates=header.dupsort,
                                   key_prefixing=header.extra.get(KEY_PREFIXING) == "1")
            count = 0
            for chunk in _chunks(reader):
                keys, values = zip(*chunk)
                with env.begin() as txn:
                    db.put_many(list(keys), list(values), txn=txn)
                failpoints.hit("store.migrate.committed")
                count += len(chunk)
            db.close()
            print(f"{header.database}\t{count}")


def _chunks(records) -> Iterator[list[tuple[bytes, bytes]]]:
    chunk = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= BATCH_RECORDS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


WRITER_GONE = 128 + signal.SIGPIPE
"""The reader's exit when the writer stopped taking the stream (a shell's code for a pipe closed
on its writer): the writer's own failure is the one to report."""


def _main(argv: list[str]) -> int:
    action, path = argv
    try:
        _read(path) if action == "read" else _write(Path(path))
    except BrokenPipeError:  # only the reader writes to a pipe
        return WRITER_GONE
    except PycrawlerError as exc:
        print(f"pycrawler: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
