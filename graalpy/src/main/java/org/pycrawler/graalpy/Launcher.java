package org.pycrawler.graalpy;

import java.io.File;
import java.util.Arrays;
import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.Engine;
import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Source;
import org.graalvm.polyglot.Value;

/**
 * Runs Python under GraalPy in this JVM, as the python command does: {@code FILE.py ARGS},
 * {@code -m MODULE ARGS} or {@code -c CODE ARGS}. The Python code reaches every Java class on
 * the class path (JE and the bridge, through GraalPy's {@code java} module).
 *
 * <p>System properties (scripts/graalpy sets them): {@code pycrawler.graalpy.path}, the
 * entries put on the Python path (the checkout's root and target/graalpy/site-packages);
 * {@code pycrawler.graalpy.executable}, what {@code sys.executable} names, so that Python code
 * that starts "itself" again starts scripts/graalpy. The exit status is the Python one: the
 * code of a SystemExit, 0 at the end, 1 after an uncaught exception, whose Python traceback
 * alone is printed (the run is in Python's runpy, so no Java frame comes into it).
 */
public final class Launcher {
    /**
     * Runs the target with runpy, as CPython's own main does, and returns the exit status.
     * SystemExit is turned into a status here (rather than left to the engine) so that the
     * context is closed, and its atexit handlers run, before the JVM exits with it.
     */
    private static final String RUN = String.join("\n",
            "def _pycrawler_run(kind, target):",
            "    import os, runpy, sys, traceback",
            "    try:",
            "        # sys.path[0] as CPython sets it: the working folder for -m, '' for -c, the file's folder.",
            "        first = os.getcwd() if kind == '-m' else '' if kind == '-c' else os.path.dirname(os.path.abspath(target))",
            "        if sys.path and sys.path[0] == '':",
            "            sys.path[0] = first",
            "        else:",
            "            sys.path.insert(0, first)",
            "        if kind == '-m':",
            "            runpy.run_module(target, run_name='__main__', alter_sys=True)",
            "        elif kind == '-c':",
            "            exec(compile(target, '<string>', 'exec'), {'__name__': '__main__'})",
            "        else:",
            "            runpy.run_path(target, run_name='__main__')",
            "        return 0",
            "    except SystemExit as stop:",
            "        code = stop.code",
            "        if code is None:",
            "            return 0",
            "        if isinstance(code, int):",
            "            return code & 0xFF",
            "        print(code, file=sys.stderr)",
            "        return 1",
            "    except BaseException as error:",
            "        tb = error.__traceback__",
            "        while tb is not None and tb.tb_frame.f_code.co_filename in ('<pycrawler-launcher>', runpy.__file__):",
            "            tb = tb.tb_next",
            "        traceback.print_exception(type(error), error, tb)",
            "        return 130 if isinstance(error, KeyboardInterrupt) else 1",
            "    finally:",
            "        sys.stdout.flush()",
            "        sys.stderr.flush()",
            "_pycrawler_run");

    private static final String USAGE =
            "usage: graalpy FILE.py [ARG...] | -m MODULE [ARG...] | -c CODE [ARG...]";

    private Launcher() {}

    public static void main(String[] args) {
        if (args.length == 0 || (args[0].startsWith("-") && !args[0].equals("-m") && !args[0].equals("-c"))
                || ((args[0].equals("-m") || args[0].equals("-c")) && args.length < 2)) {
            System.err.println(USAGE);
            System.exit(2);
        }
        String kind = args[0].equals("-m") || args[0].equals("-c") ? args[0] : "file";
        String target = kind.equals("file") ? args[0] : args[1];
        String[] rest = Arrays.copyOfRange(args, kind.equals("file") ? 1 : 2, args.length);
        if (kind.equals("file") && !new File(target).isFile()) {
            System.err.println("graalpy: can't open file '" + target + "': no such file");
            System.exit(2);
        }
        // sys.argv as CPython makes it: the file, or '-c' (runpy puts the module's path in
        // argv[0] itself for -m).
        String[] argv = new String[rest.length + 1];
        argv[0] = kind.equals("file") ? target : kind;
        System.arraycopy(rest, 0, argv, 1, rest.length);
        System.exit(run(kind, target, argv));
    }

    private static int run(String kind, String target, String[] argv) {
        // The engine's own multi-line warning about running without a JIT is replaced by one
        // line of ours, printed only when the engine found no JIT.
        Engine engine = Engine.newBuilder().option("engine.WarnInterpreterOnly", "false").build();
        if (engine.getImplementationName().contains("Interpreted")) {
            System.err.println("graalpy: running interpreted (no JIT on this Java: "
                    + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
                    + "); a Java 21+ with target/graalpy/lib-jit runs GraalPy's JIT");
        }
        Context.Builder builder = Context.newBuilder("python")
                .engine(engine)
                .allowAllAccess(true)
                .arguments("python", argv)
                .option("python.PythonPath", System.getProperty("pycrawler.graalpy.path", ""))
                .option("python.ForceImportSite", "true")
                // A Java exception can then be caught by its class (except java.lang.Exception);
                // without it GraalPy 23.1 refuses a Java class in an except clause.
                .option("python.EmulateJython", "true")
                // Compiled modules are cached in __pycache__ as CPython does (GraalPy embedded
                // leaves it off by default, and compiles every module again at every start).
                .option("python.DontWriteBytecodeFlag", "false")
                // The operating system's own processes, pipes and descriptors, as CPython has them:
                // GraalPy's default (emulated in Java) gives a child no descriptor but its three
                // streams, so one child's output never reaches another (store migrate pipes its
                // reader into its writer). This launcher's streams are the process's own, so the
                // native backend's warning (streams redirected in the embedding are not honoured)
                // does not apply, and is silenced.
                .option("python.PosixModuleBackend", "native")
                .option("log.python.com.oracle.graal.python.runtime.PythonContext.level", "SEVERE");
        String executable = System.getProperty("pycrawler.graalpy.executable");
        if (executable != null) {
            builder.option("python.Executable", executable);
        }
        try (Context context = builder.build()) {
            Value runner = context.eval(Source.newBuilder("python", RUN, "<pycrawler-launcher>").buildLiteral());
            int status;
            try {
                status = runner.execute(kind, target).asInt();
            } catch (PolyglotException e) {
                // Only what escapes the runner's own handling arrives here: an exit from
                // os._exit, or the engine's failure.
                if (e.isExit()) {
                    return e.getExitStatus();
                }
                System.err.println("graalpy: " + e.getMessage());
                return 1;
            }
            return status;
        }
    }
}
