import com.sleepycat.bind.serial.SerialBinding;
import com.sleepycat.bind.serial.StoredClassCatalog;
import com.sleepycat.bind.tuple.LongBinding;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseConfig;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.archive.crawler.datamodel.CrawlURI;

/**
 * Writes crawl state in Heritrix 1.14's layout, as its BdbFrontier and BdbUriUniqFilter do,
 * and holds an environment open the way a running crawler does. Test-only.
 *
 * <pre>
 *   HeritrixStateTool write DIR   stdin, tab-separated lines:
 *       P classKey uri via pathFromSeed directive holderCost ordinal isSeed fetchAttempts
 *           a pending CrawlURI (via "-" for none), its queue's cap record made first
 *       S key   an alreadySeenUrl key (createKey as a signed decimal long)
 *   HeritrixStateTool hold DIR    opens DIR for writing, prints "holding", waits for stdin to close
 * </pre>
 * The environment is non-transactional, the class catalog is {@code classCatalog}, and
 * pending and alreadySeenUrl are deferred-write databases, all as Heritrix 1.14 makes them.
 */
public final class HeritrixStateTool {
    private HeritrixStateTool() {}

    public static void main(String[] args) throws Exception {
        EnvironmentConfig config = new EnvironmentConfig();
        config.setAllowCreate(true);
        Environment env = new Environment(new File(args[1]), config);
        try {
            if (args[0].equals("write")) {
                write(env);
            } else {
                System.out.println("holding");
                System.out.flush();
                while (System.in.read() >= 0) {
                    // wait for the test to close our stdin
                }
            }
        } finally {
            env.close();
        }
    }

    private static Database open(Environment env, String name, boolean deferredWrite) throws Exception {
        DatabaseConfig config = new DatabaseConfig();
        config.setAllowCreate(true);
        config.setDeferredWrite(deferredWrite);
        return env.openDatabase(null, name, config);
    }

    private static void write(Environment env) throws Exception {
        Database catalogDb = open(env, "classCatalog", false);
        StoredClassCatalog catalog = new StoredClassCatalog(catalogDb);
        Database pending = open(env, "pending", true);
        Database seen = open(env, "alreadySeenUrl", true);
        SerialBinding<CrawlURI> binding = new SerialBinding<CrawlURI>(catalog, CrawlURI.class);
        Set<String> capped = new HashSet<String>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int written = 0;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f[0].equals("S")) {
                DatabaseEntry key = new DatabaseEntry();
                LongBinding.longToEntry(Long.parseLong(f[1]), key);
                seen.put(null, key, new DatabaseEntry(new byte[0]));
            } else {
                CrawlURI curi = new CrawlURI(f[2], f[3].equals("-") ? null : f[3], f[4], f[1],
                        Integer.parseInt(f[5]), Boolean.parseBoolean(f[8]), null, Long.parseLong(f[7]),
                        Integer.parseInt(f[6]), Integer.parseInt(f[9]));
                if (capped.add(curi.getClassKey())) {
                    pending.put(null, new DatabaseEntry(originKey(curi.getClassKey())), new DatabaseEntry(new byte[0]));
                }
                DatabaseEntry value = new DatabaseEntry();
                binding.objectToEntry(curi, value);
                pending.put(null, insertKey(curi), value);
            }
            written++;
        }
        pending.sync();
        seen.sync();
        pending.close();
        seen.close();
        catalog.close();
        System.out.println("record\t" + written);
    }

    /** The queue's cap key: the class key's UTF-8 bytes and a zero byte. */
    private static byte[] originKey(String classKey) {
        byte[] name = classKey.getBytes(StandardCharsets.UTF_8);
        byte[] key = new byte[name.length + 1];
        System.arraycopy(name, 0, key, 0, name.length);
        return key;
    }

    /** Heritrix 1.14's insert key: origin key, then directive, holder cost and 48-bit ordinal. */
    private static DatabaseEntry insertKey(CrawlURI curi) {
        byte[] origin = originKey(curi.getClassKey());
        byte[] key = new byte[origin.length + 8];
        System.arraycopy(origin, 0, key, 0, origin.length);
        long tail = (curi.getOrdinal() & 0x0000FFFFFFFFFFFFL)
                | ((long) curi.getSchedulingDirective() << 56)
                | (((long) curi.getHolderCost() & 0xFFL) << 48);
        for (int i = 0; i < 8; i++) {
            key[origin.length + i] = (byte) (tail >>> (56 - 8 * i));
        }
        return new DatabaseEntry(key);
    }
}
