"""Heritrix crawl state for tests, written the way Heritrix 1.14 writes it (by the Java test
program HeritrixStateTool, through SerialBinding and a StoredClassCatalog), plus stores in
Heritrix 3's shape (values that are not serial-bound) written from Python in a process that loads
JE 18 (log version 17: a JE 4 or later log, as Heritrix 3's are)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_je18_jar, with_je
from java_programs import ROOT, compile_java, java_classpath, run_java
from pycrawler.heritrix import canonicalize, create_key

QUEUES = ("example.com", "archive.org:8080", "dns:", "b\u00fccher.example")


@dataclasses.dataclass(frozen=True)
class Queued:
    queue: str
    uri: str
    via: str | None
    path_from_seed: str
    directive: int
    cost: int
    ordinal: int
    seed: bool


def crawl(n: int = 40) -> list[Queued]:
    """n queued URLs spread over the queues, with varied directives, costs and ordinals
    (some ordinals end in a zero byte, like 256, whose keys end in 00 as a cap key does)."""
    urls = []
    for i in range(n):
        queue = QUEUES[i % len(QUEUES)]
        host = queue.split(":")[0] or "dns"
        urls.append(Queued(queue, f"http://WWW.{host}/Page{i}?jsessionid={'A' * 32}" if i % 5 == 0
                           else f"http://{host}/p/{i}", None if i < 4 else f"http://{host}/",
                           "" if i < 4 else "L" * (i % 4) + "E", (0, 1, 3, 3)[i % 4], (i * 7) % 5 + 1,
                           256 * i if i % 3 == 0 else i, i < 4))
    return urls


def queue_order(urls: list[Queued]) -> list[Queued]:
    """The order of Heritrix's pending keys: queue (UTF-8 bytes), directive, cost, ordinal."""
    return sorted(urls, key=lambda u: (u.queue.encode(), u.directive, u.cost, u.ordinal))


def signed(key: int) -> int:
    return key - (1 << 64) if key >= 1 << 63 else key


def seen_keys(urls: list[str]) -> list[int]:
    return [create_key(canonicalize(u)) for u in urls]


def write_h1(path: Path, urls: list[Queued], seen: list[str], *, early_classes: Path | None = None,
             je3: bool = False) -> None:
    """Heritrix 1.14 crawl state at ``path``: pending holds ``urls``, alreadySeenUrl the keys of ``seen``.
    With ``early_classes`` (from :func:`early_crawl_uri`), its ``CrawlURI`` writes the values; ``je3``:
    written by JE 3.3, as Heritrix 1 did, whatever JE this test run loads."""
    lines = [f"P\t{u.queue}\t{u.uri}\t{u.via or '-'}\t{u.path_from_seed}\t{u.directive}\t{u.cost}\t{u.ordinal}\t"
             f"{str(u.seed).lower()}\t{u.ordinal % 3}\n" for u in urls]
    lines += [f"S\t{signed(k)}\n" for k in seen_keys(seen)]
    path.mkdir(parents=True, exist_ok=True)
    run_java("HeritrixStateTool", "write", path, stdin="".join(lines), first=(early_classes,) if early_classes else (),
             je3=je3)


STAND_IN = ROOT / "bridge" / "src" / "test" / "java" / "org" / "archive" / "crawler" / "datamodel" / "CrawlURI.java"
_WRITE_OBJECT = re.compile(r"\n    private void writeObject\(.*?\n    }\n", re.DOTALL)


def early_crawl_uri(into: Path) -> Path:
    """Classes for :func:`write_h1`: the ``CrawlURI`` stand-in without its ``writeObject``, as
    earlier Heritrix 1 releases had it (a value then holds ``CandidateURI``'s data and nothing
    after ``CrawlURI``'s fields), compiled into ``into``. It shares the stand-in's name, so it
    is made here from the stand-in's source rather than built with the test classes."""
    source, removed = _WRITE_OBJECT.subn("\n", STAND_IN.read_text(encoding="utf-8"))
    assert removed == 1, "the CrawlURI stand-in no longer has the writeObject this removes"
    package = into / "src" / STAND_IN.relative_to(STAND_IN.parents[4]).parent
    package.mkdir(parents=True)
    (package / STAND_IN.name).write_text(source, encoding="utf-8")
    return compile_java(into / "src", into / "classes")


class Holder:
    """A process holding a JE environment open for writing, as a running crawler does."""

    def __init__(self, path: Path):
        self.process = subprocess.Popen(["java", "-cp", java_classpath(), "HeritrixStateTool", "hold", str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "holding"

    @property
    def pid(self) -> int:
        return self.process.pid

    def release(self) -> None:
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.release()


# -- Heritrix 3: stores written and read in processes that load JE 18 -----------------------------

def h3_env() -> dict[str, str]:
    """The environment of a process that loads JE 18, which writes Heritrix 3's kind of log."""
    return with_je(require_je18_jar())


def h3_python(script: str, stdin: str = "") -> str:
    """Run a Python script in a process that loads JE 18; its standard output."""
    done = subprocess.run([sys.executable, "-c", script], input=stdin, capture_output=True, text=True,
                          encoding="utf-8", env=h3_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def h3_key(queue: str, directive: int, precedence: int, ordinal: int) -> bytes:
    """A pending key as ``BdbMultipleWorkQueues.calculateInsertKey`` builds it."""
    return queue.encode() + b"\x00" + bytes((directive, precedence)) + ordinal.to_bytes(6, "big")


_WRITE_H3 = """
import json, sys
from pycrawler.store import Environment
spec = json.load(sys.stdin)
with Environment(spec["path"], create=True, transactional=False) as env:
    if spec["pending"]:
        env.open_database("pending", create=True).put_many([bytes.fromhex(k) for k, _ in spec["pending"]], [bytes.fromhex(v) for _, v in spec["pending"]])
    seen = env.open_database("alreadySeenUrl", create=True)
    seen.put_many([(k ^ (1 << 63)).to_bytes(8, "big") for k in spec["seen"]], [b""] * len(spec["seen"]))
"""


def write_h3(path: Path, pending: dict[bytes, str | bytes], seen: list[int]) -> None:
    """A JE 18 store in Heritrix 3's layout at ``path``: ``pending`` holds the given keys (and a
    cap record per queue; no database when there is none), each value the URL's bytes where Heritrix keeps a Kryo CrawlURI
    (or the bytes given);
    ``alreadySeenUrl`` the createKeys ``seen``. Written by a process that loads JE 18."""
    caps = {key[:key.index(0) + 1]: "" for key in pending}
    records = [(key.hex(), (value if isinstance(value, bytes) else value.encode()).hex())
               for key, value in {**caps, **pending}.items()]
    path.mkdir(parents=True, exist_ok=True)
    h3_python(_WRITE_H3, json.dumps({"path": str(path), "pending": records, "seen": seen}))
