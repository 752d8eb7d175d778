package org.pycrawler.graalpy.jsr223;

import java.util.List;
import java.util.stream.Collectors;

import javax.script.ScriptEngine;
import javax.script.ScriptEngineFactory;

import org.graalvm.polyglot.Engine;

/**
 * Registers GraalPy with javax.script (META-INF/services), under the names "python" and
 * "graalpy": {@code new ScriptEngineManager().getEngineByName("python")}, or engine=python in
 * Heritrix's scripting console. The engines it makes share one interpreter, made at the first
 * script (see {@link PythonInterpreter}); naming and listing the factory starts nothing.
 */
public final class GraalPyScriptEngineFactory implements ScriptEngineFactory {
    private static final List<String> NAMES = List.of("python", "graalpy");
    private static final List<String> EXTENSIONS = List.of("py");
    private static final List<String> MIME_TYPES = List.of("text/x-python", "text/python");

    private final PythonInterpreter interpreter = new PythonInterpreter();
    private String engineVersion;
    private String languageVersion;

    @Override
    public String getEngineName() {
        return "GraalPy";
    }

    @Override
    public synchronized String getEngineVersion() {
        readVersions();
        return engineVersion;
    }

    @Override
    public List<String> getExtensions() {
        return EXTENSIONS;
    }

    @Override
    public List<String> getMimeTypes() {
        return MIME_TYPES;
    }

    @Override
    public List<String> getNames() {
        return NAMES;
    }

    @Override
    public String getLanguageName() {
        return "python";
    }

    @Override
    public synchronized String getLanguageVersion() {
        readVersions();
        return languageVersion;
    }

    /** Asked of a polyglot Engine (no Python started), the first time a version is asked for. */
    private void readVersions() {
        if (engineVersion == null) {
            try (Engine engine = Engine.newBuilder("python").option("engine.WarnInterpreterOnly", "false").build()) {
                engineVersion = engine.getVersion();
                languageVersion = engine.getLanguages().get("python").getVersion();
            }
        }
    }

    @Override
    public Object getParameter(String key) {
        switch (key) {
            case ScriptEngine.ENGINE:
                return getEngineName();
            case ScriptEngine.ENGINE_VERSION:
                return getEngineVersion();
            case ScriptEngine.NAME:
                return NAMES.get(0);
            case ScriptEngine.LANGUAGE:
                return getLanguageName();
            case ScriptEngine.LANGUAGE_VERSION:
                return getLanguageVersion();
            case "THREADING":
                // any thread may call; scripts run one at a time and share loaded modules
                return "MULTITHREADED";
            default:
                return null;
        }
    }

    @Override
    public String getMethodCallSyntax(String object, String method, String... args) {
        return object + "." + method + "(" + String.join(", ", args) + ")";
    }

    @Override
    public String getOutputStatement(String toDisplay) {
        return "print(" + pythonString(toDisplay) + ")";
    }

    @Override
    public String getProgram(String... statements) {
        return String.join("\n", statements);
    }

    @Override
    public ScriptEngine getScriptEngine() {
        return new GraalPyScriptEngine(this, interpreter);
    }

    /** {@code text} as a Python string literal. */
    static String pythonString(String text) {
        return text.chars().mapToObj(c -> {
            switch (c) {
                case '\\': return "\\\\";
                case '\'': return "\\'";
                case '\n': return "\\n";
                case '\r': return "\\r";
                default: return c < 0x20 ? String.format("\\x%02x", c) : String.valueOf((char) c);
            }
        }).collect(Collectors.joining("", "'", "'"));
    }
}
