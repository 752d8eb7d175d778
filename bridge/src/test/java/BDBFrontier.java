import com.sleepycat.bind.EntryBinding;
import com.sleepycat.bind.serial.SerialBinding;
import com.sleepycat.collections.StoredMap;
import com.sleepycat.je.DatabaseException;
import java.io.FileNotFoundException;
import java.util.Map.Entry;
import java.util.Set;

/**
 * The seed book's BDBFrontier (seeds/001, section 1.3.3): a StoredMap from
 * SerialBinding&lt;String&gt; (the URL) to SerialBinding&lt;CrawlUrl&gt;. Kept as printed,
 * including the print of the whole entry set on every getNext; only the book's demo main
 * (which writes to c:\bdb) and an unused helper are left out. Test-only.
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public class BDBFrontier extends AbstractFrontier implements Frontier {
    private StoredMap pendingUrisDB = null;

    public BDBFrontier(String homeDirectory) throws DatabaseException, FileNotFoundException {
        super(homeDirectory);
        EntryBinding keyBinding = new SerialBinding(javaCatalog, String.class);
        EntryBinding valueBinding = new SerialBinding(javaCatalog, CrawlUrl.class);
        pendingUrisDB = new StoredMap(database, keyBinding, valueBinding, true);
    }

    public CrawlUrl getNext() throws Exception {
        CrawlUrl result = null;
        if (!pendingUrisDB.isEmpty()) {
            Set entrys = pendingUrisDB.entrySet();
            System.out.println(entrys);
            Entry<String, CrawlUrl> entry = (Entry<String, CrawlUrl>) pendingUrisDB.entrySet().iterator().next();
            result = entry.getValue();
            delete(entry.getKey());
        }
        return result;
    }

    public boolean putUrl(CrawlUrl url) {
        put(url.getOriUrl(), url);
        return true;
    }

    protected void put(Object key, Object value) {
        pendingUrisDB.put(key, value);
    }

    protected Object get(Object key) {
        return pendingUrisDB.get(key);
    }

    protected Object delete(Object key) {
        return pendingUrisDB.remove(key);
    }
}
