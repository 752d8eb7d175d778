package org.pycrawler.bridge;

import java.lang.reflect.Field;
import java.math.BigInteger;
import java.sql.Timestamp;
import java.util.Date;

/**
 * One JSON object per CrawlUrl, with pycrawler's snake_case field names and units, so that
 * Python tests compare what a Java program read with what Python wrote. Works on both the
 * bridge's CrawlUrl and the book's default-package CrawlUrl (same field names), by reflection.
 *
 * <p>Units: {@code last_update_time} is nanoseconds since the epoch (a Timestamp's whole
 * precision), {@code time_to_live} milliseconds since the epoch (a Date's). Every character
 * outside printable ASCII is a {@code \\uXXXX} escape, one per UTF-16 unit.
 */
public final class CrawlUrlJson {
    private static final String[][] FIELDS = {
        {"oriUrl", "ori_url"}, {"url", "url"}, {"urlNo", "url_no"}, {"statusCode", "status_code"},
        {"hitNum", "hit_num"}, {"charSet", "char_set"}, {"abstractText", "abstract_text"},
        {"author", "author"}, {"weight", "weight"}, {"description", "description"},
        {"fileSize", "file_size"}, {"lastUpdateTime", "last_update_time"},
        {"timeToLive", "time_to_live"}, {"title", "title"}, {"type", "type"},
        {"urlRefrences", "url_references"}, {"layer", "layer"},
    };
    private static final BigInteger NANOS_PER_SECOND = BigInteger.valueOf(1_000_000_000L);

    private CrawlUrlJson() {}

    public static String toJson(Object crawlUrl) throws ReflectiveOperationException {
        StringBuilder out = new StringBuilder("{");
        for (String[] names : FIELDS) {
            Field field = crawlUrl.getClass().getDeclaredField(names[0]);
            field.setAccessible(true);
            if (out.length() > 1) {
                out.append(", ");
            }
            string(out, names[1]);
            out.append(": ");
            value(out, field.get(crawlUrl));
        }
        return out.append('}').toString();
    }

    private static void value(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String) {
            string(out, (String) v);
        } else if (v instanceof Timestamp) {
            Timestamp t = (Timestamp) v;
            BigInteger seconds = BigInteger.valueOf(Math.floorDiv(t.getTime(), 1000L));
            out.append(seconds.multiply(NANOS_PER_SECOND).add(BigInteger.valueOf(t.getNanos())));
        } else if (v instanceof Date) {
            out.append(((Date) v).getTime());
        } else if (v instanceof String[]) {
            out.append('[');
            String[] items = (String[]) v;
            for (int i = 0; i < items.length; i++) {
                out.append(i == 0 ? "" : ", ");
                value(out, items[i]);
            }
            out.append(']');
        } else {
            out.append(v);
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
