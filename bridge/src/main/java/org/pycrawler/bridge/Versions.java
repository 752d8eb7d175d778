package org.pycrawler.bridge;

/** Versions of what the JVM actually loaded, for {@code pycrawler version}. */
public final class Versions {
    private Versions() {}

    public static String je() {
        return com.sleepycat.je.JEVersion.CURRENT_VERSION.getVersionString();
    }

    public static String java() {
        return System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")";
    }
}
