"""Runs one script for GraalPyScriptEngine, in the interpreter its factory keeps.

Each script gets a namespace of its own (its bindings and ``__builtins__``), so the names one
script sets are not seen by the next, while the modules it imports stay loaded for the next. Its
``print()`` and ``sys.stderr`` go to the ScriptContext's writer and error writer, as JSR-223
asks; the value of its last line, when that line is an expression, is the script's value.
"""

import ast
import builtins
import contextlib


class JavaWriter:
    """A text stream over a ``java.io.Writer``: what ``print()`` and ``file=`` need."""

    def __init__(self, writer):
        self.writer = writer

    def write(self, text):
        self.writer.write(text)
        return len(text)

    def flush(self):
        self.writer.flush()

    def writable(self):
        return True


def run(source, filename, names, values, out, err):
    """Runs ``source`` with the globals ``names`` bound to ``values`` (two Java arrays);
    returns the value of its last expression statement, or None."""
    scope = {"__name__": "__main__", "__file__": filename, "__builtins__": builtins}
    scope.update(zip(names, values))
    tree = ast.parse(source, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    stdout, stderr = JavaWriter(out), JavaWriter(err)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            exec(compile(tree, filename, "exec"), scope)
            if last is not None:
                return eval(compile(ast.Expression(last.value), filename, "eval"), scope)
            return None
    finally:
        stdout.flush()
        stderr.flush()


def line_of(error, filename):
    """The line of the script (named ``filename``) where ``error`` was raised, or None."""
    if isinstance(error, SyntaxError) and error.filename == filename:
        return error.lineno
    line, frame = None, getattr(error, "__traceback__", None)
    while frame is not None:
        if frame.tb_frame.f_code.co_filename == filename:
            line = frame.tb_lineno
        frame = frame.tb_next
    return line
