package org.pycrawler.bridge;

import com.sleepycat.je.Cursor;
import com.sleepycat.je.CursorConfig;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;
import java.util.Arrays;

/**
 * Batch operations on a JE database, looping in Java so that Python crosses JNI once per
 * batch rather than once per record (the JVM boundary rule of the design).
 *
 * <p>Keys and values arrive packed ({@code byte[] data} + {@code int[] offsets} of n+1
 * entries). Results come back in the caller's order, but the records are applied in key order
 * (see {@link BatchOrder}: a stable sort, so among equal keys the caller's order still
 * decides: the first of several putNoOverwrite wins, the last of several put stays), through
 * one cursor for the whole batch.
 *
 * <p>Atomicity. With the caller's {@code txn}, a batch is part of that transaction: all or
 * nothing, as the caller commits or aborts. Without one (null) on a transactional database, a
 * batch commits every {@link #COMMIT_EVERY} records, in key order: each commit is atomic and
 * as durable as the environment's durability says, and a batch that fails part way raises with
 * its earlier commits in place. Why: one transaction holds a lock per record until it commits,
 * so a batch of millions would hold millions of locks (hundreds of MB of heap in JE 3.3, all of
 * it surviving young collections); in chunks, locks die young and a batch's memory is bounded
 * whatever its size. A caller that needs a big batch all or nothing passes a transaction.
 */
public final class Bulk {
    /** Records per commit of a batch that runs without the caller's transaction. */
    public static final int COMMIT_EVERY = 50_000;

    private Bulk() {}

    private interface RecordOp {
        /** Applies the operation to record i, whose key is in {@code key}; returns its result. */
        boolean apply(Transaction txn, Cursor cursor, int i, DatabaseEntry key) throws DatabaseException;
    }

    private interface Work<T> {
        T apply(Transaction txn) throws DatabaseException;
    }

    /** Runs {@code work} in {@code txn}, or in a transaction of its own when txn is null. */
    private static <T> T inTransaction(Database db, Transaction txn, Work<T> work) throws DatabaseException {
        if (txn != null || !db.getConfig().getTransactional()) {
            return work.apply(txn);
        }
        Transaction own = db.getEnvironment().beginTransaction(null, null);
        boolean ok = false;
        try {
            T result = work.apply(own);
            ok = true;
            return result;
        } finally {
            if (ok) {
                own.commit();
            } else {
                own.abort();
            }
        }
    }

    /**
     * Applies {@code op} to every record in key order, in the caller's transaction or, without
     * one, in transactions of its own of {@link #COMMIT_EVERY} records each; results in the
     * caller's order.
     */
    private static boolean[] run(Database db, Transaction txn, byte[] keys, int[] koff, RecordOp op)
            throws DatabaseException {
        int[] order = BatchOrder.of(keys, koff);
        boolean[] out = new boolean[order.length];
        int step = txn == null ? COMMIT_EVERY : Math.max(1, order.length);
        for (int start = 0; start < order.length; start += step) {
            int from = start;
            int to = Math.min(order.length, start + step);
            inTransaction(db, txn, t -> {
                Cursor cursor = db.openCursor(t, null);
                try {
                    DatabaseEntry key = new DatabaseEntry();
                    for (int j = from; j < to; j++) {
                        int i = order[j];
                        out[i] = op.apply(t, cursor, i, record(key, keys, koff, i));
                    }
                } finally {
                    cursor.close();
                }
                return null;
            });
        }
        return out;
    }

    private static DatabaseEntry record(DatabaseEntry entry, byte[] data, int[] offsets, int i) {
        entry.setData(data, offsets[i], offsets[i + 1] - offsets[i]);
        return entry;
    }

    /** An entry that reads no data: presence tests without copying values. */
    private static DatabaseEntry noData() {
        DatabaseEntry entry = new DatabaseEntry();
        entry.setPartial(0, 0, true);
        return entry;
    }

    /** Writes every pair, overwriting; returns how many were written. */
    public static int put(Database db, Transaction txn, byte[] keys, int[] koff, byte[] vals, int[] voff)
            throws DatabaseException {
        DatabaseEntry value = new DatabaseEntry();
        run(db, txn, keys, koff, (t, c, i, k) -> c.put(k, record(value, vals, voff, i)) == OperationStatus.SUCCESS);
        return koff.length - 1;
    }

    /** Writes each pair whose key is absent; result[i] is true where record i was inserted. */
    public static boolean[] putNoOverwrite(Database db, Transaction txn, byte[] keys, int[] koff, byte[] vals,
            int[] voff) throws DatabaseException {
        DatabaseEntry value = new DatabaseEntry();
        return run(db, txn, keys, koff,
                (t, c, i, k) -> c.putNoOverwrite(k, record(value, vals, voff, i)) == OperationStatus.SUCCESS);
    }

    /** Same as putNoOverwrite with every value empty: the shape of a URL-seen set. */
    public static boolean[] addKeys(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        DatabaseEntry empty = new DatabaseEntry(new byte[0]);
        return run(db, txn, keys, koff, (t, c, i, k) -> c.putNoOverwrite(k, empty) == OperationStatus.SUCCESS);
    }

    /** Whether each key is present. */
    public static boolean[] contains(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        DatabaseEntry none = noData();
        return run(db, txn, keys, koff, (t, c, i, k) -> c.getSearchKey(k, none, LockMode.DEFAULT) == OperationStatus.SUCCESS);
    }

    /**
     * Deletes each key (with a sorted-duplicates database, all its records, as
     * {@code Database.delete} does); result[i] is true where something was removed.
     */
    public static boolean[] delete(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        return run(db, txn, keys, koff, (t, c, i, k) -> db.delete(t, k) == OperationStatus.SUCCESS);
    }

    /**
     * Looks up each key. Returns the values packed in the caller's order, absent keys as empty
     * records; {@code found} (length n, filled in) tells an absent key from an empty value.
     */
    public static Packed get(Database db, Transaction txn, byte[] keys, int[] koff, boolean[] found)
            throws DatabaseException {
        byte[][] values = new byte[koff.length - 1][];
        DatabaseEntry value = new DatabaseEntry();
        boolean[] hit = run(db, txn, keys, koff, (t, c, i, k) -> {
            if (c.getSearchKey(k, value, LockMode.DEFAULT) != OperationStatus.SUCCESS) {
                return false;
            }
            values[i] = Arrays.copyOfRange(value.getData(), value.getOffset(), value.getOffset() + value.getSize());
            return true;
        });
        Packed.Builder out = new Packed.Builder();
        for (int i = 0; i < values.length; i++) {
            if (hit[i]) {
                out.add(values[i], 0, values[i].length);
            } else {
                out.addEmpty();
            }
        }
        System.arraycopy(hit, 0, found, 0, hit.length);
        return out.build();
    }

    /**
     * One page of an ordered scan. Starts at {@code from} (null = the first record, or the
     * last when {@code reverse}). Forward, it stops before {@code stop} (an exclusive upper
     * bound); in reverse, {@code stop} is the inclusive lower bound, so a range [a, b) reads
     * the same records both ways. Null = no bound. Returns at most {@code limit} records and about
     * {@code maxBytes} bytes. The caller resumes from the last key returned, skipping it; in a
     * database with sorted duplicates a key is not enough to say where a page ended, so the caller
     * passes the last record's value too ({@code fromValue}) and the scan resumes after that record.
     * Keys are compared as JE does by default: unsigned bytes, lexicographically.
     */
    public static Packed[] scan(Database db, Transaction txn, byte[] from, byte[] fromValue, boolean fromInclusive,
            byte[] stop, boolean reverse, int limit, int maxBytes, boolean keysOnly) throws DatabaseException {
        Packed.Builder keys = new Packed.Builder();
        Packed.Builder vals = new Packed.Builder();
        Cursor cursor = db.openCursor(txn, CursorConfig.READ_COMMITTED);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            if (keysOnly) {
                v.setPartial(0, 0, true);
            }
            OperationStatus st = fromValue == null
                    ? position(cursor, from, fromInclusive, reverse, k, v)
                    : resumeAfter(cursor, from, fromValue, reverse, k, v);
            while (st == OperationStatus.SUCCESS && keys.count() < limit && keys.bytes() + vals.bytes() < maxBytes) {
                if (stop != null) {
                    int c = compare(k.getData(), k.getOffset(), k.getSize(), stop);
                    if (reverse ? c < 0 : c >= 0) {
                        break;
                    }
                }
                keys.add(k.getData(), k.getOffset(), k.getSize());
                vals.add(v.getData(), v.getOffset(), v.getSize());
                st = reverse ? cursor.getPrev(k, v, LockMode.DEFAULT) : cursor.getNext(k, v, LockMode.DEFAULT);
            }
        } finally {
            cursor.close();
        }
        return new Packed[] {keys.build(), vals.build()};
    }

    private static OperationStatus position(Cursor cursor, byte[] from, boolean inclusive, boolean reverse,
            DatabaseEntry k, DatabaseEntry v) throws DatabaseException {
        if (from == null) {
            return reverse ? cursor.getLast(k, v, LockMode.DEFAULT) : cursor.getFirst(k, v, LockMode.DEFAULT);
        }
        k.setData(from);
        OperationStatus st = cursor.getSearchKeyRange(k, v, LockMode.DEFAULT);
        if (!reverse) {
            if (st == OperationStatus.SUCCESS && !inclusive && compare(k.getData(), k.getOffset(), k.getSize(), from) == 0) {
                st = cursor.getNext(k, v, LockMode.DEFAULT);
            }
            return st;
        }
        // Reverse: land on the greatest key <= from (< from when exclusive).
        if (st != OperationStatus.SUCCESS) {
            return cursor.getLast(k, v, LockMode.DEFAULT);
        }
        int c = compare(k.getData(), k.getOffset(), k.getSize(), from);
        if (c > 0 || (c == 0 && !inclusive)) {
            return cursor.getPrev(k, v, LockMode.DEFAULT);
        }
        return st;
    }

    /** Positions on the record just after (key, value) in scan order, in a sorted-duplicates database. */
    private static OperationStatus resumeAfter(Cursor cursor, byte[] key, byte[] value, boolean reverse,
            DatabaseEntry k, DatabaseEntry v) throws DatabaseException {
        k.setData(key);
        v.setData(value);
        OperationStatus st = cursor.getSearchBothRange(k, v, LockMode.DEFAULT);
        if (st == OperationStatus.SUCCESS) {
            // On the smallest record >= (key, value): its predecessor is < (key, value).
            if (reverse) {
                return cursor.getPrev(k, v, LockMode.DEFAULT);
            }
            boolean same = compare(v.getData(), v.getOffset(), v.getSize(), value) == 0;
            return same ? cursor.getNext(k, v, LockMode.DEFAULT) : st;
        }
        // Every duplicate of key is < value (or key is absent): continue past or before key.
        k.setData(key);
        st = cursor.getSearchKeyRange(k, v, LockMode.DEFAULT);
        if (st != OperationStatus.SUCCESS) {
            return reverse ? cursor.getLast(k, v, LockMode.DEFAULT) : st;
        }
        boolean atKey = compare(k.getData(), k.getOffset(), k.getSize(), key) == 0;
        if (!reverse) {
            return atKey ? cursor.getNextNoDup(k, v, LockMode.DEFAULT) : st;
        }
        if (!atKey) {
            return cursor.getPrev(k, v, LockMode.DEFAULT);
        }
        st = cursor.getNextNoDup(k, v, LockMode.DEFAULT);
        return st == OperationStatus.SUCCESS ? cursor.getPrev(k, v, LockMode.DEFAULT) : cursor.getLast(k, v, LockMode.DEFAULT);
    }

    static int compare(byte[] a, int off, int len, byte[] b) {
        int n = Math.min(len, b.length);
        for (int i = 0; i < n; i++) {
            int d = (a[off + i] & 0xff) - (b[i] & 0xff);
            if (d != 0) {
                return d;
            }
        }
        return len - b.length;
    }

    /**
     * The records of {@code db}, counted by a keys-only cursor walk, for a JE whose own
     * {@code Database.count()} cannot be trusted: JE 4.0.92's answers 0 for a crawler4j 3.5
     * frontier's PendingURLsDB whose 7,472 records its cursors (and its DbDump) all see.
     */
    public static long countByWalk(Database db) throws DatabaseException {
        long n = 0;
        Cursor cursor = db.openCursor(null, CursorConfig.READ_UNCOMMITTED);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            v.setPartial(0, 0, true);
            while (cursor.getNext(k, v, LockMode.READ_UNCOMMITTED) == OperationStatus.SUCCESS) {
                n++;
            }
        } finally {
            cursor.close();
        }
        return n;
    }

    /**
     * Removes every record with from <= key < stop (null = unbounded); returns how many. Runs
     * in one transaction (its own when {@code txn} is null): all or nothing.
     */
    public static long deleteRange(Database db, Transaction txn, byte[] from, byte[] stop) throws DatabaseException {
        return inTransaction(db, txn, t -> {
            long removed = 0;
            Cursor cursor = db.openCursor(t, null);
            try {
                DatabaseEntry k = new DatabaseEntry();
                DatabaseEntry v = noData();
                OperationStatus st = position(cursor, from, true, false, k, v);
                while (st == OperationStatus.SUCCESS) {
                    if (stop != null && compare(k.getData(), k.getOffset(), k.getSize(), stop) >= 0) {
                        break;
                    }
                    cursor.delete();
                    removed++;
                    st = cursor.getNext(k, v, LockMode.DEFAULT);
                }
            } finally {
                cursor.close();
            }
            return removed;
        });
    }
}
