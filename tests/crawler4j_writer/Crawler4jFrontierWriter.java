import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import edu.uci.ics.crawler4j.crawler.CrawlConfig;
import edu.uci.ics.crawler4j.frontier.DocIDServer;
import edu.uci.ics.crawler4j.frontier.Frontier;
import edu.uci.ics.crawler4j.url.WebURL;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Fills a crawler4j frontier folder the way CrawlController and WebCrawler do, from commands on stdin:
 *  S url parentUrl depth priority anchor (schedule), T n (hand n URLs out), P n (finish the next n handed out). */
public class Crawler4jFrontierWriter {
    public static void main(String[] args) throws Exception {
        File folder = new File(args[0]);
        boolean resumable = Boolean.parseBoolean(args[1]);
        folder.mkdirs();
        CrawlConfig config = new CrawlConfig();
        config.setCrawlStorageFolder(folder.getParent());
        config.setResumableCrawling(resumable);
        EnvironmentConfig envConfig = new EnvironmentConfig();
        envConfig.setAllowCreate(true);
        envConfig.setTransactional(resumable);
        envConfig.setLocking(resumable);
        Environment env = new Environment(folder, envConfig);
        DocIDServer docIds = new DocIDServer(env, config);
        Frontier frontier = newFrontier(env, config, docIds);
        List<WebURL> handedOut = new ArrayList<>();
        int finished = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("S")) {
                WebURL url = new WebURL();
                url.setURL(f[1]);
                url.setDocid(docIds.getNewDocID(f[1]));
                if (!f[2].isEmpty()) {
                    url.setParentUrl(f[2]);
                    url.setParentDocid(docIds.getDocId(f[2]));
                }
                url.setDepth(Short.parseShort(f[3]));
                url.setPriority(Byte.parseByte(f[4]));
                url.setAnchor(f[5].isEmpty() ? null : f[5]);
                frontier.schedule(url);
            } else if (f[0].equals("T")) {
                frontier.getNextURLs(Integer.parseInt(f[1]), handedOut);
            } else if (f[0].equals("P")) {
                for (WebURL url : handedOut.subList(finished, finished + Integer.parseInt(f[1]))) {
                    frontier.setProcessed(url);
                }
                finished += Integer.parseInt(f[1]);
            }
        }
        frontier.close();
        closeInProcessPages(frontier);
        docIds.close();
        env.close();
    }

    /** crawler4j 3.x's Frontier.close() leaves InProcessPagesDB open, and JE refuses to close an environment
     *  with an open database; 4.x closes it itself (a second close does nothing). */
    private static void closeInProcessPages(Frontier frontier) throws Exception {
        java.lang.reflect.Field field = Frontier.class.getDeclaredField("inProcessPages");
        field.setAccessible(true);
        Object pages = field.get(frontier);
        if (pages != null) {
            pages.getClass().getMethod("close").invoke(pages);
        }
    }

    /** crawler4j 3.x: Frontier(env, config, docIdServer); 4.x: Frontier(env, config). */
    private static Frontier newFrontier(Environment env, CrawlConfig config, DocIDServer docIds) throws Exception {
        Constructor<?> made = Frontier.class.getConstructors()[0];
        Object[] all = {env, config, docIds};
        Object[] given = new Object[made.getParameterCount()];
        System.arraycopy(all, 0, given, 0, given.length);
        return (Frontier) made.newInstance(given);
    }
}
