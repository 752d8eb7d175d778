"""Losses the crash-point harness (tests/crashpoints.py) must catch, each brought back in a copy
of the tree (never in this checkout) and the harness run on the copy::

    python tests/crash_mutations.py                      # every mutation
    python tests/crash_mutations.py drum-retire-before-commit --seed 20240611

Each mutation is a text replacement of the code as it is, in the modes whose steps it breaks; a
replacement that no longer matches fails loudly (the code moved: update the mutation). The
script prints the harness's last lines for each and one line ``mutation=NAME caught=yes|no``;
it exits 0 when the harness failed on every one.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ENGINE, VISITED, MARK_LOG, FLUSH, OUTPUTS = (
    "pycrawler/seen/drum/engine.py", "pycrawler/seen/drum/visited.py", "pycrawler/seen/synchronous.py",
    "pycrawler/crawl/flush.py", "pycrawler/crawl/outputs.py")
RETIRE_AFTER_COMMIT = """        if txn is None:
            disk.rotate()
        else:
            txn.after_commit(disk.retire())
"""
OUTPUTS_FLUSHED = """        self.outputs.flush()
        failpoints.hit("flush.outputs_written")
"""
COMPLETIONS_COMMITTED = """            failpoints.hit("flush.outbox_committed")
"""


@dataclasses.dataclass(frozen=True)
class Mutation:
    modes: tuple[str, ...]
    edits: tuple[tuple[str, str, str], ...]   # (file, text, its replacement)
    loss: str


MUTATIONS = {
    "drum-retire-before-commit": Mutation(
        ("drum",), ((ENGINE, RETIRE_AFTER_COMMIT, "        disk.rotate()\n"),),
        "a merged bucket's files deleted before the transaction that enqueues its new URLs commits"),
    "drum-merge-own-commit": Mutation(
        ("drum",), ((ENGINE, '"duplicate_key_check" in self._wanted, txn=txn)',
                     '"duplicate_key_check" in self._wanted, txn=None)'),
                    (ENGINE, RETIRE_AFTER_COMMIT, "        disk.rotate()\n")),
        "a merge commits in DRUM's repository on its own, before its new URLs are enqueued"),
    "drum-append-removed": Mutation(
        ("drum",), ((VISITED, "        if txn is not None:\n            self.drum.persist()\n", ""),),
        "a bound add leaves its checks in RAM buffers, lost with the pages that found them committed"),
    "outputs-after-commit": Mutation(
        ("exact",), ((FLUSH, OUTPUTS_FLUSHED, ""),
                     (FLUSH, COMPLETIONS_COMMITTED, COMPLETIONS_COMMITTED + OUTPUTS_FLUSHED)),
        "crawl.log and the WARC file written after the completions they record are committed"),
    "bloom-marked-before-commit": Mutation(
        ("bloom",), ((MARK_LOG, "txn.after_commit(functools.partial(self._mark, record, fresh))",
                      "self._mark(record, fresh)"),),
        "the Bloom file marks a flush's new URLs before the transaction that enqueues them commits"),
    "crawl-log-unflushed": Mutation(
        ("exact",), ((OUTPUTS, '            self.log.flush()\n            failpoints.hit("outputs.log_flushed")\n',
                      '            failpoints.hit("outputs.log_flushed")\n'),),
        "a flush leaves crawl.log's lines in its 64 KB buffer when JE commits their pages"),
}


def mutated_copy(mutation: Mutation, folder: Path) -> Path:
    """The package and the tests copied into ``folder`` (``target/`` linked), the mutation applied."""
    for name in ("pycrawler", "tests"):
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "target").symlink_to((ROOT / "target").resolve())
    for file, text, replacement in mutation.edits:
        path = folder / file
        code = path.read_text()
        if code.count(text) != 1:
            raise SystemExit(f"crash_mutations: {file} no longer holds the text to mutate once: update the mutation")
        path.write_text(code.replace(text, replacement))
    return folder


def run(name: str, options: list[str]) -> bool:
    """The harness on a mutated copy; whether it caught the mutation (failed)."""
    mutation = MUTATIONS[name]
    with tempfile.TemporaryDirectory(prefix=f"mutation-{name}-") as scratch:
        copy = mutated_copy(mutation, Path(scratch))
        environment = os.environ | {"PYTHONPATH": f"{copy}{os.pathsep}{copy / 'tests'}"}
        done = subprocess.run([sys.executable, str(copy / "tests" / "crashpoints.py"), "--modes", *mutation.modes,
                               *options], cwd=copy, env=environment, capture_output=True, text=True)
    lines = done.stdout.splitlines()
    print(f"# {name}: {mutation.loss}")
    print("\n".join(line for line in lines if line.startswith(("mode=", "total")) or ": round " in line
                    or ": error: " in line) or done.stderr[-2000:])
    caught = done.returncode == 1 and any(line.startswith("mode=") and line.endswith("FAILED") for line in lines)
    print(f"mutation={name} caught={'yes' if caught else 'no'}", flush=True)
    return caught


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(MUTATIONS)} (default: all)")
    parser.add_argument("--seed", default="20240611")
    parser.add_argument("--pages", default="200", help="the site's cross-linked pages (default 200)")
    args = parser.parse_args(argv)
    if unknown := set(args.names) - MUTATIONS.keys():
        parser.error(f"no such mutation: {', '.join(sorted(unknown))}")
    options = ["--pages", args.pages, "--random-kills", "2", "--max-rounds", "4", "--seed", args.seed]
    return 0 if all([run(name, options) for name in args.names or MUTATIONS]) else 1


if __name__ == "__main__":
    sys.exit(main())
