package org.pycrawler.bridge;

import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.Environment;
import com.sleepycat.je.EnvironmentConfig;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Fresh JE environments in per-test folders under the build's scratch folder. */
final class Scratch {
    private Scratch() {}

    /** An empty folder for one test (emptied when it exists). */
    static File folder(Class<?> test, String method) throws IOException {
        File home = new File(System.getProperty("pycrawler.scratch", "target/java-test-envs"),
                test.getSimpleName() + "-" + method);
        deleteTree(home.toPath());
        if (!home.mkdirs()) {
            throw new IOException("cannot make " + home);
        }
        return home;
    }

    static Environment open(File dir, boolean transactional) throws DatabaseException {
        EnvironmentConfig config = new EnvironmentConfig();
        config.setAllowCreate(true);
        config.setTransactional(transactional);
        return new Environment(dir, config);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
