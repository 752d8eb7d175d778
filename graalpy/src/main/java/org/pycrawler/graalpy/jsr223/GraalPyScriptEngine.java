package org.pycrawler.graalpy.jsr223;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.script.AbstractScriptEngine;
import javax.script.Bindings;
import javax.script.ScriptContext;
import javax.script.ScriptEngine;
import javax.script.ScriptEngineFactory;
import javax.script.ScriptException;
import javax.script.SimpleBindings;

/**
 * Python (GraalPy) as a JSR-223 engine: a script's bindings, global scope then engine scope, are
 * its Python globals (in Heritrix's scripting console: {@code appCtx}, {@code rawOut},
 * {@code htmlOut}, {@code job}, {@code scriptResource}), its print() goes to the
 * ScriptContext's writer, and its value is that of its last line when that is an expression.
 * Every script starts from a fresh namespace, in the interpreter the engine's factory keeps
 * ({@link PythonInterpreter}).
 */
public final class GraalPyScriptEngine extends AbstractScriptEngine {
    static final String DEFAULT_FILENAME = "<script>";

    private final GraalPyScriptEngineFactory factory;
    private final PythonInterpreter interpreter;

    GraalPyScriptEngine(GraalPyScriptEngineFactory factory, PythonInterpreter interpreter) {
        this.factory = factory;
        this.interpreter = interpreter;
    }

    @Override
    public Object eval(String script, ScriptContext context) throws ScriptException {
        Map<String, Object> scope = new LinkedHashMap<>();
        for (int level : new int[] {ScriptContext.GLOBAL_SCOPE, ScriptContext.ENGINE_SCOPE}) {
            Bindings bindings = context.getBindings(level);
            if (bindings != null) {
                scope.putAll(bindings);
            }
        }
        Object named = context.getAttribute(ScriptEngine.FILENAME);
        String filename = named instanceof String ? (String) named : DEFAULT_FILENAME;
        return interpreter.eval(script, filename, scope.keySet().toArray(new String[0]), scope.values().toArray(),
                orNull(context.getWriter()), orNull(context.getErrorWriter()));
    }

    @Override
    public Object eval(Reader reader, ScriptContext context) throws ScriptException {
        StringBuilder script = new StringBuilder();
        char[] buffer = new char[8192];
        try {
            for (int n; (n = reader.read(buffer)) >= 0; ) {
                script.append(buffer, 0, n);
            }
        } catch (IOException e) {
            throw new ScriptException(e);
        }
        return eval(script.toString(), context);
    }

    @Override
    public Bindings createBindings() {
        return new SimpleBindings();
    }

    @Override
    public ScriptEngineFactory getFactory() {
        return factory;
    }

    private static Writer orNull(Writer writer) {
        return writer != null ? writer : Writer.nullWriter();
    }
}
