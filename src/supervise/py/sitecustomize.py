# faultline's bootstrap for Python children of `faultline run` (docs/pipeline.md,
# "Stacks of stuck processes"). faultline puts the directory holding this file
# first on the children's PYTHONPATH. It:
#  1. registers the standard library's faulthandler on the real-time signal
#     named by FAULTLINE_STACK_SIGNAL, dumping every thread's Python stack to
#     $FAULTLINE_STACK_DIR/<pid>.txt (re-opened in forked children, so each
#     process writes its own file); faultline sends that signal only to
#     processes whose /proc/PID/status shows it caught;
#  2. then loads the user's own sitecustomize (the next one on sys.path), so
#     nothing of theirs is lost.
# It never raises: a failure here must not stop the user's program.
import os
import sys


def _faultline_register():
    import faulthandler

    stack_dir = os.environ.get("FAULTLINE_STACK_DIR", "")
    try:
        signum = int(os.environ.get("FAULTLINE_STACK_SIGNAL", "0"))
    except ValueError:
        return
    if not stack_dir or signum <= 0:
        return
    state = {}

    def arm():
        try:
            old = state.get("file")
            path = os.path.join(stack_dir, "%d.txt" % os.getpid())
            f = open(path, "a", buffering=1)
            f.write("faultline-stacks pid=%d argv=%r\n" % (os.getpid(), sys.argv[:4]))
            faulthandler.register(signum, file=f, all_threads=True, chain=False)
            state["file"] = f
            if old is not None:
                old.close()
        except Exception:
            pass

    arm()
    try:
        os.register_at_fork(after_in_child=arm)
    except Exception:
        pass


def _faultline_chain():
    # Our directory leaves sys.path (it only holds this file); the next
    # sitecustomize on the path is the user's.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    me = sys.modules.pop("sitecustomize", None)
    try:
        import importlib

        importlib.import_module("sitecustomize")
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise
        if me is not None:
            sys.modules["sitecustomize"] = me


try:
    _faultline_register()
except Exception:
    pass
_faultline_chain()
