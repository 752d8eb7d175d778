import edu.uci.ics.crawler4j.crawler.CrawlConfig;
import edu.uci.ics.crawler4j.crawler.CrawlController;
import edu.uci.ics.crawler4j.crawler.Page;
import edu.uci.ics.crawler4j.crawler.WebCrawler;
import edu.uci.ics.crawler4j.fetcher.PageFetcher;
import edu.uci.ics.crawler4j.robotstxt.RobotstxtConfig;
import edu.uci.ics.crawler4j.robotstxt.RobotstxtServer;
import edu.uci.ics.crawler4j.url.WebURL;

/**
 * A crawler4j 4.4 crawl as its README sets one up: a WebCrawler subclass that stays on the
 * seed's host and a CrawlController, resumable crawling on, so that a crawl killed with -9
 * goes on from its frontier when started again in the same storage folder.
 *
 * <pre>java Crawler4jCrawl STORAGE_FOLDER POLITENESS_MS THREADS SEED</pre>
 *
 * Prints "visited\tURL" for each page crawler4j hands to visit() and "status\tCODE\tURL" for
 * every fetch it answers; "done" when the crawl ends by itself (its queue empty).
 *
 * <pre>java Crawler4jCrawl canonicalize &lt; URLS</pre>
 *
 * prints, for each URL read (one a line), "URL\tCANONICAL" as crawler4j's URLCanonicalizer
 * gives it ("null" where it drops the URL).
 */
public class Crawler4jCrawl {

    static volatile String origin;

    public static class SiteCrawler extends WebCrawler {
        @Override
        public boolean shouldVisit(Page referringPage, WebURL url) {
            return url.getURL().startsWith(origin);
        }

        @Override
        public void visit(Page page) {
            say("visited\t" + page.getWebURL().getURL());
        }

        @Override
        protected void handlePageStatusCode(WebURL url, int statusCode, String statusDescription) {
            say("status\t" + statusCode + "\t" + url.getURL());
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        // crawler4j logs through logback at DEBUG by default: warnings only, on stderr's side.
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
            .setLevel(ch.qos.logback.classic.Level.WARN);
        if (args[0].equals("canonicalize")) {
            java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
            java.io.PrintStream out = new java.io.PrintStream(System.out, false, "UTF-8");
            for (String url = in.readLine(); url != null; url = in.readLine()) {
                out.println(url + "\t" + edu.uci.ics.crawler4j.url.URLCanonicalizer.getCanonicalURL(url));
            }
            out.flush();
            return;
        }
        String seed = args[3];
        int slash = seed.indexOf('/', seed.indexOf("//") + 2);
        origin = slash < 0 ? seed : seed.substring(0, slash + 1);

        CrawlConfig config = new CrawlConfig();
        config.setCrawlStorageFolder(args[0]);
        config.setResumableCrawling(true);
        config.setPolitenessDelay(Integer.parseInt(args[1]));
        // Ends a second or three after the queue empties, not the default 30 s.
        config.setThreadMonitoringDelaySeconds(1);
        config.setThreadShutdownDelaySeconds(1);
        config.setCleanupDelaySeconds(1);

        PageFetcher fetcher = new PageFetcher(config);
        RobotstxtServer robots = new RobotstxtServer(new RobotstxtConfig(), fetcher);
        CrawlController controller = new CrawlController(config, fetcher, robots);
        controller.addSeed(seed);
        controller.start(SiteCrawler.class, Integer.parseInt(args[2]));
        say("done");
    }
}
