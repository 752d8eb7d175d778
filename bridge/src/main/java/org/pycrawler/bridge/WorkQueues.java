package org.pycrawler.bridge;

import com.sleepycat.je.CacheMode;
import com.sleepycat.je.Cursor;
import com.sleepycat.je.CursorConfig;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;

/**
 * The Java loops of the work-queue frontier (pycrawler.frontier.workqueues), one JNI crossing
 * per batch of queues.
 *
 * <p>All pending URLs live in one database in Heritrix's layout: a queue's records share the
 * prefix {@code classKey UTF-8 + 0x00}, so each queue is one contiguous key range; the record
 * whose key is the prefix itself, with an empty value, is the queue's cap and holds no URL.
 */
public final class WorkQueues {
    private WorkQueues() {}

    /** What {@link #census} found: one entry per queue, in key order. */
    public static final class Census {
        /** Each queue's prefix (class key + 0x00). */
        public final Packed prefixes;
        /** URL records per queue (caps not counted). */
        public final long[] counts;
        /** The largest 48-bit ordinal of any record; -1 when there is none. */
        public final long maxOrdinal;
        /**
         * The smallest 48-bit ordinal of any record (a frontier counting down starts below it);
         * -1 when there is none.
         */
        public final long minOrdinal;

        Census(Packed prefixes, long[] counts, long maxOrdinal, long minOrdinal) {
            this.prefixes = prefixes;
            this.counts = counts;
            this.maxOrdinal = maxOrdinal;
            this.minOrdinal = minOrdinal;
        }
    }

    /**
     * Reads, for each queue i, up to {@code limit} URL records of the queue whose prefix is
     * record i of {@code prefixes}, in key order, starting after record i of {@code after}
     * (an empty record: from the queue's start, its cap skipped). Nothing is locked or changed:
     * the frontier deletes a record only when its URL is finished. {@code counts[i]} is set to
     * how many records queue i got; keys and values come back packed, queue after queue.
     */
    public static Packed[] heads(Database db, byte[] prefixes, int[] poff, byte[] after, int[] aoff, int limit,
            int[] counts) throws DatabaseException {
        Packed.Builder keys = new Packed.Builder();
        Packed.Builder values = new Packed.Builder();
        Cursor cursor = db.openCursor(null, CursorConfig.READ_COMMITTED);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            for (int i = 0; i < poff.length - 1; i++) {
                int prefixStart = poff[i];
                int prefixLength = poff[i + 1] - prefixStart;
                int afterLength = aoff[i + 1] - aoff[i];
                boolean fromStart = afterLength == 0;
                byte[] start = fromStart
                        ? java.util.Arrays.copyOfRange(prefixes, prefixStart, prefixStart + prefixLength)
                        : java.util.Arrays.copyOfRange(after, aoff[i], aoff[i] + afterLength);
                k.setData(start);
                OperationStatus st = cursor.getSearchKeyRange(k, v, LockMode.DEFAULT);
                int got = 0;
                while (st == OperationStatus.SUCCESS && got < limit
                        && startsWith(k, prefixes, prefixStart, prefixLength)) {
                    boolean cap = k.getSize() == prefixLength;
                    boolean skipped = !fromStart && Bulk.compare(k.getData(), k.getOffset(), k.getSize(), start) == 0;
                    if (!cap && !skipped) {
                        keys.add(k.getData(), k.getOffset(), k.getSize());
                        values.add(v.getData(), v.getOffset(), v.getSize());
                        got++;
                    }
                    st = cursor.getNext(k, v, LockMode.DEFAULT);
                }
                counts[i] = got;
            }
        } finally {
            cursor.close();
        }
        return new Packed[] {keys.build(), values.build()};
    }

    /**
     * Writes a schedule batch (records at the tails of their queues, and the caps of new
     * queues) in {@code txn}, in key order. Each record's value leaves JE's cache as soon as it
     * is written ({@link CacheMode#EVICT_LN}): a URL is read again only when its queue's head
     * reaches it, so caching millions of waiting values would only make the evictor (and the
     * garbage collector, which scans JE's cache) work; what stays cached is the tree, whose
     * queue tails every batch touches. Returns how many records were written.
     */
    public static int enqueue(Database db, Transaction txn, byte[] keys, int[] koff, byte[] vals, int[] voff)
            throws DatabaseException {
        int[] order = BatchOrder.of(keys, koff);
        Cursor cursor = db.openCursor(txn, null);
        try {
            cursor.setCacheMode(CacheMode.EVICT_LN);
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            for (int i : order) {
                k.setData(keys, koff[i], koff[i + 1] - koff[i]);
                v.setData(vals, voff[i], voff[i + 1] - voff[i]);
                cursor.put(k, v);
            }
        } finally {
            cursor.close();
        }
        return order.length;
    }

    private static boolean startsWith(DatabaseEntry key, byte[] prefixes, int start, int length) {
        if (key.getSize() < length) {
            return false;
        }
        byte[] data = key.getData();
        int off = key.getOffset();
        for (int j = 0; j < length; j++) {
            if (data[off + j] != prefixes[start + j]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Walks every key once (values are not read) and counts the URL records of each queue:
     * how the frontier rebuilds its counters after a crash.
     */
    public static Census census(Database db) throws DatabaseException {
        Packed.Builder prefixes = new Packed.Builder();
        long[] counts = new long[64];
        int queues = 0;
        long maxOrdinal = -1;
        long minOrdinal = -1;
        byte[] current = null;
        Cursor cursor = db.openCursor(null, CursorConfig.READ_COMMITTED);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            v.setPartial(0, 0, true);
            OperationStatus st = cursor.getFirst(k, v, LockMode.DEFAULT);
            while (st == OperationStatus.SUCCESS) {
                byte[] data = k.getData();
                int off = k.getOffset();
                int size = k.getSize();
                int zero = 0;
                while (zero < size && data[off + zero] != 0) {
                    zero++;
                }
                int prefixLength = Math.min(size, zero + 1);
                if (current == null || Bulk.compare(data, off, prefixLength, current) != 0) {
                    current = java.util.Arrays.copyOfRange(data, off, off + prefixLength);
                    prefixes.add(current, 0, current.length);
                    if (queues == counts.length) {
                        counts = java.util.Arrays.copyOf(counts, queues * 2);
                    }
                    queues++;
                }
                if (size == prefixLength + 8) {
                    counts[queues - 1]++;
                    long ordinal = 0;
                    for (int j = prefixLength + 2; j < size; j++) {
                        ordinal = (ordinal << 8) | (data[off + j] & 0xff);
                    }
                    maxOrdinal = Math.max(maxOrdinal, ordinal);
                    minOrdinal = minOrdinal < 0 ? ordinal : Math.min(minOrdinal, ordinal);
                }
                st = cursor.getNext(k, v, LockMode.DEFAULT);
            }
        } finally {
            cursor.close();
        }
        return new Census(prefixes.build(), java.util.Arrays.copyOf(counts, queues), maxOrdinal, minOrdinal);
    }
}
