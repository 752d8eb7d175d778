package org.pycrawler.bridge;

import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.Environment;
import com.sleepycat.je.Transaction;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One JE environment served to other processes: the entry point of pycrawler's py4j gateway.
 *
 * <p>Clients name databases and transactions by numbers (handles) this object hands out, and
 * every batch crosses the socket as one byte array ({@link Packed#frame}), handled here by
 * {@link Bulk} exactly as an in-process batch is. Answers to batches are frames too, as base64
 * text (see {@link #answer}); flags (which keys were inserted, found, removed) are one byte each.
 *
 * <p>A reaper thread aborts the transactions no client will end: at once (within
 * {@link #OWNER_CHECK_MILLIS}) those whose client's connection is gone, and those left idle for
 * longer than the time-out (a client that hangs). Either would otherwise hold its locks, and
 * every writer touching those records would wait on them, for as long as the server runs. A
 * transaction belongs to the connection that began it: py4j runs each connection's calls on a
 * thread of its own, which ends when the connection closes (the client closed, or the socket
 * dropped). The time-out is counted from the end of the transaction's last call, and no
 * transaction is aborted during a call, so a long batch is never cut short.
 */
public final class Served implements AutoCloseable {
    /** How often the reaper looks for transactions whose client's connection has closed. */
    static final long OWNER_CHECK_MILLIS = 100;

    private final Environment env;
    private final Configs configs;
    private final java.util.function.Predicate<String> keyPrefixing;
    private final long idleMillis;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Database> databases = new ConcurrentHashMap<>();
    private final Map<Long, Open> transactions = new ConcurrentHashMap<>();
    private final Thread reaper;

    /**
     * An open transaction, the thread of the connection that began it, its calls in progress,
     * and when the last one ended.
     */
    private static final class Open {
        final Transaction txn;
        final Thread owner = Thread.currentThread();
        int calls;
        long idleSince = System.currentTimeMillis();

        Open(Transaction txn) {
            this.txn = txn;
        }

        boolean abandoned(long now, long idleMillis) {
            return calls == 0 && (!owner.isAlive() || now - idleSince > idleMillis);
        }
    }

    /**
     * {@code keyPrefixing} says whether JE prefixes a database's keys as stored (its handles
     * report what their opener asked for; JE's internal API, which knows, differs between
     * releases, so the caller supplies it).
     */
    public Served(Environment env, Configs configs, java.util.function.Predicate<String> keyPrefixing,
            long idleMillis) {
        this.env = env;
        this.configs = configs;
        this.keyPrefixing = keyPrefixing;
        this.idleMillis = idleMillis;
        reaper = new Thread(this::reap, "pycrawler-gateway-reaper");
        reaper.setDaemon(true);
        reaper.start();
    }

    /**
     * Makes the configuration of a database opened the way pycrawler opens them (duplicates:
     * -1 = as created). Supplied by the caller: JE's setters changed their return type after
     * JE 3.3, so code compiled here cannot call them on every JE pycrawler loads.
     */
    public interface Configs {
        DatabaseConfig make(boolean create, boolean readOnly, boolean transactional, int duplicates,
                boolean keyPrefixing);
    }

    // -- the environment ----------------------------------------------------------------------
    public String home() throws DatabaseException {
        return env.getHome().getPath();
    }

    public boolean readOnly() throws DatabaseException {
        return env.getConfig().getReadOnly();
    }

    public boolean transactional() throws DatabaseException {
        return env.getConfig().getTransactional();
    }

    /** The names of the environment's databases, framed as one batch of UTF-8 strings. */
    public String databaseNames() throws DatabaseException {
        Packed.Builder names = new Packed.Builder();
        for (Object name : env.getDatabaseNames()) {
            byte[] utf8 = ((String) name).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            names.add(utf8, 0, utf8.length);
        }
        return answer(Packed.frame(names.build()));
    }

    /** Whether JE prefixes the keys of database {@code name}, as stored. */
    public boolean keyPrefixing(String name) {
        return keyPrefixing.test(name);
    }

    public void removeDatabase(String name) throws DatabaseException {
        env.removeDatabase(null, name);
    }

    public void sync() throws DatabaseException {
        env.sync();
    }

    // -- databases ------------------------------------------------------------------------------
    public long openDatabase(String name, boolean create, boolean readOnly, int duplicates, boolean keyPrefixing)
            throws DatabaseException {
        boolean txnal = env.getConfig().getTransactional();
        Database db = env.openDatabase(null, name, configs.make(create, readOnly, txnal, duplicates, keyPrefixing));
        long id = ids.incrementAndGet();
        databases.put(id, db);
        return id;
    }

    private Database db(long id) {
        Database db = databases.get(id);
        if (db == null) {
            throw new IllegalStateException("database handle " + id + " is closed");
        }
        return db;
    }

    public boolean sortedDuplicates(long db) throws DatabaseException {
        return db(db).getConfig().getSortedDuplicates();
    }

    public long count(long db) throws DatabaseException {
        return db(db).count();
    }

    public void closeDatabase(long db) throws DatabaseException {
        Database closing = databases.remove(db);
        if (closing != null) {
            closing.close();
        }
    }

    // -- transactions ---------------------------------------------------------------------------
    public long begin() throws DatabaseException {
        long id = ids.incrementAndGet();
        transactions.put(id, new Open(env.beginTransaction(null, null)));
        return id;
    }

    public void commit(long txn) throws DatabaseException {
        take(txn).txn.commit();
    }

    public void abort(long txn) throws DatabaseException {
        take(txn).txn.abort();
    }

    /** Whether {@code txn} is open: neither ended by its client nor aborted by the reaper. */
    boolean isOpen(long txn) {
        return transactions.containsKey(txn);
    }

    private Open take(long txn) {
        Open open = transactions.remove(txn);
        if (open == null) {
            throw gone(txn);
        }
        return open;
    }

    private IllegalStateException gone(long txn) {
        return new IllegalStateException("transaction " + txn + " is no longer open (ended, aborted when the "
                + "connection that began it closed, or aborted after " + idleMillis / 1000.0 + " s without a call)");
    }

    private interface Call<T> {
        T run(Transaction txn) throws DatabaseException;
    }

    /** Runs {@code call} in transaction {@code txn} (0: none), which the reaper leaves alone meanwhile. */
    private <T> T in(long txn, Call<T> call) throws DatabaseException {
        if (txn == 0) {
            return call.run(null);
        }
        Open open;
        synchronized (transactions) {
            open = transactions.get(txn);
            if (open == null) {
                throw gone(txn);
            }
            open.calls++;
        }
        try {
            return call.run(open.txn);
        } finally {
            synchronized (transactions) {
                open.calls--;
                open.idleSince = System.currentTimeMillis();
            }
        }
    }

    private void reap() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(Math.max(10, Math.min(OWNER_CHECK_MILLIS, idleMillis / 4)));
            } catch (InterruptedException e) {
                return;
            }
            List<Transaction> stale = new ArrayList<>();
            long now = System.currentTimeMillis();
            synchronized (transactions) {
                for (Iterator<Open> it = transactions.values().iterator(); it.hasNext();) {
                    Open open = it.next();
                    if (open.abandoned(now, idleMillis)) {
                        it.remove();
                        stale.add(open.txn);
                    }
                }
            }
            for (Transaction txn : stale) {
                try {
                    txn.abort();
                } catch (Exception e) {
                    // The environment is closing or failed; nothing is left to release.
                }
            }
        }
    }

    // -- batches: one frame each ------------------------------------------------------------------
    /**
     * An answer as base64 text: py4j hands a returned byte[] to Python through a loop over its
     * bytes in Python (several times slower than JE's work on the batch), a string through C.
     */
    private static String answer(byte[] data) {
        return java.util.Base64.getEncoder().encodeToString(data);
    }

    private static String flagAnswer(boolean[] values) {
        return answer(flags(values));
    }

    private static byte[] flags(boolean[] values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) (values[i] ? 1 : 0);
        }
        return out;
    }

    public int put(long db, long txn, byte[] frame) throws DatabaseException {
        Packed[] kv = Packed.unframe(frame, 2);
        return in(txn, t -> Bulk.put(db(db), t, kv[0].data, kv[0].offsets, kv[1].data, kv[1].offsets));
    }

    public String putNoOverwrite(long db, long txn, byte[] frame) throws DatabaseException {
        Packed[] kv = Packed.unframe(frame, 2);
        return flagAnswer(in(txn, t -> Bulk.putNoOverwrite(db(db), t, kv[0].data, kv[0].offsets, kv[1].data,
                kv[1].offsets)));
    }

    public String addKeys(long db, long txn, byte[] frame) throws DatabaseException {
        Packed k = Packed.unframe(frame, 1)[0];
        return flagAnswer(in(txn, t -> Bulk.addKeys(db(db), t, k.data, k.offsets)));
    }

    public String contains(long db, long txn, byte[] frame) throws DatabaseException {
        Packed k = Packed.unframe(frame, 1)[0];
        return flagAnswer(in(txn, t -> Bulk.contains(db(db), t, k.data, k.offsets)));
    }

    public String delete(long db, long txn, byte[] frame) throws DatabaseException {
        Packed k = Packed.unframe(frame, 1)[0];
        return flagAnswer(in(txn, t -> Bulk.delete(db(db), t, k.data, k.offsets)));
    }

    /** The values framed, then the found flags as one more record. */
    public String get(long db, long txn, byte[] frame) throws DatabaseException {
        Packed k = Packed.unframe(frame, 1)[0];
        boolean[] found = new boolean[k.size()];
        Packed values = in(txn, t -> Bulk.get(db(db), t, k.data, k.offsets, found));
        byte[] hits = flags(found);
        return answer(Packed.frame(values, new Packed(hits, new int[] {0, hits.length})));
    }

    public long deleteRange(long db, long txn, byte[] from, byte[] stop) throws DatabaseException {
        return in(txn, t -> Bulk.deleteRange(db(db), t, from, stop));
    }

    /** One page of {@link Bulk#scan}, keys and values framed. */
    public String scan(long db, long txn, byte[] from, byte[] fromValue, boolean fromInclusive, byte[] stop,
            boolean reverse, int limit, int maxBytes, boolean keysOnly) throws DatabaseException {
        return answer(Packed.frame(in(txn, t -> Bulk.scan(db(db), t, from, fromValue, fromInclusive, stop, reverse,
                limit, maxBytes, keysOnly))));
    }

    /**
     * {@link WorkQueues#census} of a served database, framed: the queue prefixes, then one
     * record of big-endian longs: each queue's count, the smallest ordinal, the largest.
     */
    public String census(long db) throws DatabaseException {
        WorkQueues.Census census = WorkQueues.census(db(db));
        java.nio.ByteBuffer numbers = java.nio.ByteBuffer.allocate(8 * (census.counts.length + 2));
        for (long count : census.counts) {
            numbers.putLong(count);
        }
        numbers.putLong(census.minOrdinal).putLong(census.maxOrdinal);
        return answer(Packed.frame(census.prefixes, new Packed(numbers.array(), new int[] {0, numbers.capacity()})));
    }

    /** The JE release serving the environment (JE's own version string). */
    public String jeVersion() {
        return Versions.je();
    }

    /** Aborts what clients left open and closes their databases; the environment stays open. */
    @Override
    public void close() throws DatabaseException {
        reaper.interrupt();
        synchronized (transactions) {
            for (Open open : transactions.values()) {
                open.txn.abort();
            }
            transactions.clear();
        }
        for (Database db : databases.values()) {
            db.close();
        }
        databases.clear();
    }
}
