"""Reading Heritrix crawl state: what a Heritrix 1.14 store holds, read back from its bytes
(never by loading a Heritrix class); checkpoints of both Heritrix formats; the refusals."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from heritrix_stores import Holder, crawl, queue_order, seen_keys, write_h1
from java_programs import LEG_LOG_VERSION
from pycrawler.errors import BadInput, SetupError, StoreLocked
from pycrawler.heritrix.checkpoints import H1_MANIFEST, H3_MANIFEST
from pycrawler.heritrix.export import pending_urls, queue_stats, value_decoder
from pycrawler.heritrix.migrate import heritrix_keys
from pycrawler.heritrix.pending import parse_key
from pycrawler.heritrix.state import HeritrixState
from pycrawler.store import Environment

URLS = crawl(40)
SEEN = [u.uri for u in URLS[::2]]


@pytest.fixture(scope="module")
def h1_job(tmp_path_factory) -> Path:
    """A Heritrix 1 job folder whose state/ holds URLS pending and SEEN seen."""
    job = tmp_path_factory.mktemp("job")
    write_h1(job / "state", URLS, SEEN)
    return job


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_heritrix_1_store_reads_back_every_field_in_queue_order(h1_job):
    before = snapshot(h1_job)
    with HeritrixState.open(h1_job / "state") as state:
        assert (state.heritrix, state.log_version) == (1, LEG_LOG_VERSION)
        rows = list(pending_urls(state, value_decoder(state)))
    expected = queue_order(URLS)
    assert [r["uri"] for r in rows] == [u.uri for u in expected]
    for row, url in zip(rows, expected):
        assert (row["queue"], row["directive"], row["precedence"], row["ordinal"]) == \
            (url.queue, url.directive, url.cost, url.ordinal)
        assert (row["classKey"], row["schedulingDirective"], row["holderCost"], row["ordinal"]) == \
            (url.queue, url.directive, url.cost, url.ordinal)
        assert (row["via"], row["pathFromSeed"], row["isSeed"]) == (url.via, url.path_from_seed, url.seed)
        assert row["fetchAttempts"] == url.ordinal % 3 and row["decoded"] is True
    assert snapshot(h1_job) == before, "reading changed the store"


def test_queue_statistics_count_urls_directives_and_precedences(h1_job):
    with HeritrixState.open(h1_job / "state") as state:
        stats = queue_stats(state)
        assert state.seen_count() == len(SEEN)
    assert set(stats) == {u.queue for u in URLS}
    for queue, counts in stats.items():
        mine = [u for u in URLS if u.queue == queue]
        assert counts["urls"] == len(mine)
        assert counts["directives"] == {d: sum(u.directive == d for u in mine) for d in {u.directive for u in mine}}
        assert sum(counts["precedences"].values()) == len(mine)


def test_a_state_is_read_with_a_small_je_cache_so_an_import_has_the_heap_for_its_own(h1_job):
    from pycrawler.heritrix.state import CACHE_BYTES

    with HeritrixState.open(h1_job / "state") as state:
        assert state.env.cache_stats()["cache_max_bytes"] == CACHE_BYTES <= 64 << 20


def test_seen_keys_come_out_ascending_and_answer_membership(h1_job):
    expected = np.array(sorted(seen_keys(SEEN)), dtype=np.uint64)
    assert (expected >= 1 << 63).any() and (expected < 1 << 63).any(), "both halves of the key space"
    with HeritrixState.open(h1_job / "state") as state:
        keys = np.concatenate(list(state.seen_keys(page=7)))
        found = state.contains_keys(heritrix_keys([u.uri for u in URLS]))
    assert keys.tolist() == expected.tolist()
    assert found.tolist() == [i % 2 == 0 for i in range(len(URLS))]


def test_insert_keys_parse_as_heritrix_builds_them():
    key = "bücher.example".encode() + b"\x00" + bytes([3, 255]) + (256).to_bytes(6, "big")
    fields = parse_key(key)
    assert (fields.queue, fields.directive, fields.precedence, fields.ordinal) == ("bücher.example", 3, 255, 256)
    with pytest.raises(BadInput, match="not a Heritrix insert key"):
        parse_key(b"no-separator-here")


# -- Heritrix 3 -------------------------------------------------------------------------------------
@pytest.mark.je3
def test_a_heritrix_3_store_in_a_process_already_on_je_3_names_the_fix_and_is_left_untouched(shared, tmp_path):
    store = tmp_path / "state"
    shutil.copytree(shared / "fixtures" / "je7-heritrix-layout", store)
    before = snapshot(store)
    with pytest.raises(SetupError) as error:
        HeritrixState.open(store)
    message = str(error.value)
    assert "log version 15" in message and "JE 7.5" in message and "JE 3.3.98" in message
    assert "open it in a process of its own" in message
    assert snapshot(store) == before


def write_h3_shape(path: Path, urls: list[str]) -> None:
    """Heritrix 3's pending layout on JE 3.3: insert keys, values that are not serial-bound."""
    with Environment(path, create=True, transactional=False) as env:
        pending = env.open_database("pending", create=True)
        pending.put(b"example.com\x00", b"")
        for i, url in enumerate(urls):
            pending.put(b"example.com\x00" + bytes([3, 1]) + i.to_bytes(6, "big"), url.encode())
        env.open_database("alreadySeenUrl", create=True)


def test_kryo_values_without_heritrix_classes_give_the_key_fields_and_the_bytes(tmp_path):
    write_h3_shape(tmp_path / "h3", ["http://example.com/0", "http://example.com/1"])
    with HeritrixState.open(tmp_path / "h3") as state:
        assert state.heritrix == 3
        decode_many = value_decoder(state)
        assert decode_many is None, "no Heritrix classes on this class path"
        rows = list(pending_urls(state, decode_many))
    assert rows == [{"queue": "example.com", "directive": 3, "precedence": 1, "ordinal": i, "decoded": False,
                     "value_hex": f"http://example.com/{i}".encode().hex()} for i in range(2)]


# -- checkpoints --------------------------------------------------------------------------------------
def h3_checkpoint(state: Path, name: str, *, hard_links: bool = True) -> Path:
    """What BdbModule.doCheckpoint leaves: STATE/<name>/jdbfiles.manifest and, with hard links,
    each file under the manifest line as its name."""
    folder = state / name
    folder.mkdir()
    lines = []
    for jdb in sorted(state.glob("*.jdb")):
        line = f"{jdb.name},{jdb.stat().st_size}"
        lines.append(line)
        if hard_links:
            os.link(jdb, folder / line)
    (folder / H3_MANIFEST).write_text("\n".join(lines) + "\n")
    return folder


def h1_checkpoint(job: Path, name: str) -> Path:
    """What Heritrix 1.14's checkpointer leaves: checkpoints/<name>/bdbje-logs-manifest.txt and
    the log files copied into checkpoints/<name>/bdbje-logs/."""
    folder = job / "checkpoints" / name
    (folder / "bdbje-logs").mkdir(parents=True)
    names = [jdb.name for jdb in sorted((job / "state").glob("*.jdb"))]
    for jdb_name in names:
        shutil.copy(job / "state" / jdb_name, folder / "bdbje-logs" / jdb_name)
    (folder / H1_MANIFEST).write_text("".join(n + "\n" for n in names))
    return folder


def pending_count(path: Path, checkpoint: str | None = None) -> int:
    with HeritrixState.open(path, checkpoint=checkpoint) as state:
        return sum(q["urls"] for q in queue_stats(state).values())


@pytest.fixture
def job(tmp_path, h1_job) -> Path:
    shutil.copytree(h1_job, tmp_path / "job")
    return tmp_path / "job"


def test_a_heritrix_3_checkpoint_is_read_from_its_hard_links_as_it_was(job):
    h3_checkpoint(job / "state", "cp00001-20240101000000")
    write_h1(job / "state", crawl(50)[40:], [])  # the crawl goes on after the checkpoint
    before = snapshot(job)
    assert pending_count(job / "state") == 50
    assert pending_count(job / "state", "latest") == pending_count(job / "state", "cp00001-20240101000000") == 40
    assert snapshot(job) == before


def test_a_heritrix_1_checkpoint_is_read_from_its_copied_logs(job):
    h1_checkpoint(job, "cp00001-20100101000000")
    write_h1(job / "state", crawl(45)[40:], [])
    assert pending_count(job / "state") == 45
    assert pending_count(job / "state", "latest") == 40
    assert pending_count(job / "state", str(job / "checkpoints" / "cp00001-20100101000000")) == 40


def test_checkpoint_files_are_found_in_the_state_folder_when_not_linked(job):
    h3_checkpoint(job / "state", "cp00002-20240101000000", hard_links=False)
    for jdb in (job / "state").glob("*.jdb"):
        jdb.rename(jdb.with_suffix(".del"))  # as JE's cleaner leaves them with expunge off
    assert pending_count(job / "state", "latest") == 40


def test_a_checkpoint_file_longer_than_its_manifest_is_read_up_to_that_length(job):
    folder = h3_checkpoint(job / "state", "cp00001-20240101000000", hard_links=False)
    for jdb in (job / "state").glob("*.jdb"):
        shutil.copy(jdb, folder / f"{jdb.name},{jdb.stat().st_size}")
        with open(folder / f"{jdb.name},{jdb.stat().st_size}", "ab") as f:
            f.write(b"\x00" * 100)  # what recovery from the checkpoint appends
    (job / "state" / "00000000.jdb").unlink()
    assert pending_count(job / "state", "latest") == 40


def test_a_checkpoint_with_a_missing_file_names_it(job):
    folder = h3_checkpoint(job / "state", "cp00001-20240101000000")
    for linked in folder.glob("*.jdb,*"):
        linked.unlink()
    (job / "state" / "00000000.jdb").unlink()
    with pytest.raises(BadInput, match=r"checkpoint cp00001-20240101000000 is incomplete: its log file 00000000\.jdb "
                                       r"is missing"):
        HeritrixState.open(job / "state", checkpoint="latest")


def test_unknown_checkpoints_are_refused_with_the_ones_there_are(job):
    with pytest.raises(BadInput, match="has no checkpoints"):
        HeritrixState.open(job / "state", checkpoint="latest")
    h3_checkpoint(job / "state", "cp00001-20240101000000")
    with pytest.raises(BadInput, match=r"no checkpoint 'cp9'.*cp00001-20240101000000"):
        HeritrixState.open(job / "state", checkpoint="cp9")


# -- refusals --------------------------------------------------------------------------------------
def test_a_store_a_crawler_is_writing_is_refused_and_its_lock_kept(job):
    with Holder(job / "state") as crawler:
        with pytest.raises(StoreLocked, match=rf"process {crawler.pid} holds its JE write lock"):
            HeritrixState.open(job / "state")
        with pytest.raises(StoreLocked):  # the refusal left the crawler's lock in place
            HeritrixState.open(job / "state")
        crawler.release()
    assert pending_count(job / "state") == 40


def test_a_checkpoint_of_a_running_crawl_can_be_read(job):
    h3_checkpoint(job / "state", "cp00001-20240101000000")
    with Holder(job / "state"):
        assert pending_count(job / "state", "latest") == 40


def test_folders_that_are_not_heritrix_state_are_refused(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        HeritrixState.open(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="no JE log files"):
        HeritrixState.open(tmp_path / "empty")
    with Environment(tmp_path / "other", create=True) as env:
        env.open_database("URL", create=True)
    with pytest.raises(BadInput, match="not a Heritrix crawl state.*its databases: URL"):
        HeritrixState.open(tmp_path / "other")
