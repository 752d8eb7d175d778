package org.pycrawler.bridge;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * URL keys of a whole batch in one call, for Python runtimes without numpy (GraalPy): the same
 * numbers as {@code pycrawler/keys/heritrix_fp.py} and {@code pycrawler/keys/xxh64.py}, of
 * which this is a port (the Python modules explain the mathematics).
 *
 * <p>A batch is one array of URLs laid end to end and {@code n + 1} offsets into it: URL
 * {@code i} is {@code [offsets[i], offsets[i+1])}. Heritrix's keys take a {@code String}
 * (its UTF-16 code units are what Heritrix fingerprints; GraalPy hands a Python {@code str} over
 * as one, a lone surrogate as one unit), offsets counted in units; XXH64 takes the URLs' bytes. Keys come back as a {@code long[]} (the unsigned value's bits), or as its
 * little-endian bytes ({@link #littleEndian}), which Python unpacks in one call.
 */
public final class UrlKeys {
    private UrlKeys() {
    }

    /** Heritrix's {@code FPGenerator.std24} and {@code std40}, as {@code createKey} uses them. */
    static final Rabin STD24 = new Rabin(0x8E375B8000000000L, 24);
    static final Rabin STD40 = new Rabin(0x8643FFF621800000L, 40);

    /**
     * Rabin fingerprints of one irreducible polynomial {@code P} of degree {@code d}: the
     * coefficient of x^0 in the word's most significant bit, each code unit folded in as
     * {@code f <- (f + c(x)) * x^16 mod P} with byte tables for the 16 bits pushed out.
     */
    static final class Rabin {
        private final long empty;
        private final long keep;
        private final long[] shiftedOutLow = new long[256];
        private final long[] shiftedOutHigh = new long[256];
        private final long[][] reduce;

        Rabin(long polynomial, int degree) {
            long[] powers = new long[80];  // x^e mod P, e < 80: all the tables need
            long top = Long.MIN_VALUE >>> (degree - 1);
            long value = Long.MIN_VALUE;
            for (int e = 0; e < powers.length; e++) {
                powers[e] = value;
                boolean overflow = (value & top) != 0;
                value >>>= 1;
                if (overflow) {
                    value ^= polynomial;
                }
            }
            empty = powers[64];
            fill(shiftedOutLow, powers, 79);
            fill(shiftedOutHigh, powers, 71);
            reduce = new long[(64 - degree) / 8][256];
            for (int i = 0; i < reduce.length; i++) {
                fill(reduce[i], powers, 63 - 8 * i);
            }
            keep = degree == 64 ? -1L : -1L << (64 - degree);
        }

        /** table[byte] = XOR of powers[highest - b] over the bits b set in byte. */
        private static void fill(long[] table, long[] powers, int highest) {
            for (int b = 1; b < 256; b++) {
                int lowBit = Integer.numberOfTrailingZeros(b);
                table[b] = table[b & (b - 1)] ^ powers[highest - lowBit];
            }
        }

        /** The fingerprint of the code units {@code [from, to)} of {@code text}. */
        long fp(String text, int from, int to) {
            long f = empty;
            for (int i = from; i < to; i++) {
                f ^= text.charAt(i);
                f = (f >>> 16) ^ shiftedOutLow[(int) f & 0xFF] ^ shiftedOutHigh[(int) (f >>> 8) & 0xFF];
            }
            long result = f & keep;
            for (long[] table : reduce) {
                result ^= table[(int) f & 0xFF];
                f >>>= 8;
            }
            return result;
        }
    }

    /** Where Heritrix's scheme and authority end in the URL {@code [from, to)}: before the
     * first '/' after the first "://"; the whole URL without either; nothing when "://" opens it. */
    static int schemeAuthorityEnd(String text, int from, int to) {
        int separator = -1;
        for (int i = from; i + 3 <= to; i++) {
            if (text.charAt(i) == ':' && text.charAt(i + 1) == '/' && text.charAt(i + 2) == '/') {
                separator = i;
                break;
            }
        }
        if (separator == -1) {
            return to;
        }
        if (separator == from) {
            return from;
        }
        for (int i = separator + 3; i < to; i++) {
            if (text.charAt(i) == '/') {
                return i;
            }
        }
        return to;
    }

    /** {@code BdbUriUniqFilter.createKey} of each URL: std24(scheme + authority) | std40(url) >>> 24. */
    public static long[] heritrixKeys(String urls, int[] offsets) {
        long[] keys = new long[offsets.length - 1];
        for (int i = 0; i < keys.length; i++) {
            int from = offsets[i];
            int to = offsets[i + 1];
            keys[i] = STD24.fp(urls, from, schemeAuthorityEnd(urls, from, to)) | STD40.fp(urls, from, to) >>> 24;
        }
        return keys;
    }

    /** The Rabin fingerprint of each string modulo {@code polynomial} of degree {@code degree} (8..64, whole bytes). */
    public static long[] fingerprints(long polynomial, int degree, String texts, int[] offsets) {
        if (degree < 8 || degree > 64 || degree % 8 != 0) {
            throw new IllegalArgumentException("degree must be a multiple of 8 in 8..64, not " + degree);
        }
        Rabin rabin = new Rabin(polynomial, degree);
        long[] out = new long[offsets.length - 1];
        for (int i = 0; i < out.length; i++) {
            out[i] = rabin.fp(texts, offsets[i], offsets[i + 1]);
        }
        return out;
    }

    private static final long P1 = 0x9E3779B185EBCA87L;
    private static final long P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long P3 = 0x165667B19E3779F9L;
    private static final long P4 = 0x85EBCA77C2B2AE63L;
    private static final long P5 = 0x27D4EB2F165667C5L;

    private static long read64(byte[] data, int pos) {
        long value = 0;
        for (int j = 7; j >= 0; j--) {
            value = value << 8 | (data[pos + j] & 0xFF);
        }
        return value;
    }

    private static long round(long acc, long lane) {
        return Long.rotateLeft(acc + lane * P2, 31) * P1;
    }

    private static long merge(long acc, long lane) {
        return (acc ^ round(0, lane)) * P1 + P4;
    }

    /** XXH64 (seed 0) of {@code data[from, to)}. */
    static long xxh64(byte[] data, int from, int to) {
        int pos = from;
        int length = to - from;
        long h;
        if (length >= 32) {
            long v1 = P1 + P2;
            long v2 = P2;
            long v3 = 0;
            long v4 = -P1;
            while (pos + 32 <= to) {
                v1 = round(v1, read64(data, pos));
                v2 = round(v2, read64(data, pos + 8));
                v3 = round(v3, read64(data, pos + 16));
                v4 = round(v4, read64(data, pos + 24));
                pos += 32;
            }
            h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
            h = merge(merge(merge(merge(h, v1), v2), v3), v4);
        } else {
            h = P5;
        }
        h += length;
        while (pos + 8 <= to) {
            h = Long.rotateLeft(h ^ round(0, read64(data, pos)), 27) * P1 + P4;
            pos += 8;
        }
        if (pos + 4 <= to) {
            long word = (data[pos] & 0xFFL) | (data[pos + 1] & 0xFFL) << 8 | (data[pos + 2] & 0xFFL) << 16
                | (data[pos + 3] & 0xFFL) << 24;
            h = Long.rotateLeft(h ^ word * P1, 23) * P2 + P3;
            pos += 4;
        }
        while (pos < to) {
            h = Long.rotateLeft(h ^ (data[pos] & 0xFFL) * P5, 11) * P1;
            pos++;
        }
        h = (h ^ h >>> 33) * P2;
        h = (h ^ h >>> 29) * P3;
        return h ^ h >>> 32;
    }

    /** XXH64 (seed 0) of each URL's bytes. */
    public static long[] xxh64(byte[] data, int[] offsets) {
        long[] keys = new long[offsets.length - 1];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = xxh64(data, offsets[i], offsets[i + 1]);
        }
        return keys;
    }

    /** The 8 little-endian bytes of each value, end to end: a Python {@code struct} unpacks them in one call. */
    public static byte[] littleEndian(long[] values) {
        ByteBuffer out = ByteBuffer.allocate(8 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        out.asLongBuffer().put(values);
        return out.array();
    }

    /** The values of {@link #littleEndian}'s bytes. */
    public static long[] fromLittleEndian(byte[] data) {
        long[] values = new long[data.length / 8];
        ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(values);
        return values;
    }
}
