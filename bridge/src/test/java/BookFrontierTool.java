import com.sleepycat.bind.tuple.TupleInput;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.pycrawler.bridge.CrawlUrlBinding;
import org.pycrawler.bridge.CrawlUrlJson;

/**
 * Drives the book's BDBFrontier from the command line, as a Java crawler of the book would.
 * Test-only.
 *
 * <pre>
 *   BookFrontierTool put DIR     stdin: one CrawlUrlBinding record per line, in hex;
 *                                each becomes a book CrawlUrl passed to putUrl
 *   BookFrontierTool pop DIR N   getNext up to N times; prints record&lt;TAB&gt;json per record
 * </pre>
 * The book's own prints (the environment it opens, the entry set on each getNext) also reach
 * stdout; only lines starting with {@code record<TAB>} are results.
 */
public final class BookFrontierTool {
    private BookFrontierTool() {}

    public static void main(String[] args) throws Exception {
        BDBFrontier frontier = new BDBFrontier(args[1]);
        try {
            if (args[0].equals("put")) {
                put(frontier);
            } else {
                pop(frontier, Integer.parseInt(args[2]));
            }
        } finally {
            frontier.close();
        }
    }

    private static void put(BDBFrontier frontier) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        CrawlUrlBinding binding = new CrawlUrlBinding();
        int count = 0;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (!line.isEmpty()) {
                frontier.putUrl(toBook(binding.entryToObject(new TupleInput(hex(line)))));
                count++;
            }
        }
        System.out.println("put\t" + count);
    }

    private static void pop(BDBFrontier frontier, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            CrawlUrl next = frontier.getNext();
            if (next == null) {
                break;
            }
            System.out.println("record\t" + CrawlUrlJson.toJson(next));
        }
    }

    private static CrawlUrl toBook(org.pycrawler.bridge.CrawlUrl c) {
        CrawlUrl b = new CrawlUrl();
        b.setOriUrl(c.getOriUrl());
        b.setUrl(c.getUrl());
        b.setUrlNo(c.getUrlNo());
        b.setStatusCode(c.getStatusCode());
        b.setHitNum(c.getHitNum());
        b.setCharSet(c.getCharSet());
        b.setAbstractText(c.getAbstractText());
        b.setAuthor(c.getAuthor());
        b.setWeight(c.getWeight());
        b.setDescription(c.getDescription());
        b.setFileSize(c.getFileSize());
        b.setLastUpdateTime(c.getLastUpdateTime());
        b.setTimeToLive(c.getTimeToLive());
        b.setTitle(c.getTitle());
        b.setType(c.getType());
        b.setUrlRefrences(c.getUrlRefrences());
        b.setLayer(c.getLayer());
        return b;
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
