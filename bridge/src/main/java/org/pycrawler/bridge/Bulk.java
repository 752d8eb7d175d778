package org.pycrawler.bridge;

import com.sleepycat.je.Cursor;
import com.sleepycat.je.CursorConfig;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;

/**
 * Batch operations on a JE database, looping in Java so that Python crosses JNI once per
 * batch rather than once per record (the JVM boundary rule of the design).
 *
 * <p>Keys and values arrive packed ({@code byte[] data} + {@code int[] offsets} of n+1
 * entries). When {@code txn} is null and the database is transactional, the batch runs in
 * one transaction of its own: one commit per batch, all or nothing.
 */
public final class Bulk {
    private Bulk() {}

    private interface RecordOp {
        /** Applies the operation to record i of the batch; returns its per-record result. */
        boolean apply(Transaction txn, int i, DatabaseEntry key, DatabaseEntry value) throws DatabaseException;
    }

    private static boolean[] run(Database db, Transaction txn, int n, RecordOp op) throws DatabaseException {
        boolean own = txn == null && db.getConfig().getTransactional();
        Transaction t = own ? db.getEnvironment().beginTransaction(null, null) : txn;
        boolean[] out = new boolean[n];
        boolean ok = false;
        try {
            DatabaseEntry key = new DatabaseEntry();
            DatabaseEntry value = new DatabaseEntry();
            for (int i = 0; i < n; i++) {
                out[i] = op.apply(t, i, key, value);
            }
            ok = true;
        } finally {
            if (own) {
                if (ok) {
                    t.commit();
                } else {
                    t.abort();
                }
            }
        }
        return out;
    }

    /** Writes every pair, overwriting; returns how many were written. */
    public static int put(Database db, Transaction txn, byte[] keys, int[] koff, byte[] vals, int[] voff)
            throws DatabaseException {
        run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            v.setData(vals, voff[i], voff[i + 1] - voff[i]);
            return db.put(t, k, v) == OperationStatus.SUCCESS;
        });
        return koff.length - 1;
    }

    /** Writes each pair whose key is absent; result[i] is true where record i was inserted. */
    public static boolean[] putNoOverwrite(Database db, Transaction txn, byte[] keys, int[] koff, byte[] vals,
            int[] voff) throws DatabaseException {
        return run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            v.setData(vals, voff[i], voff[i + 1] - voff[i]);
            return db.putNoOverwrite(t, k, v) == OperationStatus.SUCCESS;
        });
    }

    /** Same as putNoOverwrite with every value empty: the shape of a URL-seen set. */
    public static boolean[] addKeys(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        final byte[] empty = new byte[0];
        return run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            v.setData(empty);
            return db.putNoOverwrite(t, k, v) == OperationStatus.SUCCESS;
        });
    }

    /** Whether each key is present. */
    public static boolean[] contains(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        return run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            v.setPartial(0, 0, true);
            return db.get(t, k, v, LockMode.DEFAULT) == OperationStatus.SUCCESS;
        });
    }

    /** Deletes each key; result[i] is true where a record was removed. */
    public static boolean[] delete(Database db, Transaction txn, byte[] keys, int[] koff) throws DatabaseException {
        return run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            return db.delete(t, k) == OperationStatus.SUCCESS;
        });
    }

    /**
     * Looks up each key. Returns the values packed, absent keys as empty records; {@code found}
     * (length n, filled in) tells an absent key from an empty value.
     */
    public static Packed get(Database db, Transaction txn, byte[] keys, int[] koff, boolean[] found)
            throws DatabaseException {
        Packed.Builder out = new Packed.Builder();
        boolean[] hit = run(db, txn, koff.length - 1, (t, i, k, v) -> {
            k.setData(keys, koff[i], koff[i + 1] - koff[i]);
            boolean present = db.get(t, k, v, LockMode.DEFAULT) == OperationStatus.SUCCESS;
            if (present) {
                out.add(v.getData(), v.getOffset(), v.getSize());
            } else {
                out.addEmpty();
            }
            return present;
        });
        System.arraycopy(hit, 0, found, 0, hit.length);
        return out.build();
    }

    /**
     * One page of an ordered scan. Starts at {@code from} (null = the first record, or the
     * last when {@code reverse}). Forward, it stops before {@code stop} (an exclusive upper
     * bound); in reverse, {@code stop} is the inclusive lower bound, so a range [a, b) reads
     * the same records both ways. Null = no bound. Returns at most {@code limit} records and about
     * {@code maxBytes} bytes. The caller resumes from the last key returned, skipping it.
     * Keys are compared as JE does by default: unsigned bytes, lexicographically.
     */
    public static Packed[] scan(Database db, Transaction txn, byte[] from, boolean fromInclusive, byte[] stop,
            boolean reverse, int limit, int maxBytes, boolean keysOnly) throws DatabaseException {
        Packed.Builder keys = new Packed.Builder();
        Packed.Builder vals = new Packed.Builder();
        Cursor cursor = db.openCursor(txn, CursorConfig.READ_COMMITTED);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            if (keysOnly) {
                v.setPartial(0, 0, true);
            }
            OperationStatus st = position(cursor, from, fromInclusive, reverse, k, v);
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

    /** Removes every record with from <= key < stop (null = unbounded); returns how many. */
    public static long deleteRange(Database db, Transaction txn, byte[] from, byte[] stop) throws DatabaseException {
        long[] removed = {0};
        run(db, txn, 1, (t, i, k, v) -> {
            Cursor cursor = db.openCursor(t, null);
            try {
                v.setPartial(0, 0, true);
                OperationStatus st = position(cursor, from, true, false, k, v);
                while (st == OperationStatus.SUCCESS) {
                    if (stop != null && compare(k.getData(), k.getOffset(), k.getSize(), stop) >= 0) {
                        break;
                    }
                    cursor.delete();
                    removed[0]++;
                    st = cursor.getNext(k, v, LockMode.DEFAULT);
                }
            } finally {
                cursor.close();
            }
            return true;
        });
        return removed[0];
    }
}
