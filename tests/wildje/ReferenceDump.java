import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import com.sleepycat.je.util.DbDump;

import java.io.File;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * JE's own DbDump of every database of an environment, in one JVM: the reference that
 * pycrawler's {@code store dump --format dbdump} is held to, byte for byte.
 *
 * <p>Usage: {@code ReferenceDump HOME OUT}. Writes {@code OUT/N.bytevalue} and
 * {@code OUT/N.print} (DbDump without and with {@code -p}) for the N-th database, and prints
 * the database names, one a line, in UTF-8. Run it with the JE that reads the store, on a
 * copy (JE creates je.lck). When JE cannot open the environment, prints
 * {@code error<TAB>CLASS: MESSAGE} of the root cause and exits 3.
 */
public class ReferenceDump {
    public static void main(String[] args) throws Exception {
        String home = args[0];
        File out = new File(args[1]);
        PrintStream stdout = new PrintStream(System.out, true, "UTF-8");
        List<String> names;
        try {
            EnvironmentConfig config = new EnvironmentConfig();
            config.setReadOnly(true);
            Environment env = new Environment(new File(home), config);
            names = new ArrayList<String>(env.getDatabaseNames());
            env.close();
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            stdout.println("error\t" + root.getClass().getName() + ": " + root.getMessage());
            System.exit(3);
            return;
        }
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            DbDump.main(new String[] {"-h", home, "-s", name, "-f", new File(out, i + ".bytevalue").getPath()});
            DbDump.main(new String[] {"-h", home, "-s", name, "-f", new File(out, i + ".print").getPath(), "-p"});
            stdout.println(name);
        }
    }
}
