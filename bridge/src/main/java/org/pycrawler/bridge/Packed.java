package org.pycrawler.bridge;

/**
 * Many variable-length byte strings in one array, so a batch crosses JNI as two objects
 * instead of one per record: record {@code i} is {@code data[offsets[i] .. offsets[i+1])}.
 */
public final class Packed {
    public final byte[] data;
    public final int[] offsets;

    public Packed(byte[] data, int[] offsets) {
        this.data = data;
        this.offsets = offsets;
    }

    public int size() {
        return offsets.length - 1;
    }

    public int length(int i) {
        return offsets[i + 1] - offsets[i];
    }

    /**
     * Several packed batches as one byte array, the form a batch takes over a socket (one
     * array per call, not one object per record): for each batch, its record count n
     * (big-endian int32), its n+1 offsets (int32 each), then its data.
     */
    public static byte[] frame(Packed... batches) {
        int size = 0;
        for (Packed p : batches) {
            size += 4 * (p.offsets.length + 1) + p.data.length;
        }
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(size);
        for (Packed p : batches) {
            out.putInt(p.size());
            for (int offset : p.offsets) {
                out.putInt(offset);
            }
            out.put(p.data);
        }
        return out.array();
    }

    /** The batches of a {@link #frame}, in order. */
    public static Packed[] unframe(byte[] frame, int batches) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(frame);
        Packed[] out = new Packed[batches];
        for (int b = 0; b < batches; b++) {
            int[] offsets = new int[in.getInt() + 1];
            for (int i = 0; i < offsets.length; i++) {
                offsets[i] = in.getInt();
            }
            byte[] data = new byte[offsets[offsets.length - 1]];
            in.get(data);
            out[b] = new Packed(data, offsets);
        }
        return out;
    }

    /** Builds a {@link Packed} record by record; grows like an ArrayList. */
    public static final class Builder {
        private byte[] data = new byte[1024];
        private int[] offsets = new int[65];
        private int count;
        private int used;

        /** Appends a record; {@code src} may be null when {@code len} is 0 (JE 7's zero-length partial reads). */
        public void add(byte[] src, int off, int len) {
            if (used + len > data.length) {
                data = java.util.Arrays.copyOf(data, Math.max(data.length * 2, used + len));
            }
            if (len > 0) {
                System.arraycopy(src, off, data, used, len);
            }
            used += len;
            if (count + 2 > offsets.length) {
                offsets = java.util.Arrays.copyOf(offsets, offsets.length * 2);
            }
            offsets[++count] = used;
        }

        /** Adds an empty record (used for "absent" slots, flagged separately). */
        public void addEmpty() {
            add(data, 0, 0);
        }

        public int count() {
            return count;
        }

        public int bytes() {
            return used;
        }

        public Packed build() {
            return new Packed(java.util.Arrays.copyOf(data, used), java.util.Arrays.copyOf(offsets, count + 1));
        }
    }
}
