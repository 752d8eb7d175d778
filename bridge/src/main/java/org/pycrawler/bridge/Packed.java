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
