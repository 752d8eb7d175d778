package org.pycrawler.bridge;

import com.sleepycat.je.Cursor;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.Environment;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The persistent repository of DRUM (IRLbot's Disk Repository with Update Management): sorted
 * blocks of fixed-width keys and their values, one JE record per block, keyed by the block's
 * first key (big-endian, so JE's byte order is key order).
 *
 * <p>A key is {@code words} 64-bit words compared unsigned, most significant word first; a key
 * of k bytes is its bytes zero-padded to a multiple of 8, each 8 bytes read big-endian.
 *
 * <p>{@link #merge} takes one disk bucket's operations in arrival order, sorts them (a stable
 * radix sort, so operations on one key keep their order), walks the blocks that hold the
 * bucket's keys in key order, rewrites the blocks it changes, and commits those blocks with the
 * caller's merge marker in one JE transaction. Python crosses JNI once per bucket merge.
 *
 * <p>Block record value: {@code int count}, {@code byte hasValues}, {@code count * words} longs
 * (big-endian), and when {@code hasValues} is 1, {@code count} int value lengths followed by the
 * value bytes. A block covers the keys from its first key up to the next block's first key.
 */
public final class DrumRepository {
    public static final byte CHECK = 0;
    public static final byte UPDATE = 1;
    public static final byte CHECK_UPDATE = 2;

    private static final byte[] NO_VALUE = new byte[0];
    /** The meta record counting the repository's keys, written with every merge's marker. */
    private static final byte[] KEYS_KEY = {'k', 'e', 'y', 's'};

    private final Environment env;
    private final Database blocks;
    private final Database meta;
    private final int words;
    private final int blockKeys;
    private final long[] timings = new long[Timing.values().length];

    /** Where merges spend their time, cumulative since the repository was opened ({@link #timings}). */
    public enum Timing {
        /** nanoseconds sorting bucket operations into key order */
        SORT_NANOS,
        /** nanoseconds finding, reading and decoding the blocks a merge touches (JE searches and reads) */
        READ_NANOS,
        /** nanoseconds merging sorted operations into decoded blocks */
        MERGE_NANOS,
        /** nanoseconds encoding and putting changed blocks (JE writes) */
        WRITE_NANOS,
        /** nanoseconds committing merges that own their transaction */
        COMMIT_NANOS,
        /** blocks read */
        BLOCKS_READ,
        /** block records written */
        BLOCKS_WRITTEN,
        /** bytes of block records written */
        BYTES_WRITTEN
    }

    /**
     * @param blocks the block database (created by the caller, transactional)
     * @param meta where merge markers go, in the same transaction as the blocks they describe
     * @param blockKeys keys per block written; a rewritten block is split above twice this
     */
    public DrumRepository(Environment env, Database blocks, Database meta, int words, int blockKeys) {
        if (words < 1 || blockKeys < 1) {
            throw new IllegalArgumentException("words and blockKeys must be positive");
        }
        this.env = env;
        this.blocks = blocks;
        this.meta = meta;
        this.words = words;
        this.blockKeys = blockKeys;
    }

    /** What one merge found, in the arrival order of its operations. */
    public static final class Result {
        /** found[i] is 1 when key i was in the repository (or updated earlier in this merge) before operation i. */
        public final byte[] found;
        /** The stored values of the checks that found their key, in arrival order (empty when not asked for). */
        public final Packed checkedValues;
        /** Keys the merge added to the repository. */
        public final long added;

        Result(byte[] found, Packed checkedValues, long added) {
            this.found = found;
            this.checkedValues = checkedValues;
            this.added = added;
        }
    }

    /**
     * Merges one bucket's operations into the repository and commits, together with
     * {@code markerKey -> markerValue} in {@link #meta}, in one transaction.
     *
     * @param keys n * words longs, operation i's key at {@code [i * words, (i + 1) * words)}
     * @param ops operation codes per key, or null when every operation is {@code uniformOp}
     * @param vals packed values of the operations (checks ignore theirs), or null: all empty
     * @param wantValues whether to return the stored values of checks that found their key
     */
    public Result merge(long[] keys, byte[] ops, byte uniformOp, byte[] vals, int[] voff, boolean wantValues,
            byte[] markerKey, byte[] markerValue) throws DatabaseException {
        Transaction txn = env.beginTransaction(null, null);
        boolean ok = false;
        try {
            Result result = mergeIn(txn, keys, ops, uniformOp, vals, voff, wantValues, markerKey, markerValue);
            ok = true;
            return result;
        } finally {
            if (ok) {
                long start = System.nanoTime();
                txn.commit();
                timings[Timing.COMMIT_NANOS.ordinal()] += System.nanoTime() - start;
            } else {
                txn.abort();
            }
        }
    }

    /**
     * {@link #merge}, written in the caller's transaction {@code txn} of the repository's
     * environment and left to it to commit: the caller's own writes (what the merge's results
     * lead to) then commit atomically with the blocks and the marker.
     */
    public Result mergeIn(Transaction txn, long[] keys, byte[] ops, byte uniformOp, byte[] vals, int[] voff,
            boolean wantValues, byte[] markerKey, byte[] markerValue) throws DatabaseException {
        int n = keys.length / words;
        long start = System.nanoTime();
        KeyOrder.Sorted sorted = KeyOrder.sorted(keys, words, n);
        timings[Timing.SORT_NANOS.ordinal()] += System.nanoTime() - start;
        Merge m = new Merge(sorted, ops, uniformOp, vals, voff, wantValues, n);
        long before = storedKeys(txn);
        m.run(txn);
        meta.put(txn, new DatabaseEntry(markerKey), new DatabaseEntry(markerValue));
        meta.put(txn, new DatabaseEntry(KEYS_KEY), new DatabaseEntry(ByteBuffer.allocate(8).putLong(before + m.added).array()));
        return m.result();
    }

    /** Cumulative merge figures, indexed by {@link Timing}'s ordinals: one JNI call for all of them. */
    public long[] timings() {
        return timings.clone();
    }

    /** Reads the stored value of a merge marker (null when absent). */
    public byte[] marker(byte[] markerKey) throws DatabaseException {
        DatabaseEntry v = new DatabaseEntry();
        if (meta.get(null, new DatabaseEntry(markerKey), v, LockMode.DEFAULT) != OperationStatus.SUCCESS) {
            return null;
        }
        return Arrays.copyOfRange(v.getData(), v.getOffset(), v.getOffset() + v.getSize());
    }

    /**
     * Number of keys in the repository, from the count every merge keeps with its marker; a
     * repository written before merges kept it is counted once, block by block.
     */
    public long keys() throws DatabaseException {
        return storedKeys(null);
    }

    private long storedKeys(Transaction txn) throws DatabaseException {
        DatabaseEntry v = new DatabaseEntry();
        if (meta.get(txn, new DatabaseEntry(KEYS_KEY), v, LockMode.DEFAULT) != OperationStatus.SUCCESS) {
            return count();
        }
        return ByteBuffer.wrap(v.getData(), v.getOffset(), 8).getLong();
    }

    /** Number of keys in the repository (reads every block: for tests and statistics). */
    public long count() throws DatabaseException {
        long total = 0;
        Cursor c = blocks.openCursor(null, null);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            v.setPartial(0, 4, true);
            while (c.getNext(k, v, LockMode.READ_UNCOMMITTED) == OperationStatus.SUCCESS) {
                total += ByteBuffer.wrap(v.getData(), v.getOffset(), 4).getInt();
            }
        } finally {
            c.close();
        }
        return total;
    }

    /** The decoded contents of one block. */
    private final class Block {
        int count;
        long[] keys;
        byte[][] values; // null: every value empty

        Block(byte[] data, int off, int len) {
            ByteBuffer b = ByteBuffer.wrap(data, off, len);
            count = b.getInt();
            boolean hasValues = b.get() != 0;
            keys = new long[count * words];
            b.asLongBuffer().get(keys);
            b.position(b.position() + keys.length * 8);
            if (hasValues) {
                int[] lengths = new int[count];
                b.asIntBuffer().get(lengths);
                b.position(b.position() + count * 4);
                values = new byte[count][];
                for (int i = 0; i < count; i++) {
                    values[i] = new byte[lengths[i]];
                    b.get(values[i]);
                }
            }
        }

        Block() {
            keys = new long[0];
        }

        byte[] value(int i) {
            return values == null ? NO_VALUE : values[i];
        }
    }

    /**
     * Merged block contents under construction, written out as one or more block records. Sized
     * for the block and the operations merged into it, so it never grows; values are kept only
     * once one is not empty (a seen table stores none).
     */
    private final class Output {
        final long[] keys;
        byte[][] values; // null while every value so far is empty; a null entry is an empty value
        int count;

        Output(int capacity) {
            keys = new long[capacity * words];
        }

        void add(long[] src, int at, byte[] value) {
            if (words == 1) {
                keys[count] = src[at];
            } else {
                System.arraycopy(src, at, keys, count * words, words);
            }
            if (value.length > 0) {
                if (values == null) {
                    values = new byte[keys.length / words][];
                }
                values[count] = value;
            }
            count++;
        }

        /** Adds the block's keys from..to (and their values), in one copy. */
        void addRange(Block block, int from, int to) {
            System.arraycopy(block.keys, from * words, keys, count * words, (to - from) * words);
            if (block.values != null) {
                for (int i = from; i < to; i++) {
                    if (block.values[i].length > 0) {
                        if (values == null) {
                            values = new byte[keys.length / words][];
                        }
                        values[count + i - from] = block.values[i];
                    }
                }
            }
            count += to - from;
        }

        private int valueLength(int i) {
            return values == null || values[i] == null ? 0 : values[i].length;
        }

        /** Writes the records: one block up to twice blockKeys, else pieces of blockKeys. */
        void write(Transaction txn) throws DatabaseException {
            int pieces = count <= 2 * blockKeys ? 1 : (count + blockKeys - 1) / blockKeys;
            int per = (count + pieces - 1) / pieces;
            for (int from = 0; from < count; from += per) {
                int to = Math.min(count, from + per);
                byte[] record = encode(from, to);
                blocks.put(txn, new DatabaseEntry(keyBytes(keys, from * words)), new DatabaseEntry(record));
                timings[Timing.BLOCKS_WRITTEN.ordinal()]++;
                timings[Timing.BYTES_WRITTEN.ordinal()] += record.length;
            }
        }

        private byte[] encode(int from, int to) {
            int size = 5 + (to - from) * words * 8;
            boolean anyValue = false;
            int valueBytes = 0;
            for (int i = from; values != null && i < to; i++) {
                anyValue |= valueLength(i) > 0;
                valueBytes += valueLength(i);
            }
            if (anyValue) {
                size += (to - from) * 4 + valueBytes;
            }
            ByteBuffer b = ByteBuffer.allocate(size);
            b.putInt(to - from);
            b.put((byte) (anyValue ? 1 : 0));
            b.asLongBuffer().put(keys, from * words, (to - from) * words);
            b.position(b.position() + (to - from) * words * 8);
            if (anyValue) {
                for (int i = from; i < to; i++) {
                    b.putInt(valueLength(i));
                }
                for (int i = from; i < to; i++) {
                    if (valueLength(i) > 0) {
                        b.put(values[i]);
                    }
                }
            }
            return b.array();
        }
    }

    /**
     * One bucket's merge: the sorted operations walked against the blocks that hold their keys.
     * Operation r of the walk is the r-th smallest key ({@code sorted[r * words ...]}), which
     * arrived as operation {@code order[r]}.
     */
    private final class Merge {
        final long[] sorted;
        final int[] order;
        final byte[] ops;
        final byte uniformOp;
        final byte[] vals;
        final int[] voff;
        final boolean wantValues;
        final int n;
        final byte[] found; // by position in sorted order: written in order, put in arrival order at the end
        final byte[][] checked;
        long added;

        Merge(KeyOrder.Sorted keys, byte[] ops, byte uniformOp, byte[] vals, int[] voff, boolean wantValues, int n) {
            this.sorted = keys.keys;
            this.order = keys.order;
            this.ops = ops;
            this.uniformOp = uniformOp;
            this.vals = vals;
            this.voff = voff;
            this.wantValues = wantValues;
            this.n = n;
            this.found = new byte[n];
            this.checked = wantValues ? new byte[n][] : null;
        }

        byte op(int i) {
            return ops == null ? uniformOp : ops[i];
        }

        byte[] value(int i) {
            return vals == null ? NO_VALUE : Arrays.copyOfRange(vals, voff[i], voff[i + 1]);
        }

        void run(Transaction txn) throws DatabaseException {
            Cursor cursor = blocks.openCursor(txn, null);
            try {
                DatabaseEntry k = new DatabaseEntry();
                DatabaseEntry v = new DatabaseEntry();
                DatabaseEntry skip = new DatabaseEntry();
                skip.setPartial(0, 0, true);
                int r = 0;
                while (r < n) {
                    long readStart = System.nanoTime();
                    byte[] first = keyBytes(sorted, r * words);
                    // The block holding the key: the last block whose first key is <= it.
                    k.setData(first);
                    OperationStatus st = cursor.getSearchKeyRange(k, v, LockMode.RMW);
                    boolean exact = st == OperationStatus.SUCCESS && Bulk.compare(k.getData(), k.getOffset(), k.getSize(), first) == 0;
                    if (!exact) {
                        st = st == OperationStatus.SUCCESS ? cursor.getPrev(k, v, LockMode.RMW) : cursor.getLast(k, v, LockMode.RMW);
                    }
                    Block block;
                    long[] upper;
                    OperationStatus next;
                    if (st == OperationStatus.SUCCESS) {
                        block = new Block(v.getData(), v.getOffset(), v.getSize());
                        next = cursor.getNext(k, skip, LockMode.DEFAULT);
                    } else {
                        // Below every block (or the repository is empty): new blocks start here.
                        block = new Block();
                        next = cursor.getFirst(k, skip, LockMode.DEFAULT);
                    }
                    upper = next == OperationStatus.SUCCESS ? keyWords(k.getData(), k.getOffset()) : null;
                    long mergeStart = System.nanoTime();
                    timings[Timing.READ_NANOS.ordinal()] += mergeStart - readStart;
                    timings[Timing.BLOCKS_READ.ordinal()] += block.count > 0 ? 1 : 0;
                    int end = r;
                    while (end < n && (upper == null || compare(sorted, end * words, upper, 0) < 0)) {
                        end++;
                    }
                    Output out = new Output(block.count + end - r);
                    boolean changed = mergeBlock(block, r, end, out);
                    long writeStart = System.nanoTime();
                    timings[Timing.MERGE_NANOS.ordinal()] += writeStart - mergeStart;
                    if (changed) {
                        out.write(txn);
                        timings[Timing.WRITE_NANOS.ordinal()] += System.nanoTime() - writeStart;
                    }
                    r = end;
                }
            } finally {
                cursor.close();
            }
        }

        /** Merges operations r..end (sorted) into the block; true when the block changed. */
        boolean mergeBlock(Block block, int r, int end, Output out) {
            boolean changed = false;
            int b = 0;
            while (r < end) {
                int at = r * words;
                int below = b;
                while (b < block.count && compare(block.keys, b * words, sorted, at) < 0) {
                    b++;
                }
                out.addRange(block, below, b);
                boolean exists = b < block.count && compare(block.keys, b * words, sorted, at) == 0;
                byte[] stored = exists ? block.value(b) : null;
                boolean written = false;
                // Every operation on this key, in arrival order (the sort is stable).
                int run = r;
                while (run < end && compare(sorted, run * words, sorted, at) == 0) {
                    int j = order[run];
                    byte op = op(j);
                    found[run] = (byte) (exists ? 1 : 0);
                    if (op == CHECK) {
                        if (exists && wantValues) {
                            checked[run] = stored;
                        }
                    } else {
                        if (!exists) {
                            added++;
                        }
                        exists = true;
                        stored = value(j);
                        written = true;
                    }
                    run++;
                }
                if (exists) {
                    out.add(sorted, at, stored);
                    if (b < block.count && compare(block.keys, b * words, sorted, at) == 0) {
                        b++;
                    }
                }
                changed |= written;
                r = run;
            }
            out.addRange(block, b, block.count);
            return changed;
        }

        /** The outcomes in arrival order (one pass of independent writes, which the CPU overlaps). */
        Result result() {
            byte[] arrival = new byte[n];
            byte[][] checkedInArrival = wantValues ? new byte[n][] : null;
            for (int r = 0; r < n; r++) {
                arrival[order[r]] = found[r];
                if (wantValues) {
                    checkedInArrival[order[r]] = checked[r];
                }
            }
            Packed.Builder values = new Packed.Builder();
            if (wantValues) {
                for (int i = 0; i < n; i++) {
                    if (arrival[i] == 1 && op(i) == CHECK) {
                        values.add(checkedInArrival[i], 0, checkedInArrival[i].length);
                    }
                }
            }
            return new Result(arrival, values.build(), added);
        }
    }

    private int compare(long[] a, int at, long[] b, int bt) {
        if (words == 1) {
            return Long.compareUnsigned(a[at], b[bt]);
        }
        for (int w = 0; w < words; w++) {
            int c = Long.compareUnsigned(a[at + w], b[bt + w]);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private byte[] keyBytes(long[] src, int at) {
        ByteBuffer b = ByteBuffer.allocate(words * 8);
        b.asLongBuffer().put(src, at, words);
        return b.array();
    }

    private long[] keyWords(byte[] data, int off) {
        long[] out = new long[words];
        ByteBuffer.wrap(data, off, words * 8).asLongBuffer().get(out);
        return out;
    }
}
