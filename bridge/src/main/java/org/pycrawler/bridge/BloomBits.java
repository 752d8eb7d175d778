package org.pycrawler.bridge;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * The bit array of pycrawler's Bloom filter ({@code pycrawler/seen/bloom.py}) and its probes,
 * a batch of keys a call, for Python runtimes without numpy (GraalPy): a port of {@code
 * pycrawler/seen/bloom_python.py}, whose module docstrings give the formats. Bit {@code i} is
 * bit {@code i & 7} of byte {@code i >> 3}, so the bytes are those of the filter's file
 * whichever path wrote them.
 *
 * <p>The bits are in memory ({@link #zeroed}) or a shared mapping of the filter's file
 * ({@link #mapped}), held in buffers of 1 GiB (a Java buffer has an int index); a 64-byte
 * block of the blocked format never straddles two.
 */
public final class BloomBits {
    private static final int CHUNK_BITS = 30;
    private static final long CHUNK_MASK = (1L << CHUNK_BITS) - 1;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final ByteBuffer[] chunks;
    private final ByteBuffer header;

    private BloomBits(ByteBuffer[] chunks, ByteBuffer header) {
        this.chunks = chunks;
        this.header = header;
    }

    private static int chunkCount(long size) {
        return (int) ((size + CHUNK_MASK) >>> CHUNK_BITS);
    }

    private static int chunkSize(long size, int chunk) {
        return (int) Math.min(1L << CHUNK_BITS, size - ((long) chunk << CHUNK_BITS));
    }

    /** {@code size} zero bytes in memory. */
    public static BloomBits zeroed(long size) {
        ByteBuffer[] chunks = new ByteBuffer[chunkCount(size)];
        for (int c = 0; c < chunks.length; c++) {
            chunks[c] = ByteBuffer.allocate(chunkSize(size, c));
        }
        return new BloomBits(chunks, null);
    }

    /** The file at {@code path} mapped whole: its first {@code offset} bytes the header, the rest the bits. */
    public static BloomBits mapped(String path, long offset, boolean readOnly) throws IOException {
        StandardOpenOption[] options = readOnly ? new StandardOpenOption[] {StandardOpenOption.READ}
            : new StandardOpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE};
        FileChannel.MapMode mode = readOnly ? FileChannel.MapMode.READ_ONLY : FileChannel.MapMode.READ_WRITE;
        try (FileChannel channel = FileChannel.open(Paths.get(path), options)) {
            long size = channel.size() - offset;
            ByteBuffer[] chunks = new ByteBuffer[chunkCount(size)];
            for (int c = 0; c < chunks.length; c++) {
                chunks[c] = channel.map(mode, offset + ((long) c << CHUNK_BITS), chunkSize(size, c));
            }
            return new BloomBits(chunks, channel.map(mode, 0, offset));  // a mapping outlives its channel
        }
    }

    /** Write {@code bytes} at the start of the mapped file. */
    public void writeHeader(byte[] bytes) {
        header.duplicate().put(bytes);
    }

    /** Write the mapped pages back to the file. */
    public void sync() {
        for (ByteBuffer chunk : chunks) {
            ((MappedByteBuffer) chunk).force();
        }
        ((MappedByteBuffer) header).force();
    }

    /** How many bits are set. */
    public long ones() {
        long count = 0;
        for (ByteBuffer chunk : chunks) {
            int i = 0;
            for (; i + 8 <= chunk.limit(); i += 8) {
                count += Long.bitCount(chunk.getLong(i));
            }
            for (; i < chunk.limit(); i++) {
                count += Integer.bitCount(chunk.get(i) & 0xFF);
            }
        }
        return count;
    }

    /** splitmix64's finaliser. */
    static long mix(long x) {
        x = (x ^ x >>> 30) * 0xBF58476D1CE4E5B9L;
        x = (x ^ x >>> 27) * 0x94D049BB133111EBL;
        return x ^ x >>> 31;
    }

    /** {@code g} onto [0, r): multiply-shift of its top 32 bits while r <= 2^32, else the remainder. */
    static long reduce(long g, long r) {
        return r <= 1L << 32 ? (g >>> 32) * r >>> 32 : Long.remainderUnsigned(g, r);
    }

    /** Whether bit {@code i} was clear; it is set afterwards when {@code set}. */
    private boolean clear(long i, boolean set) {
        ByteBuffer chunk = chunks[(int) (i >>> (CHUNK_BITS + 3))];
        int at = (int) ((i >>> 3) & CHUNK_MASK);
        byte old = chunk.get(at);
        int mask = 1 << (int) (i & 7);
        if ((old & mask) != 0) {
            return false;
        }
        if (set) {
            chunk.put(at, (byte) (old | mask));
        }
        return true;
    }

    /**
     * Check ({@code update} false: {@code out[r]} true where key r is present) or check and
     * add (true where it was absent) each key of a filter of {@code m} bits and {@code k}
     * probes, blocked (format 2) or classic (format 1). Returns how many keys were absent.
     */
    public int resolve(boolean blocked, long m, int k, long[] keys, boolean update, boolean[] out) {
        if (update && chunks.length > 0 && chunks[0].isReadOnly()) {
            throw new IllegalStateException("this Bloom filter is open read-only: nothing can be added");
        }
        int changed = 0;
        long blocks = m / 512;
        for (int r = 0; r < keys.length; r++) {
            long h1 = mix(keys[r] + GOLDEN);
            boolean missing = false;
            if (blocked) {
                long base = reduce(h1, blocks) * 512;
                long w = mix(h1);
                for (int i = 0; i < k; i++) {
                    if (i != 0 && i % 7 == 0) {
                        w = mix(w);
                    }
                    missing |= clear(base + (w & 511), update);
                    w >>>= 9;
                }
            } else {
                long g = h1;
                long step = mix(h1) | 1;
                for (int i = 0; i < k; i++) {
                    if (clear(reduce(g, m), update)) {
                        missing = true;
                        if (!update) {
                            break;
                        }
                    }
                    g += step;
                }
            }
            out[r] = update ? missing : !missing;
            changed += missing ? 1 : 0;
        }
        return changed;
    }
}
