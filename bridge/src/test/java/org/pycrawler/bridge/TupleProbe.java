package org.pycrawler.bridge;

import com.sleepycat.bind.tuple.BigIntegerBinding;
import com.sleepycat.bind.tuple.BooleanBinding;
import com.sleepycat.bind.tuple.ByteBinding;
import com.sleepycat.bind.tuple.CharacterBinding;
import com.sleepycat.bind.tuple.DoubleBinding;
import com.sleepycat.bind.tuple.FloatBinding;
import com.sleepycat.bind.tuple.IntegerBinding;
import com.sleepycat.bind.tuple.LongBinding;
import com.sleepycat.bind.tuple.ShortBinding;
import com.sleepycat.bind.tuple.SortedDoubleBinding;
import com.sleepycat.bind.tuple.SortedFloatBinding;
import com.sleepycat.bind.tuple.StringBinding;
import com.sleepycat.bind.tuple.TupleBinding;
import com.sleepycat.bind.tuple.TupleInput;
import com.sleepycat.bind.tuple.TupleOutput;
import com.sleepycat.je.DatabaseEntry;
import java.math.BigInteger;

/**
 * Test-only: runs JE's own tuple bindings over whole batches, so the Python cross-checks of
 * {@code pycrawler.store.tuple} cross JNI once per batch.
 *
 * <p>Values travel in a neutral form: a kind name (the Python field kind: "long", "string",
 * "sorted_float"...), numbers as {@code long} (floats and doubles as their raw IEEE bits,
 * chars as their code unit, booleans as 0/1), and text (strings; big integers in decimal)
 * as UTF-16 code units with offsets, so lone surrogates cross intact.
 */
@SuppressWarnings({"unchecked", "rawtypes"})
public final class TupleProbe {
    private TupleProbe() {}

    /** A batch of values in the neutral form: numeric ones in order, textual ones in order. */
    public static final class Values {
        public final long[] numbers;
        public final char[] text;
        public final int[] textOffsets;

        Values(long[] numbers, int numberCount, StringBuilder text, int[] textOffsets, int textCount) {
            this.numbers = java.util.Arrays.copyOf(numbers, numberCount);
            this.text = text.toString().toCharArray();
            this.textOffsets = java.util.Arrays.copyOf(textOffsets, textCount + 1);
        }
    }

    private static boolean isText(String kind) {
        return kind.equals("string") || kind.equals("big_integer");
    }

    /** The JE binding class for a kind; null for packed ints, which JE 3.3 has no binding for. */
    private static TupleBinding bindingFor(String kind) {
        switch (kind) {
            case "string": return new StringBinding();
            case "long": return new LongBinding();
            case "int": return new IntegerBinding();
            case "short": return new ShortBinding();
            case "byte": return new ByteBinding();
            case "char": return new CharacterBinding();
            case "boolean": return new BooleanBinding();
            case "float": return new FloatBinding();
            case "double": return new DoubleBinding();
            case "sorted_float": return new SortedFloatBinding();
            case "sorted_double": return new SortedDoubleBinding();
            case "big_integer": return new BigIntegerBinding();
            default: return null;
        }
    }

    private static Object box(String kind, long number, String text) {
        switch (kind) {
            case "string": return text;
            case "big_integer": return new BigInteger(text);
            case "long": return number;
            case "int": return (int) number;
            case "short": return (short) number;
            case "byte": return (byte) number;
            case "char": return (char) number;
            case "boolean": return number != 0;
            case "float": case "sorted_float": return Float.intBitsToFloat((int) number);
            case "double": case "sorted_double": return Double.longBitsToDouble(number);
            default: throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    private static long unboxNumber(Object value) {
        if (value instanceof Float) {
            return Float.floatToRawIntBits((Float) value);
        }
        if (value instanceof Double) {
            return Double.doubleToRawLongBits((Double) value);
        }
        if (value instanceof Character) {
            return (Character) value;
        }
        if (value instanceof Boolean) {
            return ((Boolean) value) ? 1 : 0;
        }
        return ((Number) value).longValue();
    }

    /** Writes one field with the TupleOutput method of its kind. */
    private static void write(TupleOutput out, String kind, long number, String text) {
        switch (kind) {
            case "string": out.writeString(text); break;
            case "big_integer": out.writeBigInteger(new BigInteger(text)); break;
            case "long": out.writeLong(number); break;
            case "int": out.writeInt((int) number); break;
            case "short": out.writeShort((short) number); break;
            case "byte": out.writeByte((byte) number); break;
            case "char": out.writeChar((char) number); break;
            case "boolean": out.writeBoolean(number != 0); break;
            case "float": out.writeFloat(Float.intBitsToFloat((int) number)); break;
            case "double": out.writeDouble(Double.longBitsToDouble(number)); break;
            case "sorted_float": out.writeSortedFloat(Float.intBitsToFloat((int) number)); break;
            case "sorted_double": out.writeSortedDouble(Double.longBitsToDouble(number)); break;
            case "packed_int": out.writePackedInt((int) number); break;
            case "packed_long": out.writePackedLong(number); break;
            case "unsigned_byte": out.writeUnsignedByte((int) number); break;
            case "unsigned_short": out.writeUnsignedShort((int) number); break;
            case "unsigned_int": out.writeUnsignedInt(number); break;
            default: throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /** Reads one field with the TupleInput method of its kind, in the neutral form. */
    private static Object read(TupleInput in, String kind) {
        switch (kind) {
            case "string": return in.readString();
            case "big_integer": return in.readBigInteger().toString();
            case "long": return in.readLong();
            case "int": return in.readInt();
            case "short": return in.readShort();
            case "byte": return in.readByte();
            case "char": return in.readChar();
            case "boolean": return in.readBoolean();
            case "float": return in.readFloat();
            case "double": return in.readDouble();
            case "sorted_float": return in.readSortedFloat();
            case "sorted_double": return in.readSortedDouble();
            case "packed_int": return (long) in.readPackedInt();
            case "packed_long": return in.readPackedLong();
            case "unsigned_byte": return (long) in.readUnsignedByte();
            case "unsigned_short": return (long) in.readUnsignedShort();
            case "unsigned_int": return in.readUnsignedInt();
            default: throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    private static String textAt(char[] text, int[] textOffsets, int i) {
        return new String(text, textOffsets[i], textOffsets[i + 1] - textOffsets[i]);
    }

    /** Collects decoded values into the neutral form. */
    private static final class Collector {
        private long[] numbers = new long[64];
        private int numberCount;
        private final StringBuilder text = new StringBuilder();
        private int[] textOffsets = new int[65];
        private int textCount;

        void add(Object value) {
            if (value instanceof String) {
                text.append((String) value);
                if (textCount + 2 > textOffsets.length) {
                    textOffsets = java.util.Arrays.copyOf(textOffsets, textOffsets.length * 2);
                }
                textOffsets[++textCount] = text.length();
            } else {
                if (numberCount == numbers.length) {
                    numbers = java.util.Arrays.copyOf(numbers, numbers.length * 2);
                }
                numbers[numberCount++] = unboxNumber(value);
            }
        }

        Values build() {
            return new Values(numbers, numberCount, text, textOffsets, textCount);
        }
    }

    /** Encodes each value of one kind as a whole entry, with JE's binding class for the kind. */
    public static Packed encodeEach(String kind, long[] numbers, char[] text, int[] textOffsets) {
        TupleBinding binding = bindingFor(kind);
        int n = isText(kind) ? textOffsets.length - 1 : numbers.length;
        Packed.Builder packed = new Packed.Builder();
        DatabaseEntry entry = new DatabaseEntry();
        for (int i = 0; i < n; i++) {
            long number = isText(kind) ? 0 : numbers[i];
            String string = isText(kind) ? textAt(text, textOffsets, i) : null;
            if (binding == null) {
                TupleOutput out = new TupleOutput();
                write(out, kind, number, string);
                entry.setData(out.toByteArray());
            } else {
                binding.objectToEntry(box(kind, number, string), entry);
            }
            packed.add(entry.getData(), entry.getOffset(), entry.getSize());
        }
        return packed.build();
    }

    /** Decodes each entry as one value of one kind, with JE's binding class for the kind. */
    public static Values decodeEach(String kind, byte[] data, int[] offsets) {
        TupleBinding binding = bindingFor(kind);
        Collector values = new Collector();
        for (int i = 0; i + 1 < offsets.length; i++) {
            DatabaseEntry entry = new DatabaseEntry(data, offsets[i], offsets[i + 1] - offsets[i]);
            Object value = binding == null
                    ? read(new TupleInput(data, offsets[i], offsets[i + 1] - offsets[i]), kind)
                    : binding.entryToObject(entry);
            values.add(value instanceof BigInteger ? value.toString() : value);
        }
        return values.build();
    }

    /** One record of several fields through TupleOutput: numeric kinds take the next number,
     *  textual kinds the next text. */
    public static byte[] writeFields(String[] kinds, long[] numbers, char[] text, int[] textOffsets) {
        TupleOutput out = new TupleOutput();
        int nextNumber = 0;
        int nextText = 0;
        for (String kind : kinds) {
            if (isText(kind)) {
                write(out, kind, 0, textAt(text, textOffsets, nextText++));
            } else {
                write(out, kind, numbers[nextNumber++], null);
            }
        }
        return out.toByteArray();
    }

    /** Reads one record of several fields through TupleInput, in the neutral form. */
    public static Values readFields(String[] kinds, byte[] data) {
        TupleInput in = new TupleInput(data);
        Collector values = new Collector();
        for (String kind : kinds) {
            values.add(read(in, kind));
        }
        return values.build();
    }
}
