package org.pycrawler.bridge;

/**
 * The sorted order of fixed-width keys, stable: a least-significant-digit radix sort. Stability
 * is what DRUM needs (operations on one key keep their arrival order), and a radix sort of a
 * bucket is several times faster than a comparison sort of the same keys.
 *
 * <p>One-word keys, DRUM's common case, are sorted together with their arrival indices, so
 * that each pass reads both arrays in order instead of gathering keys through the permutation.
 * Only the bits in which the keys differ are sorted on (a DRUM bucket's keys share their top
 * bits), in digits of at most 8 bits. Past 32,768 keys, one pass on the top digit first splits
 * them into 256 ranges, each small enough to sort in a core's cache. Measured here on a DRUM
 * bucket of a million random keys: ~250 ns a key through the permutation, ~100 with eight
 * passes over the pairs, ~55 with the split. Wider keys are sorted through their permutation,
 * 16 bits a pass.
 */
final class KeyOrder {
    private static final int WIDE_DIGIT_BITS = 16;
    private static final int WIDE_RADIX = 1 << WIDE_DIGIT_BITS;
    private static final int DIGIT_BITS = 8;
    private static final int RADIX = 1 << DIGIT_BITS;
    /** Keys whose pair of arrays (12 bytes a key, twice) sorts within a core's 1 MiB cache. */
    private static final int CACHED_KEYS = 32768;

    private KeyOrder() {}

    /** The keys in sorted order ({@code words} longs each) and where each came from. */
    static final class Sorted {
        /** The keys, smallest first. */
        final long[] keys;
        /** order[i]: the arrival index of the i-th smallest key. */
        final int[] order;

        Sorted(long[] keys, int[] order) {
            this.keys = keys;
            this.order = order;
        }
    }

    /**
     * The permutation that sorts {@code n} keys of {@code words} longs each (compared unsigned,
     * most significant word first): key {@code order[0]} is the smallest.
     */
    static int[] sort(long[] keys, int words, int n) {
        return words == 1 ? sortOneWord(keys, n).order : sortWide(keys, words, n);
    }

    /** The keys sorted, with the permutation that sorts them; {@code keys} is left as it was. */
    static Sorted sorted(long[] keys, int words, int n) {
        if (words == 1) {
            return sortOneWord(keys, n);
        }
        int[] order = sortWide(keys, words, n);
        long[] out = new long[n * words];
        for (int i = 0; i < n; i++) {
            System.arraycopy(keys, order[i] * words, out, i * words, words);
        }
        return new Sorted(out, order);
    }

    private static Sorted sortOneWord(long[] keys, int n) {
        long differ = 0;
        for (int i = 0; i < n; i++) {
            differ |= keys[i] ^ keys[0];
        }
        int bits = 64 - Long.numberOfLeadingZeros(differ);
        long[] key = java.util.Arrays.copyOf(keys, n);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        long[] keySpare = new long[n];
        int[] orderSpare = new int[n];
        if (bits <= 2 * DIGIT_BITS || n <= CACHED_KEYS) {
            if (lsd(key, order, keySpare, orderSpare, 0, n, bits)) {
                return new Sorted(keySpare, orderSpare);
            }
            return new Sorted(key, order);
        }
        // One pass on the top digit splits the keys into ranges small enough for the caches,
        // then each range is sorted on the bits below it.
        int shift = bits - DIGIT_BITS;
        long base = key[0] >>> bits << bits; // the bits every key shares
        int[] start = new int[RADIX + 1];
        for (int i = 0; i < n; i++) {
            start[(int) ((key[i] ^ base) >>> shift) + 1]++;
        }
        for (int d = 0; d < RADIX; d++) {
            start[d + 1] += start[d];
        }
        int[] next = java.util.Arrays.copyOf(start, RADIX);
        for (int i = 0; i < n; i++) {
            long k = key[i];
            int at = next[(int) ((k ^ base) >>> shift)]++;
            keySpare[at] = k;
            orderSpare[at] = order[i];
        }
        for (int d = 0; d < RADIX; d++) {
            int from = start[d];
            int to = start[d + 1];
            if (to - from > 1 && lsd(keySpare, orderSpare, key, order, from, to, shift)) {
                System.arraycopy(key, from, keySpare, from, to - from);
                System.arraycopy(order, from, orderSpare, from, to - from);
            }
        }
        return new Sorted(keySpare, orderSpare);
    }

    /**
     * Sorts keys {@code from..to} (with their arrival indices) on their low {@code bits} bits,
     * in passes of at most {@link #DIGIT_BITS}, between the two pairs of arrays; true when the
     * result ended in the spare pair.
     */
    private static boolean lsd(long[] key, int[] order, long[] keySpare, int[] orderSpare, int from, int to,
            int bits) {
        if (bits == 0) {
            return false;
        }
        int passes = (bits + DIGIT_BITS - 1) / DIGIT_BITS;
        int width = (bits + passes - 1) / passes;
        int mask = (1 << width) - 1;
        int[][] counts = new int[passes][1 << width];
        for (int i = from; i < to; i++) {
            long k = key[i];
            for (int p = 0; p < passes; p++) {
                counts[p][(int) (k >>> (p * width)) & mask]++;
            }
        }
        boolean inSpare = false;
        for (int p = 0; p < passes; p++) {
            int[] next = counts[p];
            if (skippable(next, to - from)) {
                continue;
            }
            int at = from;
            for (int d = 0; d < next.length; d++) {
                int c = next[d];
                next[d] = at;
                at += c;
            }
            long[] keyFrom = inSpare ? keySpare : key;
            int[] orderFrom = inSpare ? orderSpare : order;
            long[] keyTo = inSpare ? key : keySpare;
            int[] orderTo = inSpare ? order : orderSpare;
            int shift = p * width;
            for (int i = from; i < to; i++) {
                long k = keyFrom[i];
                int dest = next[(int) (k >>> shift) & mask]++;
                keyTo[dest] = k;
                orderTo[dest] = orderFrom[i];
            }
            inSpare = !inSpare;
        }
        return inSpare;
    }

    private static boolean skippable(int[] count, int n) {
        for (int c : count) {
            if (c == n) {
                return true;
            }
            if (c != 0) {
                return false;
            }
        }
        return true;
    }

    private static int[] sortWide(long[] keys, int words, int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        int[] spare = new int[n];
        int[] count = new int[WIDE_RADIX + 1];
        for (int w = words - 1; w >= 0; w--) {
            for (int shift = 0; shift < 64; shift += WIDE_DIGIT_BITS) {
                java.util.Arrays.fill(count, 0);
                for (int i = 0; i < n; i++) {
                    count[wideDigit(keys[i * words + w], shift) + 1]++;
                }
                if (skippable(count, n)) {
                    continue; // every key has the same digit here (e.g. the bucket's top bits)
                }
                for (int d = 0; d < WIDE_RADIX; d++) {
                    count[d + 1] += count[d];
                }
                for (int i = 0; i < n; i++) {
                    int at = order[i];
                    spare[count[wideDigit(keys[at * words + w], shift)]++] = at;
                }
                int[] t = order;
                order = spare;
                spare = t;
            }
        }
        return order;
    }

    private static int wideDigit(long key, int shift) {
        return (int) (key >>> shift) & (WIDE_RADIX - 1);
    }
}
