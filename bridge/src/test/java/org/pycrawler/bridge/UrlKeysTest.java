package org.pycrawler.bridge;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * {@link UrlKeys} gives Heritrix's own keys and fingerprints (the vectors Heritrix computed, in
 * ../shared/vectors/heritrix-fp.tsv: createKey, std64, std24, std40 and the URL), and XXH64's
 * published values (those of the reference implementation, xxhash).
 */
public class UrlKeysTest {
    private static final Path VECTORS = Paths.get("..", "shared", "vectors", "heritrix-fp.tsv");

    private static int[] offsets(List<String> texts) {
        int[] offsets = new int[texts.size() + 1];
        for (int i = 0; i < texts.size(); i++) {
            offsets[i + 1] = offsets[i] + texts.get(i).length();
        }
        return offsets;
    }

    private static long[] column(List<String[]> rows, int i) {
        return rows.stream().mapToLong(row -> Long.parseUnsignedLong(row[i], 16)).toArray();
    }

    @Test
    public void heritrixKeysAndFingerprintsAreHeritrixsOwn() throws IOException {
        List<String[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(VECTORS, StandardCharsets.UTF_8)) {
            rows.add(line.split("\t", 5));
        }
        List<String> urls = new ArrayList<>();
        rows.forEach(row -> urls.add(row[4]));
        long[][] polynomials = {{0xD74307D3FD3382DBL, 64}, {0x8E375B8000000000L, 24}, {0x8643FFF621800000L, 40}};
        String joined = String.join("", urls);
        assertArrayEquals(column(rows, 0), UrlKeys.heritrixKeys(joined, offsets(urls)));
        for (int i = 0; i < polynomials.length; i++) {
            long[] fingerprints = UrlKeys.fingerprints(polynomials[i][0], (int) polynomials[i][1], joined, offsets(urls));
            assertArrayEquals(column(rows, i + 1), fingerprints);
        }
    }

    @Test
    public void xxh64IsTheReferenceHash() {
        String[] urls = {"abc", "http://example.com/", "http://127.0.0.1:8088/api/java.base/java/lang/String.html#length()"};
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        int[] offsets = new int[urls.length + 2];
        for (int i = 0; i < urls.length; i++) {
            byte[] bytes = urls[i].getBytes(StandardCharsets.UTF_8);
            data.write(bytes, 0, bytes.length);
            offsets[i + 1] = offsets[i] + bytes.length;
        }
        offsets[urls.length + 1] = offsets[urls.length];  // and the empty string
        long[] expected = {0x44BC2CF5AD770999L, 0xFDB57B2D0813B5B1L, 0xB8D17A4F92E67027L, 0xEF46DB3751D8E999L};
        assertArrayEquals(expected, UrlKeys.xxh64(data.toByteArray(), offsets));
    }

    @Test
    public void littleEndianBytesRoundTrip() {
        long[] values = {0, -1, Long.MIN_VALUE, 0x0102030405060708L};
        byte[] bytes = UrlKeys.littleEndian(values);
        assertEquals(8, bytes[8 * 3]);
        assertArrayEquals(values, UrlKeys.fromLittleEndian(bytes));
    }
}
