package org.pycrawler.bridge;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.TreeMap;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The block merge of DrumRepository against a TreeMap model. */
public class DrumRepositoryTest {
    private static final byte C = DrumRepository.CHECK;
    private static final byte U = DrumRepository.UPDATE;
    private static final byte CU = DrumRepository.CHECK_UPDATE;
    private static final byte[] MARKER = "m".getBytes(StandardCharsets.US_ASCII);

    private File dir;
    private Environment env;
    private Database blocks;
    private Database meta;

    @Before
    public void open() throws Exception {
        dir = new File(System.getProperty("pycrawler.scratch", "target/java-test-envs"), "drum-" + System.nanoTime());
        dir.mkdirs();
        EnvironmentConfig ec = new EnvironmentConfig();
        ec.setAllowCreate(true);
        ec.setTransactional(true);
        env = new Environment(dir, ec);
        DatabaseConfig dc = new DatabaseConfig();
        dc.setAllowCreate(true);
        dc.setTransactional(true);
        blocks = env.openDatabase(null, "blocks", dc);
        meta = env.openDatabase(null, "meta", dc);
    }

    @After
    public void close() throws Exception {
        blocks.close();
        meta.close();
        env.close();
    }

    @Test
    public void operationsOnOneKeyFollowArrivalOrder() throws Exception {
        DrumRepository repo = new DrumRepository(env, blocks, meta, 1, 4);
        long[] keys = {7, 7, 7, 7, 3};
        byte[] ops = {C, U, C, CU, CU};
        byte[] vals = "xab".getBytes(StandardCharsets.US_ASCII);
        int[] voff = {0, 1, 2, 2, 3, 3};
        DrumRepository.Result r = repo.merge(keys, ops, C, vals, voff, true, MARKER, new byte[] {1});
        assertArrayEquals(new byte[] {0, 0, 1, 1, 0}, r.found);
        assertEquals(1, r.checkedValues.size()); // the check after the update sees its value
        assertEquals('a', r.checkedValues.data[0]);
        assertEquals(2, r.added);
        r = repo.merge(new long[] {7}, null, C, null, null, true, MARKER, new byte[] {2});
        assertArrayEquals(new byte[] {1}, r.found);
        assertEquals("b", new String(r.checkedValues.data, StandardCharsets.US_ASCII));
        assertArrayEquals(new byte[] {2}, repo.marker(MARKER));
    }

    @Test
    public void manyMergesMatchASortedMap() throws Exception {
        DrumRepository repo = new DrumRepository(env, blocks, meta, 1, 16);
        TreeMap<Long, Boolean> model = new TreeMap<>(Long::compareUnsigned);
        Random rnd = new Random(42);
        for (int round = 0; round < 30; round++) {
            int n = 1 + rnd.nextInt(300);
            long[] keys = new long[n];
            for (int i = 0; i < n; i++) {
                // Small key space for repeats; both signs to exercise unsigned order.
                keys[i] = (rnd.nextInt(2000) - 1000) * 0x9E3779B97F4A7C15L;
            }
            byte[] found = repo.merge(keys, null, CU, null, null, false, MARKER, new byte[0]).found;
            for (int i = 0; i < n; i++) {
                assertEquals("round " + round + " key " + i, model.containsKey(keys[i]) ? 1 : 0, found[i]);
                model.put(keys[i], true);
            }
        }
        assertEquals(model.size(), repo.count());
    }

    @Test
    public void wideKeysCompareWordByWord() throws Exception {
        DrumRepository repo = new DrumRepository(env, blocks, meta, 2, 2);
        long[] keys = {1, -1, 1, 0, -1, 5, 1, 0, 0, 9};
        byte[] found = repo.merge(keys, null, CU, null, null, false, MARKER, new byte[0]).found;
        assertArrayEquals(new byte[] {0, 0, 0, 1, 0}, found);
        assertEquals(4, repo.count());
    }

    @Test
    public void stableSortKeepsArrivalOrderOfEqualKeys() {
        long[] keys = {5, -2, 5, 0, -2, 5};
        int[] order = KeyOrder.sort(keys, 1, keys.length);
        assertArrayEquals(new int[] {3, 0, 2, 5, 1, 4}, order);
    }

    @Test
    public void sortedKeysAreInUnsignedOrderAndEqualKeysKeepArrivalOrder() {
        Random rnd = new Random(7);
        for (int trial = 0; trial < 48; trial++) {
            // past 32,768 one-word keys the sort splits on the top digit first
            int n = trial < 32 ? rnd.nextInt(5000) : 30000 + rnd.nextInt(70000);
            int words = trial < 32 ? 1 + trial % 2 : 1;
            int kind = (trial / 2) % 4;
            long top = rnd.nextLong() & 0xFC00000000000000L; // a DRUM bucket's shared top bits
            long[] keys = new long[n * words];
            for (int i = 0; i < keys.length; i++) {
                long spread = rnd.nextInt(1 + trial * 50) * 0x9E3779B97F4A7C15L >>> 6;
                // any bits; few distinct keys over all bits (repeats); few distinct small keys
                keys[i] = top | (kind == 0 ? rnd.nextLong() >>> 6 : kind == 1 ? spread : rnd.nextInt(1 + trial * 50));
            }
            Integer[] expected = new Integer[n];
            for (int i = 0; i < n; i++) {
                expected[i] = i;
            }
            final int w = words;
            java.util.Arrays.sort(expected, (a, b) -> {
                for (int x = 0; x < w; x++) {
                    int c = Long.compareUnsigned(keys[a * w + x], keys[b * w + x]);
                    if (c != 0) {
                        return c;
                    }
                }
                return Integer.compare(a, b);
            });
            long[] before = keys.clone();
            KeyOrder.Sorted sorted = KeyOrder.sorted(keys, words, n);
            assertArrayEquals("the input is left as it was", before, keys);
            for (int i = 0; i < n; i++) {
                assertEquals("trial " + trial + " position " + i, (int) expected[i], sorted.order[i]);
                for (int x = 0; x < words; x++) {
                    assertEquals(keys[expected[i] * words + x], sorted.keys[i * words + x]);
                }
            }
            assertArrayEquals(sorted.order, KeyOrder.sort(keys, words, n));
        }
    }
}
