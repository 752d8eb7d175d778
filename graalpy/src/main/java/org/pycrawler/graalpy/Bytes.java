package org.pycrawler.graalpy;

import java.nio.charset.StandardCharsets;

/**
 * Moves bytes between GraalPy and Java in one step each way. GraalPy 23.1 hands a Python
 * {@code bytes} to Java as an array of ints 0..255 (a {@code byte[]} parameter then fails on
 * every byte over 127, and is converted element by element anyway), and a Java {@code byte[]}
 * to Python as signed elements ({@code bytes(arr)} refuses them). A string is converted in
 * bulk both ways, and latin-1 maps each byte to the char of the same value: so Python's
 * {@code data.decode("latin-1")} crosses as one String, and a byte[] comes back as one String
 * to {@code .encode("latin-1")}. Measured under GraalPy 23.1.5 interpreted, 1 MiB: 5.5 ms to
 * Java, 8.8 ms back (against seconds per element).
 */
public final class Bytes {
    private Bytes() {}

    /** The bytes of a Python {@code data.decode("latin-1")}. */
    public static byte[] fromLatin1(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The bytes as latin-1 text, for Python's {@code .encode("latin-1")}. */
    public static String toLatin1(byte[] data) {
        return new String(data, StandardCharsets.ISO_8859_1);
    }
}
