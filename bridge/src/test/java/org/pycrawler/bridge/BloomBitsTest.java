package org.pycrawler.bridge;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.Test;

/**
 * {@link BloomBits}: an add answers which keys were new and a check finds every key added, in
 * both formats; a filter mapped from its file sets as many bits as one in memory, keeps them
 * when mapped again read-only, and writes the header it is given. (tests/test_without_numpy.py holds the bytes to the numpy kernels'.)
 */
public class BloomBitsTest {
    private static final int HEADER = 64;

    private static long[] keys(int n, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[n];
        Arrays.setAll(keys, i -> random.nextLong());
        return keys;
    }

    private static void addsAndChecks(BloomBits bits, boolean blocked, long m, int k) {
        long[] keys = keys(2000, 1);
        boolean[] fresh = new boolean[keys.length];
        assertEquals(keys.length, bits.resolve(blocked, m, k, keys, true, fresh));
        boolean[] all = new boolean[keys.length];
        Arrays.fill(all, true);
        assertArrayEquals(all, fresh);
        assertEquals(0, bits.resolve(blocked, m, k, keys, true, fresh));
        assertArrayEquals(new boolean[keys.length], fresh);
        boolean[] present = new boolean[keys.length];
        bits.resolve(blocked, m, k, keys, false, present);
        assertArrayEquals(all, present);
        long[] others = keys(2000, 2);
        bits.resolve(blocked, m, k, others, false, present);
        int falsePositives = 0;
        for (boolean hit : present) {
            falsePositives += hit ? 1 : 0;
        }
        assertTrue("false positives: " + falsePositives, falsePositives < 100);
        assertTrue(bits.ones() > 0 && bits.ones() <= (long) keys.length * k);
    }

    @Test
    public void addsAnswerWhichKeysWereNewAndChecksFindThem() {
        long m = 64 * 512;
        addsAndChecks(BloomBits.zeroed(m / 8), true, m, 7);
        addsAndChecks(BloomBits.zeroed(m / 8), false, m, 7);
    }

    @Test
    public void aMappedFileKeepsTheBitsSetAndTheHeaderWritten() throws IOException {
        Path scratch = Files.createDirectories(java.nio.file.Paths.get(System.getProperty("pycrawler.scratch", "target")));
        for (boolean blocked : new boolean[] {true, false}) {
            long m = 32 * 512;
            Path file = Files.createTempFile(scratch, "bloom", ".bits");
            Files.write(file, new byte[HEADER + (int) m / 8]);
            BloomBits mapped = BloomBits.mapped(file.toString(), HEADER, false);
            BloomBits memory = BloomBits.zeroed(m / 8);
            long[] keys = keys(1000, 3);
            mapped.resolve(blocked, m, 6, keys, true, new boolean[keys.length]);
            memory.resolve(blocked, m, 6, keys, true, new boolean[keys.length]);
            byte[] header = new byte[HEADER];
            Arrays.fill(header, (byte) 7);
            mapped.writeHeader(header);
            mapped.sync();
            byte[] written = Files.readAllBytes(file);
            assertArrayEquals(header, Arrays.copyOf(written, HEADER));
            assertEquals(memory.ones(), mapped.ones());
            BloomBits reread = BloomBits.mapped(file.toString(), HEADER, true);
            boolean[] present = new boolean[keys.length];
            reread.resolve(blocked, m, 6, keys, false, present);
            assertFalse(Arrays.toString(present).contains("false"));
            Files.delete(file);
        }
    }
}
