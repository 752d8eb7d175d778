package org.pycrawler.bridge;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

/**
 * Decodes a batch of Heritrix 3 pending values (Kryo-encoded {@code CrawlURI}s) through
 * Heritrix's own {@code org.archive.bdb.KryoBinding}, found by reflection: pycrawler is not
 * built against Heritrix, and the classes are only there when the user puts their Heritrix
 * {@code lib/} on the class path. One call decodes a whole batch (no JNI crossing per record).
 *
 * <p>Each result is a line of tab-separated fields, in the order of {@link #FIELDS}; a field a
 * getter returned null for is empty, and tabs, newlines and backslashes in a field are escaped
 * as {@code \t}, {@code \n}, {@code \\}.
 */
public final class HeritrixKryo {
    /** The CrawlURI getters read, in the order of a result's fields. */
    public static final String[] FIELDS = {
        "toString", "getVia", "getPathFromSeed", "getClassKey", "getSchedulingDirective",
        "getPrecedence", "getOrdinal", "isSeed", "getFetchStatus", "getFetchAttempts",
    };

    private final Object binding;
    private final Method entryToObject;
    private final Method[] getters;

    private HeritrixKryo(Object binding, Method entryToObject, Method[] getters) {
        this.binding = binding;
        this.entryToObject = entryToObject;
        this.getters = getters;
    }

    /** A decoder, or null when Heritrix's classes are not on the class path. */
    public static HeritrixKryo load() throws ReflectiveOperationException {
        Class<?> crawlUri;
        Class<?> bindingClass;
        try {
            crawlUri = Class.forName("org.archive.modules.CrawlURI");
            bindingClass = Class.forName("org.archive.bdb.KryoBinding");
        } catch (ClassNotFoundException e) {
            return null;
        }
        Object binding = bindingClass.getConstructor(Class.class).newInstance(crawlUri);
        Method entryToObject = bindingClass.getMethod("entryToObject", com.sleepycat.je.DatabaseEntry.class);
        Method[] getters = new Method[FIELDS.length];
        for (int i = 0; i < FIELDS.length; i++) {
            getters[i] = crawlUri.getMethod(FIELDS[i]);
        }
        return new HeritrixKryo(binding, entryToObject, getters);
    }

    /** Decode every value of a packed batch; results are packed UTF-8 lines in the same order. */
    public Packed decode(byte[] data, int[] offsets) throws ReflectiveOperationException {
        Packed.Builder out = new Packed.Builder();
        StringBuilder line = new StringBuilder();
        for (int i = 0; i + 1 < offsets.length; i++) {
            byte[] value = new byte[offsets[i + 1] - offsets[i]];
            System.arraycopy(data, offsets[i], value, 0, value.length);
            Object curi = entryToObject.invoke(binding, new com.sleepycat.je.DatabaseEntry(value));
            line.setLength(0);
            for (int f = 0; f < getters.length; f++) {
                if (f > 0) {
                    line.append('\t');
                }
                Object field = getters[f].invoke(curi);
                if (field != null) {
                    escape(line, field.toString());
                }
            }
            byte[] bytes = line.toString().getBytes(StandardCharsets.UTF_8);
            out.add(bytes, 0, bytes.length);
        }
        return out.build();
    }

    private static void escape(StringBuilder to, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\t') {
                to.append("\\t");
            } else if (c == '\n') {
                to.append("\\n");
            } else if (c == '\\') {
                to.append("\\\\");
            } else {
                to.append(c);
            }
        }
    }
}
