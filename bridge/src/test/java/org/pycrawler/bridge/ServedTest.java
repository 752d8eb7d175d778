package org.pycrawler.bridge;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.Environment;
import java.io.File;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.After;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TestName;

/**
 * The contract of {@link Served}, the gateway's entry point: a batch crosses as one frame and
 * answers as one, and a transaction no client will end (its connection's thread is gone, or it
 * sat idle past the time-out) is aborted by the reaper, which releases its locks.
 */
public class ServedTest {
    private static final long IDLE_MILLIS = 300;

    @Rule
    public final TestName testName = new TestName();

    private File home;
    private Environment env;
    private Served served;

    /** Databases configured as pycrawler's Python side configures them (duplicates -1: none here). */
    private static DatabaseConfig config(boolean create, boolean readOnly, boolean transactional, int duplicates,
            boolean keyPrefixing) {
        DatabaseConfig config = new DatabaseConfig();
        config.setAllowCreate(create);
        config.setReadOnly(readOnly);
        config.setTransactional(transactional);
        config.setSortedDuplicates(duplicates > 0);
        config.setKeyPrefixing(keyPrefixing);
        return config;
    }

    private long serve(long idleMillis) throws Exception {
        home = Scratch.folder(getClass(), testName.getMethodName());
        env = Scratch.open(home, true);
        served = new Served(env, ServedTest::config, name -> false, idleMillis);
        return served.openDatabase("records", true, false, -1, false);
    }

    @After
    public void close() throws Exception {
        if (served != null) {
            served.close();
        }
        if (env != null) {
            env.close();
        }
        Scratch.deleteTree(home.toPath());
    }

    private static Packed pack(String... records) {
        Packed.Builder builder = new Packed.Builder();
        for (String record : records) {
            byte[] bytes = record.getBytes(UTF_8);
            builder.add(bytes, 0, bytes.length);
        }
        return builder.build();
    }

    private static List<String> strings(Packed packed) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < packed.size(); i++) {
            out.add(new String(packed.data, packed.offsets[i], packed.length(i), UTF_8));
        }
        return out;
    }

    private static Packed[] answer(String base64, int batches) {
        return Packed.unframe(Base64.getDecoder().decode(base64), batches);
    }

    /** The values of {@code keys} in {@code db} read without a transaction, "-" where absent. */
    private List<String> values(long db, String... keys) throws Exception {
        Packed[] got = answer(served.get(db, 0, Packed.frame(pack(keys))), 2);
        List<String> found = strings(got[0]);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            out.add(got[1].data[i] == 1 ? found.get(i) : "-");
        }
        return out;
    }

    private void assertGone(long txn) throws Exception {
        try {
            served.commit(txn);
            fail("transaction " + txn + " is still open");
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("is no longer open"));
        }
    }

    /** Polls until the reaper has taken {@code txn}, for at most {@code millis}. */
    private void awaitAborted(long txn, long millis) throws Exception {
        long deadline = System.currentTimeMillis() + millis;
        while (served.isOpen(txn)) {
            assertTrue("transaction " + txn + " was not aborted within " + millis + " ms",
                    System.currentTimeMillis() < deadline);
            Thread.sleep(20);
        }
    }

    @Test
    public void aBatchCrossesAsOneFrameAndAnswersInTheCallersOrder() throws Exception {
        long db = serve(60_000);
        assertEquals(3, served.put(db, 0, Packed.frame(pack("b", "c", "a"), pack("2", "3", "1"))));
        assertEquals(List.of("1", "-", "3"), values(db, "a", "x", "c"));
        assertArrayEquals(new byte[] {0, 1}, Base64.getDecoder().decode(
                served.putNoOverwrite(db, 0, Packed.frame(pack("a", "d"), pack("9", "4")))));
        Packed[] page = answer(served.scan(db, 0, null, null, true, null, false, 10, 1 << 20, false), 2);
        assertEquals(List.of("a", "b", "c", "d"), strings(page[0]));
        assertEquals(List.of("1", "2", "3", "4"), strings(page[1]));

        long txn = served.begin();
        served.put(db, txn, Packed.frame(pack("e"), pack("5")));
        assertEquals(List.of("5"), strings(answer(served.get(db, txn, Packed.frame(pack("e"))), 2)[0]));
        served.abort(txn);
        assertEquals(List.of("-"), values(db, "e"));
        assertGone(txn);
    }

    @Test
    public void anIdleTransactionIsAbortedAndItsLocksReleased() throws Exception {
        long db = serve(IDLE_MILLIS);
        long txn = served.begin();
        served.put(db, txn, Packed.frame(pack("k"), pack("held")));
        awaitAborted(txn, IDLE_MILLIS + 5_000);
        assertGone(txn);
        served.put(db, 0, Packed.frame(pack("k"), pack("free")));   // JE would time out on a held lock
        assertEquals(List.of("free"), values(db, "k"));
    }

    @Test
    public void aTransactionIsAbortedAtOnceWhenTheConnectionThatBeganItEnds() throws Exception {
        long db = serve(600_000);
        long[] txn = new long[1];
        Thread connection = new Thread(() -> {
            try {
                txn[0] = served.begin();
                served.put(db, txn[0], Packed.frame(pack("k"), pack("from a closed connection")));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        connection.start();
        connection.join();
        awaitAborted(txn[0], 5_000);   // far less than the 600 s time-out
        assertEquals(List.of("-"), values(db, "k"));
    }

    @Test
    public void aTransactionInUseIsLeftAlone() throws Exception {
        long idle = 1_000;   // ten times the pause between calls: a loaded machine's late wake-up stays below it
        long db = serve(idle);
        long txn = served.begin();
        long until = System.currentTimeMillis() + 3 * idle;
        for (int i = 0; System.currentTimeMillis() < until; i++) {   // never idle for the time-out
            served.put(db, txn, Packed.frame(pack("k" + i), pack("v")));
            Thread.sleep(idle / 10);
        }
        served.commit(txn);
        assertEquals(List.of("v"), values(db, "k0"));
    }
}
