import java.util.ArrayList;
import java.util.List;

import edu.uci.ics.crawler4j.crawler.CrawlConfig;
import edu.uci.ics.crawler4j.crawler.CrawlController;
import edu.uci.ics.crawler4j.crawler.Page;
import edu.uci.ics.crawler4j.crawler.WebCrawler;
import edu.uci.ics.crawler4j.fetcher.PageFetcher;
import edu.uci.ics.crawler4j.robotstxt.RobotstxtConfig;
import edu.uci.ics.crawler4j.robotstxt.RobotstxtServer;
import edu.uci.ics.crawler4j.url.WebURL;

/**
 * crawler4j 4.4 as scripts/bench/vs_crawlers.py runs it: a crawl of the seeds' hosts set up as
 * crawler4j's README sets one up (a WebCrawler subclass whose shouldVisit keeps the seeds'
 * hosts, a CrawlController), at crawler4j's defaults but for what a loopback benchmark needs:
 * no politeness delay unless given, no depth or page limit, and the end noticed a second after
 * the queue empties rather than 10 to 30 s later. Nothing is printed per page (the server
 * counts the fetches), so that the console is not part of what is measured.
 *
 * <pre>java Crawler4jBench STORAGE_FOLDER THREADS POLITENESS_MS SEED...</pre>
 *
 * Prints "done PAGES" (pages handed to visit()) when the crawl ends by itself.
 */
public class Crawler4jBench {

    static final List<String> origins = new ArrayList<>();
    static final java.util.concurrent.atomic.AtomicLong visited = new java.util.concurrent.atomic.AtomicLong();

    public static class SeedHostsCrawler extends WebCrawler {
        @Override
        public boolean shouldVisit(Page referringPage, WebURL url) {
            String href = url.getURL();
            for (String origin : origins) {
                if (href.startsWith(origin)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void visit(Page page) {
            visited.incrementAndGet();
        }
    }

    public static void main(String[] args) throws Exception {
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
            .setLevel(ch.qos.logback.classic.Level.WARN);
        CrawlConfig config = new CrawlConfig();
        config.setCrawlStorageFolder(args[0]);
        config.setPolitenessDelay(Integer.parseInt(args[2]));
        config.setMaxDepthOfCrawling(-1);
        config.setMaxPagesToFetch(-1);
        config.setThreadMonitoringDelaySeconds(1);
        config.setThreadShutdownDelaySeconds(1);
        config.setCleanupDelaySeconds(1);

        PageFetcher fetcher = new PageFetcher(config);
        RobotstxtServer robots = new RobotstxtServer(new RobotstxtConfig(), fetcher);
        CrawlController controller = new CrawlController(config, fetcher, robots);
        for (int i = 3; i < args.length; i++) {
            String seed = args[i];
            int slash = seed.indexOf('/', seed.indexOf("//") + 2);
            origins.add(slash < 0 ? seed + "/" : seed.substring(0, slash + 1));
            controller.addSeed(seed);
        }
        controller.start(SeedHostsCrawler.class, Integer.parseInt(args[1]));
        System.out.println("done " + visited.get());
    }
}
