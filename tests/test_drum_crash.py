"""DRUM survives kill -9 anywhere, mid-merge included.

A writer subprocess feeds check_update batches (keys from a small universe, so later runs
repeat earlier keys) into one DRUM folder, merging often, and logs every key dispatched as
unique and every batch count acknowledged by ``synchronize()``. The test kills it at random
moments, many times over the same folder, then checks the two promises:

- no key is ever dispatched as unique twice, across all runs;
- every key submitted before an acknowledged ``synchronize()`` is in the repository.

Run as a script, this file is the writer (``writer DIR LOG SEED``) or the verifier
(``verify DIR SEEDS...``); the JVM only ever starts in those subprocesses.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
UNIVERSE = 30_000
BATCH = 1_500
SYNC_EVERY = 1
TRIALS = 20
SETTINGS = dict(num_buckets=8, bucket_buffer_elems=200, bucket_bytes=6_000, block_keys=64)


def batch_keys(seed: int, i: int) -> np.ndarray:
    """Batch i of the writer with ``seed``: spread over all 64 bits, so every bucket gets some."""
    ids = np.random.default_rng([seed, i]).integers(0, UNIVERSE, BATCH).astype(np.uint64)
    return ids * np.uint64(0x9E3779B97F4A7C15)


def writer(folder: str, log_path: str, seed: int) -> None:
    from pycrawler.seen.drum import Dispatcher, Drum

    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    class LogUniques(Dispatcher):
        def unique_key_update(self, keys, values, aux):
            os.write(log, "".join(f"U {k}\n" for k in keys.tolist()).encode())

    drum = Drum(folder, LogUniques(), **SETTINGS)
    print("READY", flush=True)
    i = 0
    while True:
        drum.check_update_many(batch_keys(seed, i))
        i += 1
        if i % SYNC_EVERY == 0:
            drum.synchronize()
            os.write(log, f"ACK {seed} {i}\n".encode())


def verify(folder: str, acked: dict[int, int]) -> None:
    from pycrawler.seen.drum import Dispatcher, Drum

    class Missing(Dispatcher):
        keys: list[int] = []

        def unique_key_check(self, keys, aux):
            self.keys.extend(keys.tolist())

    missing = Missing()
    with Drum(folder, missing, **SETTINGS) as drum:
        for seed, batches in acked.items():
            for i in range(batches):
                drum.check_many(batch_keys(seed, i))
    print(json.dumps({"missing": len(missing.keys)}))


def _spawn(*args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYCRAWLER_HEAP="256m")
    return subprocess.Popen([sys.executable, __file__, *args], cwd=ROOT, env=env, text=True, **kwargs)


def test_kill_anywhere_loses_nothing_acknowledged_and_repeats_no_unique(tmp_path):
    folder, log = tmp_path / "drum", tmp_path / "dispatch.log"
    rnd = random.Random(1234)
    kills_mid_run = 0
    for seed in range(TRIALS):
        proc = _spawn("writer", str(folder), str(log), str(seed), stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == "READY", "the writer did not start"
        time.sleep(rnd.uniform(0.1, 0.8))
        kills_mid_run += proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert kills_mid_run == TRIALS

    uniques, acked = [], {}
    for line in log.read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["U"] and len(parts) == 2:
            uniques.append(int(parts[1]))
        elif parts[:1] == ["ACK"] and len(parts) == 3:
            acked[int(parts[1])] = max(acked.get(int(parts[1]), 0), int(parts[2]))
    assert len(uniques) > UNIVERSE // 2, "the writers barely ran"
    assert len(uniques) == len(set(uniques)), "a key was dispatched as unique twice"
    assert len(acked) >= TRIALS // 4, "too few runs reached a synchronize()"

    proc = _spawn("verify", str(folder), json.dumps(acked), stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert json.loads(out.splitlines()[-1]) == {"missing": 0}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1] == "writer":
        writer(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        verify(sys.argv[2], {int(k): v for k, v in json.loads(sys.argv[3]).items()})
