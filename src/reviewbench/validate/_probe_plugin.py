"""A pytest plugin reviewbench loads into test runs (``-p _reviewbench_probe``): which
modules were imported, and from which file.

Copied next to each scratch tree as ``_reviewbench_probe.py`` and put on the test
interpreter's ``PYTHONPATH``; it never imports reviewbench (the interpreter may not have
it) and changes nothing in the project. At the end of the session it writes one JSON
object, ``{"modules": {name: real path of its file}}``, to the path given with
``--reviewbench-probe``. See ``probe.py``.

``sys.modules`` at the end misses a module the tests dropped from it (to re-import it
fresh, as python-humanize's i18n tests do), so an audit hook also notes the file of every
module body executed from the moment the plugin loads (the ``exec`` audit event, which
importing a module raises with its code object); those are recorded under names that
start with ``<executed>`` (Python 3.8 and later: 3.7 has no audit hooks).

In a cold run it also keeps the code it compiles, and pytest's rewritten test modules,
between runs as checked-hash ``.pyc`` files in the scratch area (``_bytecode_cache.py``,
copied beside it as ``_reviewbench_bytecode.py``), when the folder for them exists. Warm
runs have their server's caches instead: there ``sys._reviewbench_warm`` holds the real
paths of the files of the modules the server imported, resolved once by the server.

It runs on every interpreter validation supports (3.7 and later): no newer syntax.
"""

import json
import os
import sys

_EXECUTED = set()
_PREFIX = "<executed> "


def _audit(event, args):
    if event == "exec" and args:
        name = getattr(args[0], "co_filename", None)
        if isinstance(name, str) and name.endswith(".py") and os.path.isabs(name):
            _EXECUTED.add(name)


# Audit hooks exist from Python 3.8; on 3.7 only ``sys.modules`` at the end is recorded.
if hasattr(sys, "addaudithook") and not getattr(sys, "_reviewbench_probe_hooked", False):
    sys.addaudithook(_audit)  # once per process (a fork keeps it)
    setattr(sys, "_reviewbench_probe_hooked", True)  # noqa: B010 - an attribute sys does not declare


def _cache_bytecode():
    if getattr(sys, "_reviewbench_warm", False):
        return
    try:
        import _reviewbench_bytecode as cache
    except ImportError:
        return
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), cache.FOLDER)
    if os.path.isdir(folder):
        cache.install(folder)


_cache_bytecode()


def pytest_addoption(parser):
    parser.addoption("--reviewbench-probe", default=None, help="(reviewbench) write imported modules here")


def pytest_unconfigure(config):
    target = config.getoption("--reviewbench-probe", None)
    if not target:
        return
    known = getattr(sys, "_reviewbench_warm", None) or {}  # resolved by the warm server
    modules = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path:
            try:
                modules[name] = known.get(path) or os.path.realpath(path)
            except (OSError, ValueError):
                pass
    for path in sorted(_EXECUTED):
        try:
            modules[_PREFIX + path] = known.get(path) or os.path.realpath(path)
        except (OSError, ValueError):
            pass
    partial = target + ".partial"
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"modules": modules}, handle)
        os.replace(partial, target)
    except OSError:
        pass  # no record: reviewbench then knows nothing about this run's imports
