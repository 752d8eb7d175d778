package org.pycrawler.bridge;

import com.sleepycat.bind.EntryBinding;
import com.sleepycat.bind.tuple.LongBinding;
import com.sleepycat.bind.tuple.StringBinding;
import com.sleepycat.collections.StoredSortedMap;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import java.io.File;
import java.util.Map;

/**
 * Reads a pycrawler TODO database the way a Java program would: a StoredSortedMap with
 * StringBinding (key order) or LongBinding (FIFO order) keys and {@link CrawlUrlBinding}
 * values. Prints one line per record: {@code record<TAB>key<TAB>json}. Test-only.
 *
 * <p>Usage: {@code TodoReader DIR DATABASE string|long}
 */
public final class TodoReader {
    private TodoReader() {}

    public static void main(String[] args) throws Exception {
        EnvironmentConfig envConfig = new EnvironmentConfig();
        envConfig.setReadOnly(true);
        Environment env = new Environment(new File(args[0]), envConfig);
        DatabaseConfig dbConfig = new DatabaseConfig();
        dbConfig.setReadOnly(true);
        Database db = env.openDatabase(null, args[1], dbConfig);
        EntryBinding<?> keys = args[2].equals("long") ? new LongBinding() : new StringBinding();
        StoredSortedMap<?, CrawlUrl> map = new StoredSortedMap<>(db, keys, new CrawlUrlBinding(), false);
        StringBuilder out = new StringBuilder();
        for (Map.Entry<?, CrawlUrl> e : map.entrySet()) {
            out.append("record\t").append(e.getKey()).append('\t').append(CrawlUrlJson.toJson(e.getValue())).append('\n');
        }
        System.out.print(out);
        db.close();
        env.close();
    }
}
