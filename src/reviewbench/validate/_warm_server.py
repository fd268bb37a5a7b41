"""A warm pytest process: imports pytest once, forks a child per run (see ``warm.py``).

Run as a script by the test command's own interpreter, inside the sandbox, with the
scratch tree as working directory. It never imports reviewbench (the interpreter may not
have it) and never the project's code: only pytest, its built-in plugins and the
third-party plugins pytest would load from entry points. Every run is a fork that imports
conftest, tests and the project fresh, and calls pytest as ``python -m pytest`` would;
its exit status and JUnit XML are the verdict, exactly as for a cold process.

Before it serves, the server runs one throw-away pytest session of its own on a test file
in a temporary folder (no project ini, conftest or code): pytest's lazy imports and
compiled patterns are then inherited by every fork instead of redone in each (about an
eighth of a small run's CPU on toolz). Everything a test could see is put back (``sys.path``,
the working directory, ``PYTEST_ADDOPTS``, the throw-away module); a warm-up that fails
(a plugin that insists on its project) makes the server exec itself again without one.

Protocol (one JSON object per line): the server first writes ``{"ready": true,
"warmed": bool}`` or ``{"ready": false, "reason": ...}``; then for each request
``{"argv": [...], "log": path, "cache": path, "cpu_limit_s": int | null}`` on stdin it
answers ``{"exit": code, "cpu_s": seconds, "cpu_limited": bool}`` (a negative code: killed
by that signal; ``cpu_limited``: killed for passing its CPU limit). End of stdin ends the
server.

Two content-addressed caches live in this parent and are inherited by every fork:
pytest's assertion rewriting of test modules and the compilation of source files, keyed
by path and the SHA-256 of the source bytes, so that they can never be stale (unlike
``.pyc`` files checked by modification time, which this process never writes). A child
hands the entries it computed back through the ``cache`` file.
"""

import gc
import hashlib
import json
import marshal
import os
import signal
import sys

_MAX_CACHE_BYTES = 256 * 1024 * 1024


def _answer(out, payload):
    os.write(out, (json.dumps(payload) + "\n").encode())


def _read_line(fd):
    data = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            return None
        if byte == b"\n":
            return bytes(data)
        data += byte


def _under(path, root):
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real == root or real.startswith(root + os.sep)


def _blocked(args):
    """Plugins the command line disables (``-p no:NAME``, ``-pno:NAME``)."""
    blocked = {args[i + 1][3:] for i, a in enumerate(args[:-1]) if a == "-p" and args[i + 1].startswith("no:")}
    return blocked | {a[5:] for a in args if a.startswith("-pno:")}


def _module_under(module, root):
    path = getattr(module, "__file__", None)
    return isinstance(path, str) and bool(path) and _under(path, root)


def _preload(args):
    """Import pytest, its built-in plugins and entry-point plugins; return the names of
    modules that only the entry-point plugins brought in."""
    import _pytest.config as config
    import pytest  # noqa: F401

    for name in config.default_plugins:
        try:
            __import__("_pytest." + name)
        except ImportError:
            pass
    before = set(sys.modules)
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        blocked = _blocked(args)
        for entry in _pytest_plugins():
            if entry.name in blocked:
                continue
            try:
                entry.load()
            except Exception:  # noqa: BLE001 - pytest itself reports a broken plugin, in the child
                pass
    return {name.split(".")[0] for name in set(sys.modules) - before}


def _exit_code(status):
    """``os.waitstatus_to_exitcode`` (3.9+), spelt out for older interpreters."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _pytest_plugins():
    """The ``pytest11`` entry points, on any Python from 3.7: ``entry_points(group=…)`` is
    3.10's, a dict of groups 3.8's and 3.9's, and 3.7 has no ``importlib.metadata``
    (pytest itself brings the ``importlib_metadata`` backport there)."""
    try:
        import importlib.metadata as metadata
    except ImportError:
        import importlib_metadata as metadata
    found = metadata.entry_points()
    if hasattr(found, "select"):
        return list(found.select(group="pytest11"))
    return list(found.get("pytest11", ()))


_WARM_UP_TEST = "def test_warm_up():\n    assert [1, 2] == [1, 2]\n"


def _warm_up(args, root):
    """One pytest session on a throw-away test outside the project; the names of the
    modules it imported, or None when it failed or touched project code (then nothing
    may be trusted: the caller execs a fresh server)."""
    import importlib
    import shutil
    import tempfile

    import pytest

    saved_path, saved_cwd, saved_modules = list(sys.path), os.getcwd(), set(sys.modules)
    addopts = os.environ.pop("PYTEST_ADDOPTS", None)  # the project's options need its conftest
    work = os.path.realpath(tempfile.mkdtemp(prefix="reviewbench-warm-up-"))
    try:
        test, ini = os.path.join(work, "test_reviewbench_warm_up.py"), os.path.join(work, "pytest.ini")
        with open(test, "w") as handle:
            handle.write(_WARM_UP_TEST)
        with open(ini, "w") as handle:
            handle.write("[pytest]\n")
        disable = [word for name in sorted(_blocked(args)) for word in ("-p", "no:" + name)]
        os.chdir(work)
        code = pytest.main(["-q", "-p", "no:cacheprovider", *disable, "-c", ini, "--rootdir", work,
                            "--confcutdir", work, "--junitxml", os.path.join(work, "junit.xml"), test])  # fmt: skip
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        if addopts is not None:
            os.environ["PYTEST_ADDOPTS"] = addopts
        added = set(sys.modules) - saved_modules
        for name in added:
            if _module_under(sys.modules[name], work):
                del sys.modules[name]
        for key in [k for k in sys.path_importer_cache if isinstance(k, str) and _under(k, work)]:
            del sys.path_importer_cache[key]
        importlib.invalidate_caches()
        shutil.rmtree(work, ignore_errors=True)
    touched = any(_module_under(sys.modules.get(name), root) for name in added)
    if code != 0 or touched:
        return None
    return {name.split(".")[0] for name in added if name in sys.modules}


#: Modules pytest imports only once it reads a project's configuration, which the
#: warm-up's bare ini does not have: a ``pyproject.toml`` (``tomllib``, or ``tomli``
#: before Python 3.11) and a ``minversion`` (``packaging.version``). Every fork on
#: pytoolz/toolz imported them afresh: 3.7 ms of CPU each, a twentieth of a run.
_LAZY = ("tomllib", "tomli", "packaging.version")


def _import_lazy(root):
    """Import :data:`_LAZY` here, once, where they exist outside the project (pypa/packaging's
    own tree holds a ``packaging``: never imported here); the top-level names imported."""
    import importlib
    from importlib import util

    done = set()
    for name in _LAZY:
        top = name.split(".")[0]
        try:
            spec = util.find_spec(top)
            places = [spec.origin] if spec is not None and spec.origin else []
            places += list(spec.submodule_search_locations or ()) if spec is not None else []
            if spec is None or any(_under(place, root) for place in places):
                continue
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - absent (or broken): pytest imports it itself, or not
            continue
        done.add(top)
    return done


def _map_module_files():
    """Fill ``inspect``'s file-to-module map for every module imported here. pytest looks
    up the module of each frame it shows in a failure's traceback, and every lookup of a
    file the map lacks walks all of ``sys.modules`` resolving paths: in each fork, for
    modules that were imported here, that was a tenth of a failing run's time. The map is
    derived from ``sys.modules`` alone; forks extend it for the modules they import."""
    import inspect

    inspect.getmodule(compile("", "<reviewbench-warm-server>", "exec"))


def _remember_metadata(root):
    """Remember the metadata files of installed packages read here (the entry points and
    file lists pytest reads for every installed package in every session, a seventh of a
    small run); return what makes every later read of a remembered file come from memory.

    Only packages outside the tree, HOME and TMPDIR are remembered: the runs may write
    there and nowhere else (the host is read-only to them), so what is remembered stays
    what a read would give. A read of anything else, in a fork, reads the file."""
    try:
        import importlib.metadata as metadata

        original = metadata.PathDistribution.read_text
    except (ImportError, AttributeError):  # 3.7's backport: nothing remembered
        return lambda: None
    writable = [root] + [os.path.realpath(os.environ[name]) for name in ("HOME", "TMPDIR") if os.environ.get(name)]
    memo = {}

    def remembering(self, filename):
        text = original(self, filename)
        key = (str(getattr(self, "_path", "")), filename)
        if key[0] and os.path.isabs(key[0]) and not any(_under(key[0], place) for place in writable):
            memo[key] = text
        return text

    def remembered(self, filename):
        key = (str(getattr(self, "_path", "")), filename)
        return memo[key] if key in memo else original(self, filename)

    def serve():
        metadata.PathDistribution.read_text = remembered

    metadata.PathDistribution.read_text = remembering
    return serve


def _real_paths():
    """The real path of every imported module's file."""
    found = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path and path not in found:
            try:
                found[path] = os.path.realpath(path)
            except (OSError, ValueError):
                pass
    return found


def _exec_unwarmed(requests, answers):
    """Start over as a fresh server that skips the warm-up, on the same pipes."""
    os.dup2(requests, 0)
    os.dup2(answers, 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:4], "--no-warm-up"])


#: The module :func:`_bytecode_cache` loaded (a type comment, not an annotation: Python 3.7 runs this file).
_LOADED = []  # type: list[object]


def _bytecode_cache():
    """``_bytecode_cache.py`` beside this file (its rewriting wrapper serves both), loaded
    by path once, in the server, before it forks: this script's folder is not on
    ``sys.path``, and the module imports nothing of reviewbench."""
    if not _LOADED:
        from importlib import util

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bytecode_cache.py")
        spec = util.spec_from_file_location("_reviewbench_bytecode_server", path)
        module = util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED.append(module)
    return _LOADED[0]


def _install_hooks(cache, fresh, preloaded):
    """In a child: consult the inherited caches, and skip pytest's "already imported"
    warning for plugin modules this server imported before pytest's rewrite hook existed
    (a cold process would have imported them after it)."""
    from importlib import _bootstrap_external as external

    import _pytest.assertion.rewrite as rewrite

    warn_imported = rewrite.AssertionRewritingHook._warn_already_imported

    def quiet(self, name):
        if name not in preloaded:
            warn_imported(self, name)

    rewrite.AssertionRewritingHook._warn_already_imported = quiet

    def lookup(path, source, hook):
        hit = cache.get(("rewrite", path, hashlib.sha256(source).hexdigest(), hook))
        return marshal.loads(hit) if hit is not None else None

    def keep(path, source, hook, code):
        fresh[("rewrite", path, hashlib.sha256(source).hexdigest(), hook)] = marshal.dumps(code)

    cached = _bytecode_cache().cached_rewriter(getattr(rewrite, "_rewrite_test", None), lookup, keep)
    if cached is not None:
        rewrite._rewrite_test = cached

    source_to_code = external.SourceLoader.source_to_code

    def cached_compile(self, data, path, *, _optimize=-1):
        if not isinstance(data, bytes) or not isinstance(path, str):
            return source_to_code(self, data, path, _optimize=_optimize)
        key = ("compile", path, hashlib.sha256(data).hexdigest(), _optimize, sys.flags.optimize)
        hit = cache.get(key)
        if hit is not None:
            return marshal.loads(hit)
        code = source_to_code(self, data, path, _optimize=_optimize)
        fresh[key] = marshal.dumps(code)
        return code

    external.SourceLoader.source_to_code = cached_compile
    _cache_statement_ranges(cache, fresh)


def _cache_statement_ranges(cache, fresh):
    """Remember where the statement around a traceback line starts and ends, keyed by the
    SHA-256 of the file's source: pytest parses and walks a file's whole syntax tree for
    every entry of every failure it reports, which was a tenth of a failing run's time.
    The answer depends on the source, the line and ``assertion`` only; the tree pytest
    keeps between calls is never given back to it from the cache."""
    try:
        import _pytest._code.code as code
        import _pytest._code.source as source_module

        original = source_module.getstatementrange_ast
    except (ImportError, AttributeError):  # another pytest: the report costs what it costs
        return
    import ast

    placeholder = ast.Module(body=[], type_ignores=[])

    def cached_range(lineno, source, assertion=False, astnode=None):
        key = ("statement", hashlib.sha256(str(source).encode("utf-8", "surrogatepass")).hexdigest(),
               lineno, bool(assertion))  # fmt: skip
        hit = fresh.get(key) or cache.get(key)
        if hit is not None:
            start, end = marshal.loads(hit)
            return (astnode or placeholder), start, end
        node, start, end = original(lineno, source, assertion, None if astnode is placeholder else astnode)
        fresh[key] = marshal.dumps((start, end))
        return node, start, end

    source_module.getstatementrange_ast = cached_range
    if getattr(code, "getstatementrange_ast", None) is original:
        code.getstatementrange_ast = cached_range


def _child(request, channels, cache, preloaded, argv0):
    """Runs in the fork: become ``python -m pytest ARGS`` with output to the case log."""
    for fd in channels:
        os.close(fd)
    os.setsid()
    limit = request.get("cpu_limit_s")
    if limit:
        import resource

        # SIGXCPU at the limit, SIGKILL a second later; no core file in the tree.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (int(limit), int(limit) + 1))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    code = 1
    fresh = {}
    try:
        import importlib

        importlib.invalidate_caches()
        _install_hooks(cache, fresh, preloaded)
        sys.argv = [argv0, *request["argv"]]
        import pytest

        try:
            code = pytest.console_main()
        except SystemExit as stop:
            code = stop.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - as the interpreter would: traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    try:
        # As the interpreter's shutdown does first: wait for non-daemon threads. A test that
        # leaves one running hangs a cold pytest until the timeout; so must a warm run.
        import threading

        threading._shutdown()
    except BaseException:  # noqa: BLE001
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    if fresh and request.get("cache"):
        try:
            with open(request["cache"], "wb") as handle:
                handle.write(marshal.dumps(list(fresh.items())))
        except Exception:  # noqa: BLE001 - a cache entry lost costs time, not correctness
            pass
    os._exit(code & 0xFF if code >= 0 else 1)


def _reap(child):
    """The run is over: nothing it started may outlive it."""
    if os.getpid() == 1:
        # Init of our own PID namespace: every other process in it belongs to the run.
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
    try:
        os.killpg(child, signal.SIGKILL)
    except OSError:
        pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait(child, requests):
    """The child's wait status and resource usage; None if the client went away first
    (then nobody enforces the timeout: the run must not go on)."""
    import select

    try:
        watch = os.pidfd_open(child)
    except (AttributeError, OSError):
        watch = None
    try:
        while True:
            pid, status, usage = os.wait4(child, os.WNOHANG)
            if pid:
                return status, usage
            ready, _, _ = select.select([requests] + ([watch] if watch is not None else []), [], [],
                                        None if watch is not None else 0.2)  # fmt: skip
            if requests in ready and not os.read(requests, 1):
                return None  # end of file; a byte would break the protocol, and is dropped
    finally:
        if watch is not None:
            os.close(watch)


def main():
    requests = os.dup(0)
    answers = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # stray prints of this process go to its own log (stderr)
    os.close(null)
    argv0, path0, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    sys.path[0] = path0 or os.getcwd()  # what ``python -m pytest`` or the pytest script would see
    root = os.path.realpath(os.getcwd())
    serve_metadata = _remember_metadata(root)
    try:
        preloaded = _preload(args)
    except BaseException as exc:  # noqa: BLE001 - the caller falls back to cold runs
        _answer(answers, {"ready": False, "reason": f"cannot import pytest: {exc!r}"})
        return
    warmed = "--no-warm-up" not in sys.argv[4:]
    if warmed:
        try:
            imported = _warm_up(args, root)
        except BaseException:  # noqa: BLE001 - whatever it left behind, a fresh process has not
            imported = None
        if imported is None:
            if sys.executable:
                _exec_unwarmed(requests, answers)
            _answer(answers, {"ready": False, "reason": "the warm-up session failed"})
            return
        preloaded |= imported
    preloaded |= _import_lazy(root)
    project = sorted(name for name, module in list(sys.modules.items()) if _module_under(module, root))
    if project:
        _answer(
            answers,
            {"ready": False, "reason": f"importing pytest imported project code: {project[:3]}"},
        )
        return
    _map_module_files()
    serve_metadata()
    _bytecode_cache()  # loaded here, inherited by every fork
    # For the probe plugin in every fork: it leaves compiling to this server's caches, and
    # resolves the files of the modules imported here once, now (the host outside the
    # scratch area is read-only to the runs, so these never change): a tenth of a run.
    setattr(sys, "_reviewbench_warm", _real_paths())  # noqa: B010 - an attribute sys does not declare
    sys.stdout.flush()
    sys.stderr.flush()
    gc.collect()
    gc.freeze()  # a child's collections then skip everything inherited from here
    cache = {}
    size = 0
    _answer(answers, {"ready": True, "pid": os.getpid(), "warmed": warmed})
    while True:
        line = _read_line(requests)
        if not line:
            return
        request = json.loads(line)
        cache_file = request.get("cache")
        if cache_file and os.path.exists(cache_file):
            os.unlink(cache_file)
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:
            try:
                _child(request, (requests, answers), cache, preloaded, argv0)
            finally:
                os._exit(1)  # never return into the server loop
        waited = _wait(child, requests)
        _reap(child)
        if waited is None:
            return  # the client is gone (its end of our stdin closed): so are we
        status, usage = waited
        code = _exit_code(status)
        cpu = usage.ru_utime + usage.ru_stime
        limit = request.get("cpu_limit_s")
        # Only the kernel sends SIGXCPU, at the limit by its own accounting (which rusage can
        # trail by a tick: 0.95 s reported at a 1 s limit); a SIGKILL is the limit's only when
        # the CPU was spent (the hard limit a second later), not a timeout's or the OOM killer's.
        limited = bool(limit) and (code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= int(limit) - 0.05))
        if cache_file and os.path.exists(cache_file):
            try:
                with open(cache_file, "rb") as handle:
                    entries = marshal.loads(handle.read())
                os.unlink(cache_file)
            except Exception:  # noqa: BLE001
                entries = []
            # Kept marshalled: a decoded code object shared with the forks is written to when
            # it runs (specialisation, reference counts), so each fork copied its pages;
            # decoding in the fork measured 2-5% cheaper per run on toolz.
            for key, blob in entries:
                if size + len(blob) <= _MAX_CACHE_BYTES and tuple(key) not in cache:
                    cache[tuple(key)] = blob
                    size += len(blob)
        _answer(answers, {"exit": code, "cpu_s": round(cpu, 4), "cpu_limited": limited})


if __name__ == "__main__":
    main()
