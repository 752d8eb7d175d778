"""JE's exceptions become pycrawler's errors, each one line with the exit code that names what
to do; the classification reads the causes JE wraps, not only the outer message."""

from __future__ import annotations

import jpype

from pycrawler import jvm
from pycrawler.errors import PycrawlerError, SetupError
from pycrawler.store.java_errors import translate


def java_exception(message: str, cause=None):
    jvm.start()
    return jpype.JClass("java.lang.RuntimeException")(message, cause)


def test_a_failed_write_for_another_reason_is_not_a_full_disk():
    error = translate(java_exception("IOE during write", java_exception("Input/output error")), "state")
    assert type(error) is PycrawlerError and "IOE during write" in str(error)


def test_a_class_of_the_writing_program_that_is_missing_is_named_with_the_fix():
    # HypergraphDB's store: JE 5 loads each database's comparator during recovery.
    jvm.start()
    missing = jpype.JClass("java.lang.ClassNotFoundException")("org.hypergraphdb.StringComparator")
    wrapped = java_exception("(JE 5.0.73) /tmp/view-1 last LSN=0x0/0x4545d LOG_INTEGRITY: Log information is "
                             "incorrect", java_exception("Exception while trying to load Btree", missing))
    error = translate(wrapped, "db/mainDB", renames={"/tmp/view-1": "db/mainDB"})
    assert isinstance(error, SetupError) and error.exit_code == 3
    assert str(error) == ("db/mainDB needs the class org.hypergraphdb.StringComparator of the program that wrote it "
                          "(JE loads such classes, a B-tree comparator say, to open the store): put that program's "
                          "jar on PYCRAWLER_CLASSPATH")


def test_a_message_names_the_store_not_the_folder_je_was_given():
    error = translate(java_exception("(JE 5.0.73) /tmp/view-1 last LSN=0x0/0x1 checksum failed"), "db/main",
                      renames={"/tmp/view-1": "db/main"})
    assert str(error) == "db/main is damaged: db/main last LSN=0x0/0x1 checksum failed"


def test_a_jvm_out_of_heap_says_so_and_not_that_the_store_is_damaged(monkeypatch):
    # JE wraps the OutOfMemoryError in EnvironmentFailureException(JAVA_ERROR), whose message
    # would otherwise read as damage.
    jvm.start()
    monkeypatch.setenv("PYCRAWLER_HEAP", "1g")
    oom = jpype.JClass("java.lang.OutOfMemoryError")("Java heap space")
    error = translate(java_exception("JAVA_ERROR: Java Error occurred, recovery may not be possible.", oom),
                      "state database 'pending'")
    assert isinstance(error, SetupError) and "damaged" not in str(error)
    assert str(error).startswith("state database 'pending': the JVM ran out of heap (PYCRAWLER_HEAP=1g)")


def test_a_class_of_another_version_is_a_class_version_mismatch_naming_the_class_and_both_uids():
    # JE deserializes a database's B-tree comparator to open the store; a comparator class of
    # another serialVersionUID fails there, and JE calls the log damaged (LOG_INTEGRITY). JE 7+
    # chains Java's InvalidClassException; JE 3.3 keeps only its text.
    jvm.start()
    reason = "local class incompatible: stream classdesc serialVersionUID = 1, local class serialVersionUID = 2"
    invalid = jpype.JClass("java.io.InvalidClassException")("org.example.ReverseOrder", reason)
    je18 = java_exception("(JE 18.3.12) /tmp/s last LSN=0x0/0x8dc LOG_INTEGRITY: Log information is incorrect",
                          java_exception("Exception while trying to load Btree", invalid))
    je3 = java_exception("(JE 3.3.98) last LSN=0x0/0x644", java_exception(
        f"(JE 3.3.98) Exception while trying to load Btree: java.io.InvalidClassException: org.example.ReverseOrder; "
        f"{reason}"))
    for wrapped in (je18, je3):
        error = translate(wrapped, "/tmp/s")
        assert isinstance(error, SetupError) and error.exit_code == 3
        assert str(error) == ("/tmp/s holds objects of the class org.example.ReverseOrder with serialVersionUID 1, "
                              "and the class path has a version of the class with serialVersionUID 2: a class-version "
                              "mismatch, not damage: put the version of the class that the writing program used on "
                              "PYCRAWLER_CLASSPATH")
