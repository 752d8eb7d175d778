"""Bytes between GraalPy and Java: milliseconds to move --size bytes each way, by the routes
GraalPy's interop offers. Runs under GraalPy only:

    scripts/graalpy scripts/bench/graalpy_bytes.py                  # 1 MiB, 16 B x 10,000
    PYCRAWLER_GRAALPY_JIT=0 scripts/graalpy scripts/bench/graalpy_bytes.py --rounds 3

- **latin-1**: ``Bytes.fromLatin1(data.decode("latin-1"))`` and
  ``Bytes.toLatin1(array).encode("latin-1")`` (graalpy/'s helper: one String each way, which
  the engine converts in bulk).
- **latin-1, JDK only**: ``ISO_8859_1.encode(text).array()`` and
  ``String(array, ISO_8859_1).encode("latin-1")``, with no helper class.
- **as_java_byte_array**: GraalPy's own ``java.as_java_byte_array(data)``, read by Java
  (``DatabaseEntry(...).getData()``: it is converted when Java reads it).
- **per element**: a ``byte[]`` filled from Python, and ``bytes(b & 0xFF for b in array)``;
  timed on --element-size bytes (they take seconds per MiB).

Passing ``bytes`` straight to a ``byte[]`` parameter is no route: GraalPy 23.1 converts it
element by element and fails on any byte over 127. Each figure is the best of --rounds, in
milliseconds (per call for the small values, in microseconds); the last line is key=value figures.
"""

from __future__ import annotations

import argparse
import sys
import time

if sys.implementation.name != "graalpy":
    sys.exit("graalpy_bytes: run it under GraalPy: scripts/graalpy scripts/bench/graalpy_bytes.py")

import java  # GraalPy's interop module

Bytes = java.type("org.pycrawler.graalpy.Bytes")
String = java.type("java.lang.String")
LATIN1 = java.type("java.nio.charset.StandardCharsets").ISO_8859_1
ByteArray = java.type("byte[]")
DatabaseEntry = java.type("com.sleepycat.je.DatabaseEntry")


def best_ms(call, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def jdk_to_java(data: bytes):
    buffer = LATIN1.encode(data.decode("latin-1"))
    return java.type("java.util.Arrays").copyOf(buffer.array(), buffer.limit())


def element_to_java(data: bytes):
    array = ByteArray(len(data))
    for i, b in enumerate(data):
        array[i] = b - 256 if b > 127 else b
    return array


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes per transfer (default 1 MiB)")
    parser.add_argument("--element-size", type=int, default=1 << 16, help="bytes for the per-element routes")
    parser.add_argument("--small-calls", type=int, default=10_000, help="16-byte transfers timed per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    data = bytes(range(256)) * (args.size // 256)
    array = Bytes.fromLatin1(data.decode("latin-1"))
    assert Bytes.toLatin1(array).encode("latin-1") == data and len(jdk_to_java(data)) == len(data)
    assert Bytes.toLatin1(DatabaseEntry(java.as_java_byte_array(data)).getData()).encode("latin-1") == data
    small = bytes(range(240, 256))
    small_array = Bytes.fromLatin1(small.decode("latin-1"))
    part = data[:args.element_size]
    part_array = Bytes.fromLatin1(part.decode("latin-1"))
    mib = args.size / (1 << 20)
    element_mib = args.element_size / (1 << 20)
    figures = {
        "to_java_latin1_ms_per_mib": best_ms(lambda: Bytes.fromLatin1(data.decode("latin-1")), args.rounds) / mib,
        "to_python_latin1_ms_per_mib": best_ms(lambda: Bytes.toLatin1(array).encode("latin-1"), args.rounds) / mib,
        "to_java_jdk_ms_per_mib": best_ms(lambda: jdk_to_java(data), args.rounds) / mib,
        "to_python_jdk_ms_per_mib": best_ms(lambda: String(array, LATIN1).encode("latin-1"), args.rounds) / mib,
        "to_java_as_java_byte_array_ms_per_mib":
            best_ms(lambda: DatabaseEntry(java.as_java_byte_array(data)).getData(), args.rounds) / mib,
        "to_java_per_element_ms_per_mib": best_ms(lambda: element_to_java(part), 1) / element_mib,
        "to_python_per_element_ms_per_mib": best_ms(lambda: bytes(b & 0xFF for b in part_array), 1) / element_mib,
        "small_to_java_latin1_us": best_ms(lambda: [Bytes.fromLatin1(small.decode("latin-1"))
                                                    for _ in range(args.small_calls)], args.rounds)
                                   * 1000 / args.small_calls,
        "small_to_python_latin1_us": best_ms(lambda: [Bytes.toLatin1(small_array).encode("latin-1")
                                                      for _ in range(args.small_calls)], args.rounds)
                                     * 1000 / args.small_calls,
    }
    for name, value in figures.items():
        print(f"{name:40} {value:12.2f}")
    print(f"graalpy={sys.version.split()[0]} " + " ".join(f"{name}={value:.2f}" for name, value in figures.items()))


if __name__ == "__main__":
    main()
