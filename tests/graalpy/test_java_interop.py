"""Under GraalPy, JE and the bridge are on the class path and Java is one call away: a JE
environment written and read back through Java interop, bytes in bulk both ways, and
hashlib's MD5 (what pycrawler's keys are made of) the same as CPython's and Java's."""

import hashlib
import shutil
import subprocess

import java
import pytest

Bytes = java.type("org.pycrawler.graalpy.Bytes")
URLS = ["http://example.com/", "https://bücher.example/a b?q=1", "http://127.0.0.1:8080/" + "x" * 3000, ""]


def to_java(data: bytes):
    return Bytes.fromLatin1(data.decode("latin-1"))


def to_python(array) -> bytes:
    return Bytes.toLatin1(array).encode("latin-1")


def test_every_byte_value_crosses_both_ways():
    data = bytes(range(256)) * 3
    array = to_java(data)
    assert array.getClass().getName() == "[B"
    assert len(array) == len(data)
    assert [array[i] for i in (0, 127, 128, 255)] == [0, 127, -128, -1]
    assert to_python(array) == data


def test_je_environment_written_and_read_back(tmp_path):
    environment_config = java.type("com.sleepycat.je.EnvironmentConfig")()
    environment_config.setAllowCreate(True)
    environment_config.setTransactional(True)
    environment = java.type("com.sleepycat.je.Environment")(java.type("java.io.File")(str(tmp_path)), environment_config)
    try:
        database_config = java.type("com.sleepycat.je.DatabaseConfig")()
        database_config.setAllowCreate(True)
        database_config.setTransactional(True)
        database = environment.openDatabase(None, "records", database_config)
        entry = java.type("com.sleepycat.je.DatabaseEntry")
        key, value = hashlib.md5(URLS[1].encode()).digest(), bytes(range(256))
        assert database.put(None, entry(to_java(key)), entry(to_java(value))).name() == "SUCCESS"
        found = entry()
        assert database.get(None, entry(to_java(key)), found, None).name() == "SUCCESS"
        assert to_python(found.getData()) == value
        assert database.get(None, entry(to_java(b"absent")), entry(), None).name() == "NOTFOUND"
        database.close()
    finally:
        environment.close()
    assert sorted(path.name for path in tmp_path.iterdir() if path.suffix == ".jdb") == ["00000000.jdb"]


def test_md5_is_javas():
    message_digest = java.type("java.security.MessageDigest")
    for url in URLS:
        digest = message_digest.getInstance("MD5").digest(to_java(url.encode()))
        assert hashlib.md5(url.encode()).digest() == to_python(digest)


@pytest.mark.skipif(shutil.which("python3") is None, reason="no CPython on PATH")
def test_md5_is_cpythons():
    cpython = subprocess.run(
        [shutil.which("python3"), "-c",
         "import hashlib, sys; print(*(hashlib.md5(url.encode()).hexdigest() for url in sys.argv[1:]))", *URLS],
        capture_output=True, text=True, check=True)
    assert cpython.stdout.split() == [hashlib.md5(url.encode()).hexdigest() for url in URLS]
