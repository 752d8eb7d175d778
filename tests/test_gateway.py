"""``pycrawler serve`` and ``pycrawler.store.open("py4j://...")``: one process owns a JE
environment, others use it through the store layer's API.

Servers and clients are real processes (``python -m pycrawler serve``, ``python -c``); this
test process is a client too (the py4j client needs no JVM). Each server is stopped by its
test. Tokens go to a private runtime folder per test (``PYCRAWLER_RUNTIME_DIR``).
"""

from __future__ import annotations

import hashlib
import http.server
import os
import selectors
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from pycrawler import store
from pycrawler.errors import PycrawlerError
from pycrawler.store import gateway_address
from pycrawler.store.gateway_client import GatewayGone
from pycrawler.store.mapping import SortedMap

from gateways import IDLE_TIMEOUT, Server

@pytest.fixture
def server(tmp_path, runtime):
    served = Server(tmp_path / "env")
    yield served
    served.stop()


def client(code: str) -> subprocess.Popen:
    """A client process running ``code`` (its standard output is a pipe)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def pycrawler(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def assert_one_line_error(done: subprocess.CompletedProcess, says: str) -> None:
    assert done.returncode != 0, done.stdout
    assert done.stderr.startswith("pycrawler: ") and done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr


# -- the API ------------------------------------------------------------------------------------
def test_a_served_environment_has_the_store_api(server):
    with store.open(server.address) as env:
        assert env.transactional and env.database_names() == []
        db = env.open_database("urls", create=True)
        keys = [b"k%05d" % i for i in range(20_000)]
        assert db.put_many(keys, [k[::-1] for k in keys]) == len(keys)
        assert db.get_many([b"k00007", b"absent", b"k19999"]) == [b"70000k", None, b"99991k"]
        assert list(db.contains_many([b"k00001", b"nope"])) == [True, False]
        assert list(db.put_if_absent_many([b"k00001", b"new"], [b"x", b"y"])) == [False, True]
        assert list(db.items(prefix=b"k0000")) == [(k, k[::-1]) for k in keys[:10]]
        assert list(db.keys(b"k19998", reverse=True))[:2] == [b"new", b"k19999"]
        assert sum(1 for _ in db.items()) == len(db) == 20_001
        assert list(db.delete_many([b"new", b"new"])) == [True, False]
        assert db.delete_range(b"k10000") == 10_000 and len(db) == 10_000
        with env.begin() as txn:
            db.put(b"in-txn", b"1", txn=txn)
            assert db.get(b"in-txn", txn=txn) == b"1"
        txn = env.begin()
        db.put(b"aborted", b"1", txn=txn)
        txn.abort()
        assert db.get(b"in-txn") == b"1" and db.get(b"aborted") is None
        names = SortedMap(env.open_database("names", create=True), "string", "long")
        names.update({"b": 2, "a": 1})
        assert list(names.items()) == [("a", 1), ("b", 2)]
        assert env.database_names() == ["names", "urls"]
        with pytest.raises(PycrawlerError, match="cursors need the environment in this process"):
            db.cursor()
    assert "Traceback" not in server.stop()
    with store.open(server.folder, read_only=True) as local:
        assert local.open_database("names").get(b"\x00a") is None
        assert len(local.open_database("urls")) == 10_001


def test_store_commands_take_a_served_address(server, tmp_path):
    dump = tmp_path / "in.jsonl"
    dump.write_text('{"key_hex": "6b31", "value_hex": "7631"}\n{"key_hex": "6b32", "value_hex": "7632"}\n')
    loaded = pycrawler("store", "load", server.address, dump, "--db", "pairs")
    assert loaded.returncode == 0 and "loaded 2 records" in loaded.stdout, loaded.stderr
    listed = pycrawler("store", "ls", server.address)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0].startswith(f"{server.address}: JE log version ")
    assert listed.stdout.splitlines()[2].split() == ["2", "pairs"]
    dumped = pycrawler("store", "dump", server.address, "--db", "pairs", "--format", "dbdump")
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout.split("HEADER=END\n")[1] == " 6b31\n 7631\n 6b32\n 7632\nDATA=END\n"


# -- concurrency --------------------------------------------------------------------------------
WRITER = """
    import hashlib, sys
    from pycrawler import store
    from pycrawler.errors import PycrawlerError

    me, batches, size = {me}, {batches}, {size}

    def record(owner, key):
        body = b"%d:" % owner + key * 20
        return body + hashlib.sha256(body).digest()

    with store.open({address!r}) as env:
        own = env.open_database("own-%d" % me, create=True)
        shared = env.open_database("shared", create=True)
        for batch in range(batches):
            mine = [b"w%d-%04d-%05d" % (me, batch, i) for i in range(size)]
            contended = [b"hot-%05d" % i for i in range(size)]
            for attempt in range(50):
                txn = env.begin()
                try:
                    own.put_many(mine, [record(me, k) for k in mine], txn=txn)
                    shared.put_many(mine, [record(me, k) for k in mine], txn=txn)
                    shared.put_many(contended, [record(me, k) for k in contended], txn=txn)
                    txn.commit()
                    break
                except PycrawlerError:   # a lock wait that timed out: JE aborts, the writer retries
                    txn.abort()
            else:
                sys.exit("gave up")
            print(batch, flush=True)    # acknowledged: committed
"""


def intact(value: bytes, key: bytes, owners) -> bool:
    body, digest = value[:-32], value[-32:]
    owner, _, repeated = body.partition(b":")
    return hashlib.sha256(body).digest() == digest and int(owner) in owners and repeated == key * 20


def test_four_writers_lose_nothing_and_tear_nothing(server):
    batches, size = 6, 500
    writers = [client(WRITER.format(me=me, batches=batches, size=size, address=server.address)) for me in range(4)]
    acknowledged = {}
    for me, writer in enumerate(writers):
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        acknowledged[me] = [int(line) for line in out.split()]
        assert acknowledged[me] == list(range(batches))
    assert "Traceback" not in server.stop()
    with store.open(server.folder, read_only=True) as env:
        shared = dict(env.open_database("shared").items())
        for me, done in acknowledged.items():
            own = dict(env.open_database(f"own-{me}").items())
            for batch in done:
                for i in range(size):
                    key = b"w%d-%04d-%05d" % (me, batch, i)
                    assert intact(own[key], key, {me}) and intact(shared[key], key, {me})
        hot = {k: v for k, v in shared.items() if k.startswith(b"hot-")}
        assert len(hot) == size and all(intact(v, k, set(range(4))) for k, v in hot.items())


# -- failures -----------------------------------------------------------------------------------
def test_a_client_killed_mid_transaction_leaves_no_lock(server):
    holder = client(f"""
        import time
        from pycrawler import store
        env = store.open({server.address!r})
        db = env.open_database("locked", create=True)
        txn = env.begin()
        db.put_many([b"x", b"y"], [b"from the dead", b"from the dead"], txn=txn)
        print("holding", flush=True)
        time.sleep(600)
        """)
    assert holder.stdout.readline().strip() == "holding", holder.stderr.read()
    holder.kill()
    holder.communicate()
    with store.open(server.address) as env:
        db = env.open_database("locked")
        deadline = time.monotonic() + IDLE_TIMEOUT + 30
        while True:   # JE refuses while the dead client's lock is held; the server aborts it
            try:
                db.put(b"x", b"alive")
                break
            except PycrawlerError as exc:
                assert time.monotonic() < deadline, f"the lock is still held: {exc}"
        assert db.get_many([b"x", b"y"]) == [b"alive", None]


@pytest.mark.parametrize("goes", ["closes", "is killed"])
def test_a_client_that_goes_away_has_its_transaction_aborted_at_once(tmp_path, runtime, goes):
    """Not after the idle time-out (10 minutes here): when the client's connection closes,
    whether the client closed it (and lives on) or died."""
    served = Server(tmp_path / "env", "--idle-timeout", "600")
    holder = client(f"""
        import time
        from pycrawler import store
        env = store.open({served.address!r})
        db = env.open_database("locked", create=True)
        txn = env.begin()
        db.put_many([b"x", b"y"], [b"never committed", b"never committed"], txn=txn)
        if {goes == "closes"}:
            env.close()
        print("gone", flush=True)
        time.sleep(600)
        """)
    try:
        assert holder.stdout.readline().strip() == "gone", holder.stderr.read()
        if goes == "is killed":
            holder.kill()
        with store.open(served.address) as env:
            db = env.open_database("locked")
            started = time.monotonic()
            while True:  # JE refuses while the lock is held (its lock time-out is 0.5 s)
                try:
                    db.put(b"x", b"alive")
                    break
                except PycrawlerError as exc:
                    assert time.monotonic() - started < 5, f"the lock is still held: {exc}"
            assert db.get_many([b"x", b"y"]) == [b"alive", None]
    finally:
        holder.kill()
        holder.communicate()
        assert "Traceback" not in served.stop()


def test_a_server_killed_leaves_what_it_acknowledged(server):
    with store.open(server.address) as env:
        db = env.open_database("kept", create=True)
        keys = [b"%06d" % i for i in range(30_000)]
        with env.begin() as txn:
            db.put_many(keys, keys, txn=txn)
        db.put(b"last", b"one")
    server.kill()
    assert_one_line_error(pycrawler("store", "ls", server.address), "no gateway answers there")
    with store.open(server.folder) as env:
        db = env.open_database("kept")
        assert len(db) == 30_001 and db.get(b"last") == b"one" and db.get(b"029999") == b"029999"


def test_a_wrong_token_is_refused_with_one_line(server):
    with pytest.raises(GatewayGone, match="refused the connection: wrong token"):
        store.open(server.address, token="not-the-token")
    facts = gateway_address.read(server.address)
    gateway_address.write(server.address, facts | {"token": "forged"})
    assert_one_line_error(pycrawler("store", "ls", server.address), "refused the connection: wrong token")


def test_a_missing_token_file_is_refused_with_one_line(server, tmp_path, monkeypatch):
    monkeypatch.setenv("PYCRAWLER_RUNTIME_DIR", str(tmp_path / "elsewhere"))
    assert_one_line_error(pycrawler("store", "ls", server.address), "no token file")


def test_a_peer_other_than_127_0_0_1_is_refused_before_a_byte_is_read(server):
    """The server listens on 127.0.0.1; a connection from 127.0.0.2 (another address of this
    host, standing in for any other peer) is closed unanswered, and the server says so."""
    port = gateway_address.parse(server.address)[1]
    with socket.socket() as peer:
        peer.bind(("127.0.0.2", 0))
        peer.connect(("127.0.0.1", port))
        peer.settimeout(10)
        assert peer.recv(100) == b""
    with store.open(server.address) as env:   # 127.0.0.1 still gets in
        assert env.database_names() == []
    lines = server.stop().splitlines()
    assert lines == ["pycrawler serve: refused a connection from 127.0.0.2 (not an allowed peer address: "
                     "127.0.0.1, 0:0:0:0:0:0:0:1)"]


def test_serving_beyond_loopback_needs_a_flag(tmp_path, runtime):
    done = pycrawler("serve", tmp_path / "env", "--create", "--bind", "192.0.2.1")
    assert_one_line_error(done, "--bind 192.0.2.1 is not a loopback address")
    assert not runtime.exists() or not list(runtime.iterdir())


def test_the_token_file_is_private_and_removed_on_stop(server, runtime):
    path = gateway_address.token_file(server.address)
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(runtime.stat().st_mode & 0o777) == "0o700"
    server.stop()
    assert not path.exists()


# -- a running crawl, a served frontier ------------------------------------------------------------
def stderr_line(process: subprocess.Popen, starts: str, timeout: float = 60) -> str:
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while selector.select(max(0.0, deadline - time.monotonic())):
        line = process.stderr.readline()
        if not line or line.startswith(starts):
            return line
    raise AssertionError(f"no line starting {starts!r} on stderr")


def fetched_count(address: str) -> int:
    listed = pycrawler("store", "ls", address)
    assert listed.returncode == 0, listed.stderr
    return next(int(line.split()[0]) for line in listed.stdout.splitlines() if line.endswith("  fetched"))


def test_a_running_crawl_serves_its_state_live(tmp_path, runtime):
    from crawl_sites import ROOT, CountingServer, crawl_command, write_site

    root = tmp_path / "site"
    root.mkdir()
    write_site(root, 120, seed=3)
    with CountingServer(root) as base:
        crawl = subprocess.Popen(crawl_command(base + "index.html", tmp_path / "state", "--delay", "0.05",
                                               "--concurrency", "2", "--serve"),
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = stderr_line(crawl, "pycrawler crawl: serving ")
            address = line.split(" at ")[-1].strip()
            first = fetched_count(address)
            deadline = time.monotonic() + 60
            while (later := fetched_count(address)) <= first:   # the same process, seen moving
                assert time.monotonic() < deadline and crawl.poll() is None, "the served count never moved"
            dumped = pycrawler("store", "dump", address, "--db", "fetched", "--format", "dbdump")
            assert dumped.returncode == 0 and dumped.stdout.count("\n ") // 2 >= later, dumped.stderr
        finally:
            crawl.send_signal(signal.SIGTERM)
            out, err = crawl.communicate(timeout=60)
    assert crawl.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and not list(runtime.iterdir())


def test_frontier_commands_take_a_served_todo_store(server):
    put = pycrawler("frontier", "put", server.address, "http://a.example/1", "http://b.example/2")
    assert put.returncode == 0 and "2 waiting" in put.stdout, put.stderr
    stats = pycrawler("frontier", "stats", server.address)
    assert stats.stdout.splitlines() == ["layout: pycrawler", "order: key", "count: 2"], stats.stderr
    assert_one_line_error(pycrawler("frontier", "pop", server.address), "needs the store in this process")


def frontier_stats(target) -> list[str]:
    done = pycrawler("frontier", "stats", target)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_frontier_stats_of_a_running_crawl_move_and_match_its_state_after_it(tmp_path, runtime):
    """``frontier stats`` on a crawl's --serve address reads its work-queue frontier live; held
    still (the site stops answering), the figures are the ones a local read-only open of the
    state gives once the crawl has stopped."""
    from crawl_sites import ROOT, CountingServer, crawl_command, write_site

    root = tmp_path / "site"
    root.mkdir()
    write_site(root, 150, seed=5)
    flowing = threading.Event()
    flowing.set()

    def gate(handler):  # while the test holds the site, every request waits
        flowing.wait()
        http.server.SimpleHTTPRequestHandler.do_GET(handler)

    with CountingServer(root, routes={"/": gate}) as base:
        crawl = subprocess.Popen(crawl_command(base + "index.html", tmp_path / "state", "--delay", "0.05",
                                               "--concurrency", "2", "--serve"),
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            address = stderr_line(crawl, "pycrawler crawl: serving ").split(" at ")[-1].strip()
            assert frontier_stats(address)[:2] == ["layout: workqueues", "order: politeness"]
            seen = {tuple(frontier_stats(address))}
            deadline = time.monotonic() + 60
            while len(seen) < 3:  # the same crawl, read while it moves
                assert time.monotonic() < deadline and crawl.poll() is None, f"the figures never moved: {seen}"
                seen.add(tuple(frontier_stats(address)))
            assert_one_line_error(pycrawler("frontier", "pop", address), "for its statistics only")
            flowing.clear()
            held = frontier_stats(address)
            while (again := frontier_stats(address)) != held:  # what was in flight is committed, then nothing moves
                assert time.monotonic() < deadline, "the held crawl's figures kept moving"
                held = again
        finally:
            crawl.send_signal(signal.SIGTERM)
            out, err = crawl.communicate(timeout=60)
            flowing.set()
    assert crawl.returncode == 128 + signal.SIGTERM, err
    assert int(held[2].removeprefix("count: ")) > 0
    assert frontier_stats(tmp_path / "state") == held
