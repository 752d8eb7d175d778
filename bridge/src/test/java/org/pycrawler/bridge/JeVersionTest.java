package org.pycrawler.bridge;

import static org.junit.Assert.assertEquals;

import com.sleepycat.je.JEVersion;
import org.junit.Test;

/** Each Maven leg runs against the JE it names (the build passes {@code pycrawler.je.expected}). */
public class JeVersionTest {
    @Test
    public void theLoadedJeIsTheOneThisLegTests() {
        String expected = System.getProperty("pycrawler.je.expected");
        assertEquals(expected, JEVersion.CURRENT_VERSION.getVersionString());
    }
}
