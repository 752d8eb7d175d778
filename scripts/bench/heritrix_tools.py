#!/usr/bin/env python3
"""Benchmark ``pycrawler heritrix export``, ``import`` and ``journal`` on a large Heritrix 3 state.

    .venv/bin/python scripts/bench/heritrix_tools.py --seen 100000000 --pending 10000000 --queues 100000 --compare REF

Generates, under ``--out`` (default ``bench-output/heritrix-tools``, git-ignored), a JE store in
Heritrix 3's layout and the frontier journal that goes with it:

- ``--seen`` URLs were scheduled, one in ``seen / pending`` of them is still pending (its key in
  ``pending``: its host's queue, directive 3, precedence 1, its schedule number as ordinal;
  the value is the URL's bytes where Heritrix keeps a Kryo CrawlURI), the others finished;
  every URL's ``createKey`` is in ``alreadySeenUrl``;
- the journal has an ``F+`` line per URL in schedule order and an ``Fs`` line per finished
  one (written ``--lag`` lines after its ``F+``, as fetches finish behind the schedule), in
  two parts: one rotated at a checkpoint, then the current file;
- URLs: ``http://hostQ.example/dirD/pageI.html`` over ``--queues`` hosts, each with pending URLs.

The store is written by ``--je-jar`` (default JE 18.3.12 from target/je/, whose log is as new as
Heritrix 3's JE 7.5).

Then it runs the three commands as a user does, each in its own process, one after another:

1. ``pycrawler heritrix export STATE --recover-log logs/ --pending P.jsonl --seen S.raw``
2. ``pycrawler heritrix import STATE --recover-log logs/ --into DIR`` (DRUM seen table)
3. ``pycrawler heritrix journal DIR --out J.gz`` (the imported state written back as a journal)

and checks what each wrote (every pending URL and seen key, in the counts generated). Per
command: wall seconds, CPU seconds, peak RSS (the command's process: JPype runs the JVM in
it) and the most its temporary files held at once. With ``--compare REF`` the same three commands then run from a ``git worktree`` of REF
(the code before a change), on the same files, in the same run. The import's state is
measured too: its bytes (the JE log, which holds the frontier and DRUM's repository) per
pending URL, as Heritrix's "0.7 KB a queued URI" counts, and per URL known. The last lines are
``key=value`` figures, one per code under test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BATCH = 1 << 20


def host(i: int, queues: int) -> int:
    """The host of URL ``i``: spread by a multiplicative hash, so that the pending URLs (every
    ``seen / pending``-th) fall on every host too."""
    return (i * 2654435761 >> 16) % queues


def url(i: int, queues: int) -> str:
    return f"http://host{host(i, queues)}.example/dir{i // 7919 % 100}/page{i}.html"


def generate(out: Path, seen: int, pending: int, queues: int, lag: int) -> None:
    import numpy as np

    from pycrawler.heritrix.journal import ADDED, SUCCESS, journal_line, write_journal
    from pycrawler.heritrix.migrate import heritrix_keys
    from pycrawler.heritrix.state import long_binding
    from pycrawler.progress import meter
    from pycrawler.store import Environment
    from pycrawler.store.packing import pack, pack_fixed

    every = max(seen // pending, 1)
    is_pending = lambda i: i % every == 0 and i // every < pending  # noqa: E731
    with Environment(out / "state", create=True, transactional=False) as env:
        queued = env.open_database("pending", create=True)
        queued.put_many(pack([f"host{q}.example".encode() + b"\x00" for q in range(queues)]),
                        pack([b""] * queues))
        seen_db = env.open_database("alreadySeenUrl", create=True)
        with meter("generate state", total=seen, unit="URLs") as bar:
            for start in range(0, seen, BATCH):
                numbers = range(start, min(start + BATCH, seen))
                urls = [url(i, queues) for i in numbers]
                keys = np.sort(heritrix_keys(urls) ^ np.uint64(1 << 63)) ^ np.uint64(1 << 63)  # LongBinding order
                seen_db.put_many(pack_fixed(long_binding(keys)), pack([b""] * len(keys)))
                mine = [(i, u) for i, u in zip(numbers, urls) if is_pending(i)]
                queued.put_many(pack([f"host{host(i, queues)}.example".encode() + b"\x00\x03\x01"
                                      + (i + 1).to_bytes(6, "big") for i, _ in mine]),
                                pack([u.encode() for _, u in mine]))
                bar.update(len(numbers))
    logs = out / "logs"
    logs.mkdir()

    def lines(numbers: range):
        for i in numbers:
            yield journal_line(ADDED, url(i, queues), "L", "http://seed.example/")
            done = i - lag
            if done >= 0 and not is_pending(done):
                yield journal_line(SUCCESS, url(done, queues), "L", "http://seed.example/")

    def tail():
        yield from lines(range(seen // 2, seen))
        for done in range(max(seen - lag, 0), seen):
            if not is_pending(done):
                yield journal_line(SUCCESS, url(done, queues), "L", "http://seed.example/")

    with open(logs / "frontier.recover.gz.cp00001-20201122100000", "wb") as part:
        write_journal(part, lines(range(seen // 2)))
    with open(logs / "frontier.recover.gz", "wb") as current:
        write_journal(current, tail())


def spilled_bytes(pid: int, tmp: Path) -> int:
    """Bytes in the unlinked files the process ``pid`` holds open directly in ``tmp`` (its
    ``TMPDIR``): its spill files. Not every unlinked file it holds: under the code before the
    spill files, which makes none, that count was 0.5 GB in a 10M-key export."""
    total = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            link = f"/proc/{pid}/fd/{fd}"
            try:
                target = os.readlink(link)
                if target.endswith(" (deleted)") and os.path.dirname(target) == str(tmp):
                    total += os.stat(link).st_size
            except OSError:   # closed in between
                pass
    except OSError:   # the process has ended
        pass
    return total


def timed(name: str, argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run one command to its end: wall seconds, CPU seconds (user + system) and peak RSS in MB
    of its process (from wait4), and the most bytes its temporary files held at once (read
    from /proc twice a second)."""
    started, spill = time.perf_counter(), 0
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as child:
        output: list[bytes] = []
        reader = threading.Thread(target=lambda: output.append(child.stdout.read()))
        reader.start()
        while reader.is_alive():
            spill = max(spill, spilled_bytes(child.pid, Path(env["TMPDIR"])))
            reader.join(0.5)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    text = b"".join(output).decode("utf-8", "replace")
    wall = time.perf_counter() - started
    if child.returncode != 0:
        sys.exit(f"{name} exited {child.returncode}: {text.strip()[-2000:]}")
    print(f"  {name}: {wall:.1f} s, {usage.ru_maxrss / 1024:.0f} MB; {text.strip()[-400:]}", file=sys.stderr)
    return {"s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "temp_mb": spill / 1e6}


def baseline_checkout(ref: str, out: Path) -> Path:
    """A git worktree of ``ref`` (its jars: this checkout's target/, the Java side unchanged)."""
    tree = out / f"code-{ref}"
    if not tree.is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True,
                       capture_output=True)
        (tree / "target").symlink_to(ROOT / "target")
    return tree


def measure(code: Path, source: Path, work: Path, seen: int, pending: int) -> dict[str, float]:
    """The three commands from the checkout ``code`` on ``source``; their figures, checked."""
    import gzip
    import json

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tmp = work / "tmp"   # the commands' TMPDIR, where their spill files are counted
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(code), "TMPDIR": str(tmp.resolve())}
    env.pop("PYCRAWLER_CLASSPATH", None)   # each command picks the JE that reads the state by itself
    python = [sys.executable, "-m", "pycrawler", "heritrix"]
    state, logs, into = source / "state", source / "logs", work / "imported"
    figures = {}
    for name, argv in (
            ("export", [*python, "export", state, "--recover-log", logs, "--pending", work / "pending.jsonl",
                        "--seen", work / "seen.raw"]),
            ("import", [*python, "import", state, "--recover-log", logs, "--into", into]),
            ("journal", [*python, "journal", into, "--out", work / "journal.gz"])):
        done = timed(name, [str(a) for a in argv], env)
        figures.update({f"{name}_{k}": v for k, v in done.items()})
    with open(work / "pending.jsonl", "rb") as rows:
        exported = sum(1 for _ in rows)
    manifest = json.loads((into / "heritrix-import.json").read_text())
    with gzip.open(work / "journal.gz", "rb") as journal:
        added = sum(1 for line in journal if line.startswith(b"F+ "))
    found = {"exported": exported, "seen_bytes": (work / "seen.raw").stat().st_size,
             "placed": manifest["recover_log"]["placed"], "imported": manifest["frontier"]["urls"],
             "seen_keys": manifest["seen"]["keys"], "journal_added": added}
    wanted = {"exported": pending, "seen_bytes": 8 * seen, "placed": pending, "imported": pending,
              "seen_keys": seen, "journal_added": pending}
    if found != wanted:
        sys.exit(f"{code}: the commands wrote {found}, not {wanted}")
    stored = sum(p.stat().st_size for p in into.rglob("*") if p.is_file())   # JE log (frontier, DRUM), the rest
    figures.update(state_mb=stored / 1e6, state_bytes_per_pending=stored / pending,
                   state_bytes_per_uri=stored / (seen + pending))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seen", type=int, default=10_000_000, help="URLs in alreadySeenUrl (all scheduled)")
    parser.add_argument("--pending", type=int, default=1_000_000, help="of them still pending")
    parser.add_argument("--queues", type=int, default=10_000, help="hosts (Heritrix queues)")
    parser.add_argument("--lag", type=int, default=10_000, help="journal lines between a URL's F+ and its Fs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output" / "heritrix-tools")
    parser.add_argument("--je-jar", default=str(ROOT / "target" / "je" / "je-18.3.12.jar"))
    parser.add_argument("--keep", action="store_true", help="reuse a state and journal generated before")
    parser.add_argument("--generate-only", action="store_true", help="generate the state and journal, then stop")
    parser.add_argument("--compare", metavar="REF", help="then run the commands of this git ref (the baseline)")
    args = parser.parse_args()

    source = args.out / f"source-{args.seen}-{args.pending}-{args.queues}"
    if args.generate_only:
        os.environ["PYCRAWLER_CLASSPATH"] = args.je_jar
        shutil.rmtree(source, ignore_errors=True)
        source.mkdir(parents=True)
        started = time.perf_counter()
        generate(source, args.seen, args.pending, args.queues, args.lag)
        print(f"generated {args.seen:,} seen, {args.pending:,} pending in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        return
    if not (args.keep and (source / "logs" / "frontier.recover.gz").is_file()):
        # In a process of its own: a child forked from this one would report this one's peak
        # RSS as its own (Linux carries the high-water mark over the exec).
        subprocess.run([sys.executable, __file__, *sys.argv[1:], "--generate-only"], check=True)
    journal_mb = sum(p.stat().st_size for p in (source / "logs").iterdir()) / 1e6
    state_mb = sum(p.stat().st_size for p in (source / "state").glob("*.jdb")) / 1e6
    codes = [("this", ROOT)]
    if args.compare:
        codes.append((args.compare, baseline_checkout(args.compare, args.out)))
    for label, code in codes:
        print(f"{label}:", file=sys.stderr)
        figures = measure(code, source, args.out / f"work-{label}", args.seen, args.pending)
        print(f"code={label} seen={args.seen} pending={args.pending} queues={args.queues} "
              f"heritrix_state_mb={state_mb:.0f} journal_mb={journal_mb:.0f} "
              + " ".join(f"{k}={v:.1f}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
