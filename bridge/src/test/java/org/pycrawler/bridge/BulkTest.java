package org.pycrawler.bridge;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.Environment;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TestName;

/**
 * The contract of {@link Bulk}: batch writes and reads answer in the caller's order whatever
 * order they are applied in, equal keys in one batch resolve in the caller's order, scans
 * honour bounds and paging both ways, and a batch without a caller's transaction is all or
 * nothing.
 */
public class BulkTest {
    @Rule
    public final TestName testName = new TestName();

    private File home;
    private Environment env;
    private Database db;

    @Before
    public void openEnvironment() throws Exception {
        home = Scratch.folder(getClass(), testName.getMethodName());
        env = Scratch.open(home, true);
        db = openDatabase(env, "records", true);
    }

    @After
    public void closeEnvironment() throws Exception {
        if (db != null) {
            db.close();
        }
        if (env != null) {
            env.close();
        }
        Scratch.deleteTree(home.toPath());
    }

    private static Database openDatabase(Environment env, String name, boolean transactional)
            throws DatabaseException {
        DatabaseConfig config = new DatabaseConfig();
        config.setAllowCreate(true);
        config.setTransactional(transactional);
        return env.openDatabase(null, name, config);
    }

    // -- packing helpers -------------------------------------------------------------------

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    private static Packed pack(byte[]... records) {
        Packed.Builder builder = new Packed.Builder();
        for (byte[] r : records) {
            builder.add(r, 0, r.length);
        }
        return builder.build();
    }

    private static Packed pack(String... records) {
        return pack(Arrays.stream(records).map(BulkTest::b).toArray(byte[][]::new));
    }

    private static List<String> strings(Packed packed) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < packed.size(); i++) {
            out.add(new String(packed.data, packed.offsets[i], packed.length(i), UTF_8));
        }
        return out;
    }

    private int put(Transaction txn, Packed keys, Packed values) throws DatabaseException {
        return Bulk.put(db, txn, keys.data, keys.offsets, values.data, values.offsets);
    }

    private void putAll(String... keyValuePairs) throws DatabaseException {
        String[] keys = new String[keyValuePairs.length / 2];
        String[] values = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = keyValuePairs[2 * i];
            values[i] = keyValuePairs[2 * i + 1];
        }
        assertEquals(keys.length, put(null, pack(keys), pack(values)));
    }

    /** Values of {@code keys} looked up one at a time through JE itself; null where absent. */
    private List<String> lookup(String... keys) throws DatabaseException {
        List<String> out = new ArrayList<>();
        for (String k : keys) {
            DatabaseEntry value = new DatabaseEntry();
            boolean hit = db.get(null, new DatabaseEntry(b(k)), value, LockMode.DEFAULT) == OperationStatus.SUCCESS;
            out.add(hit ? new String(value.getData(), value.getOffset(), value.getSize(), UTF_8) : null);
        }
        return out;
    }

    private List<String> bulkGet(String... keys) throws DatabaseException {
        Packed packed = pack(keys);
        boolean[] found = new boolean[keys.length];
        List<String> values = strings(Bulk.get(db, null, packed.data, packed.offsets, found));
        for (int i = 0; i < keys.length; i++) {
            if (!found[i]) {
                assertEquals("an absent key comes back as an empty record", "", values.get(i));
                values.set(i, null);
            }
        }
        return values;
    }

    private List<String> scanKeys(String from, boolean inclusive, String stop, boolean reverse, int limit)
            throws DatabaseException {
        Packed[] page = Bulk.scan(db, null, from == null ? null : b(from), null, inclusive, stop == null ? null : b(stop),
                reverse, limit, Integer.MAX_VALUE, true);
        return strings(page[0]);
    }

    // -- writes and reads --------------------------------------------------------------------

    @Test
    public void putWritesEveryPairAndOverwrites() throws Exception {
        putAll("b", "1", "a", "2", "c", "3");
        putAll("a", "20");
        assertEquals(Arrays.asList("20", "1", "3", null), lookup("a", "b", "c", "d"));
        assertEquals(3, db.count());
    }

    @Test
    public void getAnswersInTheCallersOrderAndTellsAbsentFromEmpty() throws Exception {
        putAll("m", "middle", "a", "first", "z", "", "q", "queue");
        assertEquals(Arrays.asList("queue", null, "", "first", "middle", null), bulkGet("q", "x", "z", "a", "m", "b"));
    }

    @Test
    public void putNoOverwriteInsertsOnlyAbsentKeys() throws Exception {
        putAll("b", "old");
        Packed keys = pack("c", "b", "a");
        Packed values = pack("3", "2", "1");
        boolean[] inserted = Bulk.putNoOverwrite(db, null, keys.data, keys.offsets, values.data, values.offsets);
        assertArrayEquals(new boolean[] {true, false, true}, inserted);
        assertEquals(Arrays.asList("1", "old", "3"), lookup("a", "b", "c"));
    }

    @Test
    public void addKeysInsertsEmptyValuesAndReportsNewKeys() throws Exception {
        Packed first = pack("k2", "k1");
        assertArrayEquals(new boolean[] {true, true}, Bulk.addKeys(db, null, first.data, first.offsets));
        Packed second = pack("k3", "k1", "k2");
        assertArrayEquals(new boolean[] {true, false, false}, Bulk.addKeys(db, null, second.data, second.offsets));
        assertEquals(Arrays.asList("", "", ""), lookup("k1", "k2", "k3"));
    }

    @Test
    public void containsAnswersInTheCallersOrder() throws Exception {
        putAll("b", "x", "d", "y");
        Packed keys = pack("d", "a", "b", "c", "d");
        assertArrayEquals(new boolean[] {true, false, true, false, true},
                Bulk.contains(db, null, keys.data, keys.offsets));
    }

    @Test
    public void deleteRemovesPresentKeysAndReportsWhich() throws Exception {
        putAll("a", "1", "b", "2", "c", "3");
        Packed keys = pack("c", "x", "a");
        assertArrayEquals(new boolean[] {true, false, true}, Bulk.delete(db, null, keys.data, keys.offsets));
        assertEquals(Arrays.asList(null, "2", null), lookup("a", "b", "c"));
    }

    @Test
    public void deleteRangeRemovesFromInclusiveToStopExclusive() throws Exception {
        putAll("a", "", "b", "", "c", "", "d", "", "e", "");
        assertEquals(2, Bulk.deleteRange(db, null, b("b"), b("d")));
        assertEquals(Arrays.asList("a", "d", "e"), scanKeys(null, true, null, false, 100));
        assertEquals(1, Bulk.deleteRange(db, null, null, b("b")));
        assertEquals(2, Bulk.deleteRange(db, null, b("c"), null));
        assertEquals(0, db.count());
    }

    // -- equal keys within one batch -----------------------------------------------------------

    @Test
    public void equalKeysInOneBatchResolveInTheCallersOrder() throws Exception {
        assertEquals(4, put(null, pack("k", "j", "k", "k"), pack("first", "j", "second", "last")));
        assertEquals(Arrays.asList("last", "j"), lookup("k", "j"));

        Packed keys = pack("n", "m", "n");
        Packed values = pack("kept", "m", "dropped");
        assertArrayEquals("the first of several putNoOverwrite wins", new boolean[] {true, true, false},
                Bulk.putNoOverwrite(db, null, keys.data, keys.offsets, values.data, values.offsets));
        assertEquals(Arrays.asList("kept"), lookup("n"));

        Packed twice = pack("s", "s");
        assertArrayEquals(new boolean[] {true, false}, Bulk.addKeys(db, null, twice.data, twice.offsets));
        assertArrayEquals(new boolean[] {true, false}, Bulk.delete(db, null, twice.data, twice.offsets));
    }

    @Test
    public void keysOfDifferentLengthsSortAsJeComparesThem() throws Exception {
        // A shorter key sorts before its extensions; a zero byte is not padding.
        byte[][] keys = {b("ab"), {'a', 'b', 0}, b("a"), b(""), {(byte) 0xff}, b("abcdefghij"), b("abcdefghi"),
            b("abcdefgh")};
        Packed packed = pack(keys);
        Packed values = pack(Arrays.stream(keys).map(k -> Integer.toString(k.length)).toArray(String[]::new));
        boolean[] inserted = Bulk.putNoOverwrite(db, null, packed.data, packed.offsets, values.data, values.offsets);
        boolean[] all = new boolean[keys.length];
        Arrays.fill(all, true);
        assertArrayEquals(all, inserted);
        Packed[] scan = Bulk.scan(db, null, null, null, true, null, false, 100, Integer.MAX_VALUE, false);
        assertEquals(Arrays.asList("0", "1", "2", "3", "8", "9", "10", "1"), strings(scan[1]));
    }

    @Test
    public void largeRandomBatchAnswersLikeOneRecordAtATime() throws Exception {
        Random random = new Random(7);
        int n = 5000;
        byte[][] keys = new byte[n][];
        for (int i = 0; i < n; i++) {
            keys[i] = new byte[1 + random.nextInt(12)];
            random.nextBytes(keys[i]);
            keys[i][0] &= 0x0f; // a narrow first byte, so equal keys and shared prefixes occur
        }
        Packed packed = pack(keys);
        boolean[] inserted = Bulk.addKeys(db, null, packed.data, packed.offsets);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            assertEquals("record " + i, seen.add(Arrays.toString(keys[i])), inserted[i]);
        }
        assertEquals(seen.size(), db.count());
    }

    // -- scans ---------------------------------------------------------------------------------

    private void fillAlphabet() throws Exception {
        List<String> pairs = new ArrayList<>();
        for (char c = 'a'; c <= 'j'; c++) {
            pairs.add(String.valueOf(c));
            pairs.add(String.valueOf(c).toUpperCase());
        }
        putAll(pairs.toArray(new String[0]));
    }

    @Test
    public void scanForwardHonoursBoundsAndValues() throws Exception {
        fillAlphabet();
        Packed[] page = Bulk.scan(db, null, b("c"), null, true, b("f"), false, 100, Integer.MAX_VALUE, false);
        assertEquals(Arrays.asList("c", "d", "e"), strings(page[0]));
        assertEquals(Arrays.asList("C", "D", "E"), strings(page[1]));
        assertEquals(Arrays.asList("d", "e"), scanKeys("c", false, "f", false, 100));
        assertEquals(Arrays.asList("a", "b"), scanKeys(null, true, "c", false, 100));
        assertEquals(Arrays.asList("i", "j"), scanKeys("hh", true, null, false, 100));
    }

    @Test
    public void scanInReverseReadsTheSameRangeBackwards() throws Exception {
        fillAlphabet();
        assertEquals(Arrays.asList("e", "d", "c"), scanKeys("f", false, "c", true, 100));
        assertEquals(Arrays.asList("f", "e", "d", "c"), scanKeys("f", true, "c", true, 100));
        assertEquals(Arrays.asList("j", "i"), scanKeys(null, true, "i", true, 100));
        assertEquals("starts below a key that is absent", Arrays.asList("c", "b"), scanKeys("cc", false, "b", true, 100));
        assertEquals("starts at the last key when from is past the end", Arrays.asList("j"),
                scanKeys("zz", true, "j", true, 100));
    }

    @Test
    public void scanPagesResumeAfterTheLastKey() throws Exception {
        fillAlphabet();
        for (boolean reverse : new boolean[] {false, true}) {
            List<String> all = new ArrayList<>();
            String from = null;
            boolean inclusive = true;
            while (true) {
                List<String> page = scanKeys(from, inclusive, null, reverse, 3);
                assertTrue(page.size() <= 3);
                all.addAll(page);
                if (page.size() < 3) {
                    break;
                }
                from = page.get(page.size() - 1);
                inclusive = false;
            }
            List<String> expected = Arrays.asList("a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
            if (reverse) {
                expected = new ArrayList<>(expected);
                Collections.reverse(expected);
            }
            assertEquals(expected, all);
        }
    }

    @Test
    public void scanStopsNearMaxBytesAndKeysOnlyReadsNoValues() throws Exception {
        fillAlphabet();
        Packed[] small = Bulk.scan(db, null, null, null, true, null, false, 100, 4, false);
        assertEquals("stops once keys and values reach maxBytes", 2, small[0].size());
        Packed[] keysOnly = Bulk.scan(db, null, null, null, true, null, false, 100, Integer.MAX_VALUE, true);
        assertEquals(10, keysOnly[0].size());
        assertEquals(0, keysOnly[1].data.length);
        assertEquals(10, keysOnly[1].size());
    }

    // -- transactions ----------------------------------------------------------------------------

    @Test
    public void aBatchInTheCallersTransactionGoesWithIt() throws Exception {
        Transaction aborted = env.beginTransaction(null, null);
        put(aborted, pack("a", "b"), pack("1", "2"));
        Packed keys = pack("a", "c");
        assertArrayEquals("sees its own writes", new boolean[] {true, false},
                Bulk.contains(db, aborted, keys.data, keys.offsets));
        aborted.abort();
        assertEquals(0, db.count());

        Transaction committed = env.beginTransaction(null, null);
        put(committed, pack("a", "b"), pack("1", "2"));
        committed.commit();
        assertEquals(Arrays.asList("1", "2"), lookup("a", "b"));
    }

    @Test
    public void aFailingBatchWithinOneCommitWritesNothing() throws Exception {
        putAll("existing", "1");
        Packed keys = pack("a", "b", "z");
        Packed tooFewValues = pack("1", "2");
        try {
            // Records apply in key order, so "a" and "b" are written before "z" fails.
            Bulk.put(db, null, keys.data, keys.offsets, tooFewValues.data, tooFewValues.offsets);
            fail("a batch with a value missing must fail");
        } catch (ArrayIndexOutOfBoundsException expected) {
            // the batch's own transaction was aborted
        }
        assertEquals(Arrays.asList(null, null, null, "1"), lookup("a", "b", "z", "existing"));
    }

    /** Keys 0..n-1 as 4-byte big-endian records, so their byte order is their numeric order. */
    private static Packed numbered(int n) {
        Packed.Builder builder = new Packed.Builder();
        for (int i = 0; i < n; i++) {
            builder.add(new byte[] {(byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i}, 0, 4);
        }
        return builder.build();
    }

    @Test
    public void aLongBatchWithoutATransactionCommitsInChunksInKeyOrder() throws Exception {
        int n = Bulk.COMMIT_EVERY + 10;
        Packed keys = numbered(n);
        Packed oneValueShort = numbered(n - 1);
        try {
            Bulk.put(db, null, keys.data, keys.offsets, oneValueShort.data, oneValueShort.offsets);
            fail("a batch with a value missing must fail");
        } catch (ArrayIndexOutOfBoundsException expected) {
            // the first COMMIT_EVERY records (in key order) were committed before the failure
        }
        assertEquals(Bulk.COMMIT_EVERY, db.count());
        Packed last = numbered(Bulk.COMMIT_EVERY + 1);
        boolean[] present = Bulk.contains(db, null, last.data, last.offsets);
        assertTrue(present[Bulk.COMMIT_EVERY - 1]);
        assertFalse(present[Bulk.COMMIT_EVERY]);
    }

    @Test
    public void aLongBatchInTheCallersTransactionIsAllOrNothing() throws Exception {
        Packed keys = numbered(Bulk.COMMIT_EVERY + 10);
        Transaction txn = env.beginTransaction(null, null);
        boolean[] inserted = Bulk.addKeys(db, txn, keys.data, keys.offsets);
        assertEquals(Bulk.COMMIT_EVERY + 10, inserted.length);
        txn.abort();
        assertEquals("no commit of its own happened inside the caller's transaction", 0, db.count());
    }

    @Test
    public void batchesWorkWithoutTransactions() throws Exception {
        db.close();
        env.close();
        File plain = new File(home, "plain");
        assertTrue(plain.mkdirs());
        env = Scratch.open(plain, false);
        db = openDatabase(env, "records", false);
        putAll("b", "2", "a", "1");
        Packed keys = pack("a", "x", "b");
        assertArrayEquals(new boolean[] {true, false, true}, Bulk.contains(db, null, keys.data, keys.offsets));
        assertEquals(Arrays.asList("1", null, "2"), bulkGet("a", "x", "b"));
        assertEquals(2, Bulk.deleteRange(db, null, null, null));
    }
}
