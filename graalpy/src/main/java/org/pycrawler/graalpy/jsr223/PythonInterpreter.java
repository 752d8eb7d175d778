package org.pycrawler.graalpy.jsr223;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;

import javax.script.ScriptException;

import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Source;
import org.graalvm.polyglot.Value;

/**
 * One GraalPy interpreter (a polyglot {@link Context}) that all the engines of one factory share,
 * made at the first script. A host such as Heritrix's scripting console asks its
 * ScriptEngineManager for a new engine at every request; an interpreter per engine would pay
 * GraalPy's start-up each time and leave every Context behind, never closed. A Context runs one
 * thread at a time, so scripts run one after another, whichever threads call.
 *
 * <p>The interpreter has all host access ({@code import java}, {@code java.type(...)}, Java
 * objects' fields and methods) and pycrawler's checkout on its Python path (see
 * {@link #pythonPath()}), so {@code import pycrawler} works inside the host's JVM.
 */
final class PythonInterpreter {
    /** System property naming pycrawler's checkout; the environment's PYCRAWLER_HOME otherwise. */
    static final String HOME_PROPERTY = "pycrawler.home";
    static final String HOME_VARIABLE = "PYCRAWLER_HOME";
    /** Truffle's own system property for the option, which an explicit option would override. */
    static final String PATH_PROPERTY = "polyglot.python.PythonPath";

    private static final String RUNNER = "script_runner.py";

    private Context context;
    private Value run;
    private Value lineOfError;

    /**
     * Runs {@code script} with {@code names} bound to {@code values} as Python globals, print()
     * going to {@code out} and sys.stderr to {@code err}; returns the value of its last line
     * when that is an expression (see {@link #toJava}), else null.
     */
    synchronized Object eval(String script, String filename, String[] names, Object[] values, Writer out,
                             Writer err) throws ScriptException {
        if (context == null) {
            start();
        }
        try {
            return toJava(run.execute(script, filename, names, values, out, err));
        } catch (PolyglotException e) {
            int line = lineOf(e, filename);
            if (e.isExit() || e.isCancelled()) {
                close();  // the Context is unusable now; the next script gets a new one
            }
            throw scriptException(e, filename, line);
        }
    }

    /** The script's line where the failure was raised, from Python's traceback; -1 if none. */
    private int lineOf(PolyglotException e, String filename) {
        Value error = e.getGuestObject();
        if (lineOfError == null || error == null || error.isNull()) {
            return -1;
        }
        try {
            Value line = lineOfError.execute(error, filename);
            return line.fitsInInt() ? line.asInt() : -1;
        } catch (PolyglotException unreadable) {
            return -1;
        }
    }

    synchronized void close() {
        if (context != null) {
            context.close(true);
            context = null;
            run = null;
            lineOfError = null;
        }
    }

    private void start() throws ScriptException {
        Context made = Context.newBuilder("python")
                .allowAllAccess(true)
                .option("python.PythonPath", String.join(File.pathSeparator, pythonPath()))
                .build();
        try (InputStream in = PythonInterpreter.class.getResourceAsStream(RUNNER)) {
            Source source = Source.newBuilder("python", new String(in.readAllBytes(), StandardCharsets.UTF_8),
                    RUNNER).build();
            made.eval(source);
        } catch (IOException e) {
            made.close();
            throw new UncheckedIOException("the engine's jar lost its " + RUNNER, e);
        } catch (PolyglotException e) {
            made.close();
            throw scriptException(e, RUNNER, -1);
        }
        run = made.getBindings("python").getMember("run");
        lineOfError = made.getBindings("python").getMember("line_of");
        context = made;
    }

    /**
     * The folders put on Python's path: pycrawler's checkout (the system property
     * {@value #HOME_PROPERTY}, else the environment's {@value #HOME_VARIABLE}, else the checkout
     * this jar was built into, target/graalpy/ under it) and its target/graalpy/site-packages when
     * there is one; then whatever {@value #PATH_PROPERTY} names.
     */
    static List<String> pythonPath() {
        List<String> path = new ArrayList<>();
        Path home = pycrawlerHome();
        if (home != null) {
            path.add(home.toString());
            Path sitePackages = home.resolve("target").resolve("graalpy").resolve("site-packages");
            if (Files.isDirectory(sitePackages)) {
                path.add(sitePackages.toString());
            }
        }
        String more = System.getProperty(PATH_PROPERTY);
        if (more != null && !more.isEmpty()) {
            path.add(more);
        }
        return path;
    }

    static Path pycrawlerHome() {
        String named = System.getProperty(HOME_PROPERTY);
        if (named == null || named.isEmpty()) {
            named = System.getenv(HOME_VARIABLE);
        }
        if (named != null && !named.isEmpty()) {
            return Path.of(named).toAbsolutePath();
        }
        CodeSource code = PythonInterpreter.class.getProtectionDomain().getCodeSource();
        if (code == null) {
            return null;
        }
        try {
            // target/graalpy/pycrawler-graalpy.jar in a checkout; a jar copied elsewhere has none
            Path root = Path.of(code.getLocation().toURI()).toAbsolutePath();
            for (int up = 0; up < 3 && root != null; up++) {
                root = root.getParent();
            }
            return root != null && Files.isRegularFile(root.resolve("pycrawler").resolve("__init__.py")) ? root : null;
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;  // not a file: nothing but a named home goes on the path
        }
    }

    /**
     * A script's value as Java sees it: Java objects as themselves; None, bool, int, float and
     * str as null, Boolean, Integer or Long (or Double when it fits neither), Double and String;
     * anything else as its polyglot {@link Value}, usable while the interpreter lives.
     */
    private static Object toJava(Value value) {
        if (value.isNull()) {
            return null;
        }
        if (value.isHostObject()) {
            return value.asHostObject();
        }
        if (value.isBoolean()) {
            return value.asBoolean();
        }
        if (value.isString()) {
            return value.asString();
        }
        if (value.isNumber()) {
            if (value.fitsInInt()) {
                return value.asInt();
            }
            if (value.fitsInLong()) {
                return value.asLong();
            }
            if (value.fitsInDouble()) {
                return value.asDouble();
            }
        }
        return value;
    }

    /**
     * The ScriptException for a failed script: Python's message ("NameError: name 'x' is not
     * defined") and the script's line; its cause the Java exception itself when a Java call
     * threw, else the PolyglotException (with Python's traceback in its stack trace).
     */
    private static ScriptException scriptException(PolyglotException e, String filename, int line) {
        ScriptException failure = new ScriptException(e.getMessage(), filename, line);
        failure.initCause(e.isHostException() ? e.asHostException() : e);
        return failure;
    }
}
