"""Compiled code kept between cold pytest runs of one scratch tree, as checked-hash ``.pyc`` files.

Test runs write no bytecode (``PYTHONDONTWRITEBYTECODE=1``): a ``.pyc`` checked by the
source's modification time and size goes stale when a patch keeps both, and would run old
code. So every cold run compiled the project and had pytest rewrite the asserts of every
test module afresh: on pytoolz/toolz three test modules cost 0.73-0.88 CPU s cold, and
0.44-0.52 s with their rewritten code at hand. This module, loaded by the probe plugin
(``_probe_plugin.py``) in every probed cold run, keeps that code in a folder of the
scratch area (``bytecode-cache/`` beside the plugin's folder; nothing is written in the
tree) and reuses it only for the same bytes:

- an entry is found by the SHA-256 of its kind (compiled source, or pytest's assertion
  rewrite with pytest's version and the ``enable_assertion_pass_hook`` setting), the
  module's path, the interpreter's cache tag and the optimisation level, in a folder per
  key; its file name is the SHA-256 of the source bytes; so the code of one file, or of
  other bytes, is never used for another;
- its content is a standard checked-hash ``.pyc`` (PEP 552: magic number, flags ``0b11``,
  the source's SipHash), checked again against the source before use;
- a folder keeps the 4 versions of a file used last (a mutant and its base alternate); a
  write goes to a temporary file renamed into place, and any failure costs only time.

Warm runs keep the same derived code in their server's memory (``_warm_server.py``,
keyed by path and SHA-256 too) and do not use this cache. It runs on every interpreter
validation supports (3.7 and later): no newer syntax, no imports of reviewbench.
"""

import hashlib
import marshal
import os
import sys
from importlib import util

FOLDER = "bytecode-cache"
#: Versions of one file kept.
KEEP = 4
_FLAGS = (0b11).to_bytes(4, "little")  # hash-based, checked (PEP 552)


def entry_path(folder, kind, path, source, extra):
    """Where the code for ``source`` (bytes) at ``path`` is kept."""
    key = hashlib.sha256()
    for part in (kind, path, sys.implementation.cache_tag or "", repr(extra)):
        key.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return os.path.join(folder, key.hexdigest()[:40], hashlib.sha256(source).hexdigest() + ".pyc")


def load(entry, source):
    """The code kept at ``entry`` for ``source``; None when absent or not for these bytes."""
    try:
        with open(entry, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if data[:4] != util.MAGIC_NUMBER or data[4:8] != _FLAGS or data[8:16] != util.source_hash(source):
        return None
    try:
        code = marshal.loads(data[16:])
        os.utime(entry)  # the newest versions are kept: a base used again and again stays
    except (EOFError, ValueError, TypeError, OSError):
        return None
    return code


def store(entry, source, code):
    """Keep ``code`` at ``entry``; drop the oldest versions beyond :data:`KEEP`."""
    folder = os.path.dirname(entry)
    temporary = f"{entry}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(util.MAGIC_NUMBER + _FLAGS + util.source_hash(source) + marshal.dumps(code))
        os.replace(temporary, entry)
        kept = [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".pyc")]
        if len(kept) > KEEP:
            kept.sort(key=lambda name: os.stat(name).st_mtime_ns)
            for old in kept[: len(kept) - KEEP]:
                os.unlink(old)
    except (OSError, ValueError, TypeError):
        try:
            os.unlink(temporary)
        except OSError:
            pass


def install(folder):
    """Route the compilation of source files, and pytest's assertion rewriting, through
    the cache in ``folder`` (for modules imported from now on)."""
    from importlib import _bootstrap_external as external

    source_to_code = external.SourceLoader.source_to_code

    def cached_compile(self, data, path, *, _optimize=-1):
        if not isinstance(data, bytes) or not isinstance(path, str):
            return source_to_code(self, data, path, _optimize=_optimize)
        entry = entry_path(folder, "compile", path, data, (_optimize, sys.flags.optimize))
        code = load(entry, data)
        if code is None:
            code = source_to_code(self, data, path, _optimize=_optimize)
            store(entry, data, code)
        return code

    external.SourceLoader.source_to_code = cached_compile
    try:
        import _pytest.assertion.rewrite as rewrite
        import pytest
    except ImportError:  # another pytest: its rewriting costs what it costs
        return

    def lookup(path, source, hook):
        return load(entry_path(folder, "rewrite", path, source, (pytest.__version__, hook, sys.flags.optimize)), source)

    def keep(path, source, hook, code):
        store(entry_path(folder, "rewrite", path, source, (pytest.__version__, hook, sys.flags.optimize)), source, code)

    cached = cached_rewriter(getattr(rewrite, "_rewrite_test", None), lookup, keep)
    if cached is not None:
        rewrite._rewrite_test = cached


def cached_rewriter(rewrite_test, lookup, keep):
    """pytest's ``_rewrite_test`` answered from a cache: ``lookup(path, source, hook)``
    gives the code kept for those bytes or None, ``keep(path, source, hook, code)`` keeps
    what pytest made (``hook``: the ``enable_assertion_pass_hook`` setting, None where
    pytest has none). pytest 5 and later call it as ``(fn, config)``; 3.x and 4.x as
    ``(config, fn)`` with a ``py.path`` whose own ``stat()`` they expect back. None when
    this pytest has no such function (its rewriting then costs what it costs). Shared by
    the warm server (``_warm_server.py``), which keeps its entries in memory."""
    if rewrite_test is None:
        return None
    try:
        import inspect

        config_first = list(inspect.signature(rewrite_test).parameters)[:1] == ["config"]
    except (TypeError, ValueError):
        return None

    def cached(*args):
        config, fn = (args[0], args[1]) if config_first else (args[1], args[0])
        path = str(fn)
        try:
            with open(path, "rb") as handle:
                source = handle.read()
        except OSError:  # pytest says so its own way
            return rewrite_test(*args)
        try:
            hook = bool(config.getini("enable_assertion_pass_hook"))
        except (ValueError, KeyError):
            hook = None
        code = lookup(path, source, hook)
        if code is not None:
            return (fn.stat() if config_first else os.stat(path)), code
        stat, code = rewrite_test(*args)
        if code is not None:  # None: pytest could not rewrite it, and imports it plainly
            keep(path, source, hook, code)
        return stat, code

    return cached
