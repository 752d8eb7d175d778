package org.pycrawler.bridge;

/**
 * The sorted order of fixed-width keys, stable: a least-significant-digit radix sort on 16-bit
 * digits. Stability is what DRUM needs (operations on one key keep their arrival order), and a
 * radix sort of a bucket is several times faster than a comparison sort of the same keys.
 */
final class KeyOrder {
    private static final int DIGIT_BITS = 16;
    private static final int RADIX = 1 << DIGIT_BITS;

    private KeyOrder() {}

    /**
     * The permutation that sorts {@code n} keys of {@code words} longs each (compared unsigned,
     * most significant word first): key {@code order[0]} is the smallest.
     */
    static int[] sort(long[] keys, int words, int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        int[] spare = new int[n];
        int[] count = new int[RADIX + 1];
        for (int w = words - 1; w >= 0; w--) {
            for (int shift = 0; shift < 64; shift += DIGIT_BITS) {
                java.util.Arrays.fill(count, 0);
                for (int i = 0; i < n; i++) {
                    count[digit(keys[i * words + w], shift) + 1]++;
                }
                if (skippable(count, n)) {
                    continue; // every key has the same digit here (e.g. the bucket's top bits)
                }
                for (int d = 0; d < RADIX; d++) {
                    count[d + 1] += count[d];
                }
                for (int i = 0; i < n; i++) {
                    int at = order[i];
                    spare[count[digit(keys[at * words + w], shift)]++] = at;
                }
                int[] t = order;
                order = spare;
                spare = t;
            }
        }
        return order;
    }

    private static int digit(long key, int shift) {
        return (int) (key >>> shift) & (RADIX - 1);
    }

    private static boolean skippable(int[] count, int n) {
        for (int d = 1; d <= RADIX; d++) {
            if (count[d] == n) {
                return true;
            }
            if (count[d] != 0) {
                return false;
            }
        }
        return true;
    }
}
