"""``pycrawler store ls|dump|load``: inspect, export and import JE databases.

Each takes a folder or a served environment's address (``py4j://HOST:PORT``, see
``pycrawler serve``). ``ls`` and ``dump`` open the environment read-only and never change a byte of it; ``load``
opens it for writing (creating it when absent) and writes in batches, one transaction and
one JNI crossing per batch: a killed load keeps the batches it committed, and the same load
run again writes every record again (a record put twice is held once), ending where an
uninterrupted load ends. Dumps are JSON lines (``key``/``value`` decoded by bindings, plus
the raw bytes as ``key_hex``/``value_hex``; bytes that cannot be decoded have
``key_error``/``value_error`` saying why instead of a value) or JE's DbDump text format, which JE's own
``DbLoad`` (and C Berkeley DB's ``db_load``) read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator
from itertools import islice

from .. import failpoints
from ..atomic_write import replacing
from ..errors import BadInput, PycrawlerError
from ..progress import add_option as add_progress_option
from ..progress import meter
from .jsonl import json_line
from .plain import first_line

FORMATS = ("jsonl", "dbdump")
AUTO = "auto"
LOAD_BATCH_RECORDS = 10_000
LOAD_BATCH_BYTES = 8 << 20
DUMP_CHUNK_RECORDS = 4096


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("store", help="inspect, dump and load JE environments",
                       description=first_line(__doc__))
    actions = p.add_subparsers(dest="store_command", required=True, metavar="ACTION")

    ls = actions.add_parser("ls", help="databases, record counts and JE log version (read-only)")
    ls.add_argument("dir", metavar="DIR", help="the JE environment (a folder of .jdb files, or a served one's "
                                               "py4j://HOST:PORT)")
    ls.set_defaults(run=run_ls)

    dump = actions.add_parser("dump", help="write one database's records as JSON lines or DbDump text (read-only)")
    dump.add_argument("dir", metavar="DIR", help="the JE environment")
    dump.add_argument("--db", required=True, metavar="NAME", help="the database to dump")
    dump.add_argument("--format", choices=FORMATS, default="jsonl",
                      help="jsonl (default): one JSON object per record; dbdump: JE DbDump's text format")
    dump.add_argument("--key", metavar="BINDING", default=AUTO,
                      help="how jsonl decodes keys: a binding name (bytes, string, long, int, ...) or "
                           "auto (default: through the class catalog when the store has one and the "
                           "bytes are serial-bound; else 4 or 8 bytes that are not text as an integer; "
                           "else UTF-8 text)")
    dump.add_argument("--value", metavar="BINDING", default=AUTO, help="how jsonl decodes values (as --key)")
    dump.add_argument("--catalog", metavar="DB",
                      help="the class catalog database that auto decodes serial-bound bytes through (default: "
                           "the store's, found by its name or its content)")
    dump.add_argument("-p", "--printable", action="store_true",
                      help="dbdump in the 'print' format (printable bytes as themselves) instead of hex")
    dump.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    add_progress_option(dump)
    dump.set_defaults(run=run_dump)

    load = actions.add_parser("load", help="add records from JSON lines or a DbDump file (creates what is absent)")
    load.add_argument("dir", metavar="DIR", help="the JE environment (created when absent)")
    load.add_argument("--db", metavar="NAME",
                      help="the database to load into (created when absent); a dbdump file may name it instead")
    load.add_argument("file", metavar="FILE", help="the records: a file, or - for standard input")
    load.add_argument("--format", choices=FORMATS, default=None,
                      help="jsonl (key_hex/value_hex per line) or dbdump; default: from the first line")
    add_progress_option(load)
    load.set_defaults(run=run_load)

    migrate = actions.add_parser("migrate", help="copy an environment into JE 3.3's format (Heritrix 1, the book), "
                                                 "JE 7's (Heritrix 3) or JE 18's, every database byte for byte")
    migrate.add_argument("source", metavar="SRC", help="the JE environment to copy (opened read-only)")
    migrate.add_argument("target", metavar="DST", help="the new environment (must not exist, or be empty)")
    migrate.add_argument("--to", type=int, choices=(3, 7, 18), required=True,
                         help="the JE format to write: 3 (JE 3.3, Heritrix 1), 7 (your JE 7 jar, Heritrix 3) or 18")
    migrate.add_argument("--je7-jar", metavar="JAR",
                         help="JE 7's jar (default: a je-7.*.jar on PYCRAWLER_CLASSPATH); a Heritrix 3 lib/ has one")
    migrate.set_defaults(run=run_migrate)


# -- ls ---------------------------------------------------------------------------------------
def run_ls(args: argparse.Namespace) -> int:
    from .. import store

    with store.open(args.dir, read_only=True) as env:
        names = env.database_names()
        counts = {}
        for name in names:
            with env.open_database(name) as db:
                counts[name] = db.count()
        print(f"{args.dir}: JE log version {env.log_version}, {len(names)} database{'s' * (len(names) != 1)}, "
              f"read with JE {env.je_version()}")
        width = max([len("records")] + [len(str(n)) for n in counts.values()])
        print(f"{'records':>{width}}  database")
        for name in names:
            print(f"{counts[name]:>{width}}  {name}")
    return 0


# -- dump -------------------------------------------------------------------------------------
def _chunks(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


@contextlib.contextmanager
def _output(path: str | None):
    """Standard output, or ``path`` replaced only when complete (:func:`replacing`), so a
    failed dump never leaves a file that looks whole."""
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with replacing(path) as out:
        yield out


def _serial_decoder(env, catalog: str | None):
    """A decoder of ``SerialBinding`` bytes through the class catalog in the database
    ``catalog``, or the store's own (found by its name or its content); without one, a
    decoder of the values that need no catalog (strings, nulls), which says why it cannot
    decode the others."""
    from ..store.catalog import NoCatalog, catalog_decoder
    from ..store.serial.decoder import SerialDecoder

    return catalog_decoder(env, catalog) or SerialDecoder(NoCatalog())


class _Undecodable(Exception):
    """A key or value a JSON-lines dump shows by its bytes only; the message says why."""


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Undecodable(f"not UTF-8 text ({_utf8_fault(data, exc.start)} at byte {exc.start})") from None


_SECOND_BYTE = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _utf8_fault(data: bytes, at: int) -> str:
    """Why UTF-8 text stops at byte ``at``, in the words of CPython's decoder: the dump reads
    the same wherever it runs (GraalPy's decoder words it as Java's does, "malformed input")."""
    lead = data[at]
    width = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    if not width:
        return "invalid start byte"
    for offset, byte in enumerate(data[at + 1:at + width], 1):
        low, high = _SECOND_BYTE.get(lead, (0x80, 0xBF)) if offset == 1 else (0x80, 0xBF)
        if not low <= byte <= high:
            return "invalid continuation byte"
    return "unexpected end of data"


def _decoder(name: str, serial_decoder):
    """bytes -> JSON-ready value for the binding ``name`` (``auto``: serial-bound, or a whole
    Java serialization stream; else 4 or 8 bytes that are not text as an integer; else UTF-8
    text); raises _Undecodable, with the reason, for bytes it cannot show as a value."""
    from ..store.bindings import fixed_width_integer
    from ..store.serial.decoder import decode_stream
    from ..store.serial.stream import STREAM_HEADER, CatalogMissing

    if name != AUTO:
        from ..store.bindings import get_binding

        decode = get_binding(name).decode

        def chosen(data: bytes):
            value = decode(data)
            return _text(value) if isinstance(value, bytes) else value
        return chosen

    def auto(data: bytes):
        try:
            if data[:4] == STREAM_HEADER:  # a whole ObjectOutputStream: its classes inline
                return decode_stream(data)
            return serial_decoder.decode(data)
        except CatalogMissing as exc:
            raise _Undecodable(str(exc)) from None
        except BadInput as not_serial:
            number = fixed_width_integer(data)
            if number is not None:
                return number
            try:
                return _text(data)
            except _Undecodable as exc:
                raise _Undecodable(f"{exc}, nor serial-bound ({not_serial})") from None
    return auto


def _decode_into(record: dict, field: str, decode, data: bytes, where: str) -> str | None:
    """record[field] = the decoded bytes; or, when they cannot be shown as a value,
    record[field + "_error"] = why (returned). A binding the user chose that does not fit
    the bytes is BadInput."""
    try:
        record[field] = decode(data)
    except _Undecodable as exc:
        record[f"{field}_error"] = str(exc)
        return str(exc)
    except PycrawlerError as exc:
        shown = f"0x{data[:32].hex()}{'...' * (len(data) > 32)}" if data else "(empty)"
        raise BadInput(f"{where}: {field} {shown}: {exc}") from None
    return None


def run_dump(args: argparse.Namespace) -> int:
    from .. import store

    if args.format == "dbdump" and (args.key != AUTO or args.value != AUTO or args.catalog):
        raise BadInput("--key, --value and --catalog choose how jsonl decodes records; a dbdump holds the raw bytes")
    if args.format == "jsonl" and args.printable:
        raise BadInput("--printable chooses dbdump's print format; it does not apply to jsonl")
    with store.open(args.dir, read_only=True) as env:
        db = env.open_database(args.db)
        with meter(f"dump {args.db}", total=db.count, unit="records", enabled=args.progress) as bar:
            if args.format == "dbdump":
                _dump_dbdump(db, args, bar)
            else:
                _dump_jsonl(env, db, args, bar)
    return 0


def _dump_dbdump(db, args: argparse.Namespace, bar) -> None:
    from ..store import dbdump

    dupsort = db.sorted_duplicates
    with _output(args.output) as out, dbdump.DbDumpWriter(
            out, database=args.db, format="print" if args.printable else "bytevalue", dupsort=dupsort) as writer:
        for chunk in _chunks(db.items(), DUMP_CHUNK_RECORDS):
            writer.write_many(chunk)
            bar.update(len(chunk))


def _dump_jsonl(env, db, args: argparse.Namespace, bar) -> None:
    serial_decoder = _serial_decoder(env, args.catalog) if AUTO in (args.key, args.value) or args.catalog else None
    decode_key = _decoder(args.key, serial_decoder)
    decode_value = _decoder(args.value, serial_decoder)
    where = f"{args.dir} database {args.db!r}"
    noted = False
    with _output(args.output) as out:
        for chunk in _chunks(db.items(), DUMP_CHUNK_RECORDS):
            lines = []
            for key, value in chunk:
                record: dict = {}
                errors = (_decode_into(record, "key", decode_key, key, where),
                          _decode_into(record, "value", decode_value, value, where))
                record.update(key_hex=key.hex(), value_hex=value.hex())
                lines.append(json_line(record))
                if not noted and any(errors):
                    noted = True
                    bar.write(f"pycrawler: note: {where}: a {'key' if errors[0] else 'value'} cannot be decoded "
                              f"({errors[0] or errors[1]}); such records have key_error/value_error saying why "
                              "instead of key/value, and their bytes in key_hex/value_hex", file=sys.stderr)
            out.write("".join(lines))
            bar.update(len(chunk))


# -- load -------------------------------------------------------------------------------------
@contextlib.contextmanager
def _input(path: str):
    if path == "-":
        yield sys.stdin.buffer, "<stdin>"
        return
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}") from None
    with stream:
        yield stream, path


def _sniff_format(stream) -> str:
    """dbdump when the input starts like a DbDump header, else jsonl."""
    head = stream.peek(16)[:16] if hasattr(stream, "peek") else b""
    return "dbdump" if head.lstrip().upper().startswith(b"VERSION=") else "jsonl"


def _jsonl_records(stream, name: str) -> Iterator[tuple[bytes, bytes]]:
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            yield bytes.fromhex(record["key_hex"]), bytes.fromhex(record["value_hex"])
        except json.JSONDecodeError as exc:
            raise BadInput(f"{name} line {number}: not JSON ({exc.msg})") from None
        except (KeyError, TypeError):
            raise BadInput(f"{name} line {number}: a record needs key_hex and value_hex strings") from None
        except ValueError:
            raise BadInput(f"{name} line {number}: key_hex or value_hex is not hex") from None


def _batches(records: Iterable[tuple[bytes, bytes]]) -> Iterator[tuple[list[bytes], list[bytes]]]:
    """Records grouped into batches of at most LOAD_BATCH_RECORDS records or about
    LOAD_BATCH_BYTES bytes, so memory stays bounded while each batch crosses JNI once."""
    keys: list[bytes] = []
    values: list[bytes] = []
    size = 0
    for key, value in records:
        keys.append(key)
        values.append(value)
        size += len(key) + len(value)
        if len(keys) >= LOAD_BATCH_RECORDS or size >= LOAD_BATCH_BYTES:
            yield keys, values
            keys, values, size = [], [], 0
    if keys:
        yield keys, values


def run_load(args: argparse.Namespace) -> int:
    from .. import store
    from ..store import dbdump

    with _input(args.file) as (stream, name):
        fmt = args.format or _sniff_format(stream)
        database, dupsort = args.db, False
        if fmt == "dbdump":
            reader = dbdump.DbDumpReader(stream, name=name)
            database, dupsort = args.db or reader.header.database, reader.header.dupsort
            records = iter(reader)
        else:
            records = _jsonl_records(stream, name)
        if not database:
            raise BadInput("name the database with --db (the input does not name one)")
        loaded = 0
        with store.open(args.dir, create=True) as env, \
                meter(f"load {database}", unit="records", enabled=args.progress) as bar:
            db = env.open_database(database, create=True, sorted_duplicates=dupsort or None)
            for keys, values in _batches(records):
                with env.begin() as txn:
                    db.put_many(keys, values, txn=txn)
                failpoints.hit("store.load.committed")
                loaded += len(keys)
                bar.update(len(keys))
    print(f"loaded {loaded} records into {args.dir} database {database!r}")
    return 0


# -- migrate ----------------------------------------------------------------------------------
def run_migrate(args: argparse.Namespace) -> int:
    from ..store.migrate import migrate

    counts = migrate(args.source, args.target, args.to, je7_jar=args.je7_jar)
    for name, count in counts.items():
        print(f"{count:>12,}  {name}")
    print(f"{sum(counts.values()):>12,}  records in {len(counts)} databases, written by JE {args.to} into {args.target}")
    return 0
