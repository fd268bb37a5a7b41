"""Sets up a sandbox's filesystem from inside its namespaces, then execs the command.

Run by the isolation prefix as the first process of a new user + mount + PID namespace
(``unshare --user --map-root-user --mount --pid --fork``), with the Python interpreter in
isolated mode and no site packages: it imports nothing but the standard library, so it
needs nothing the masks below will hide. ``argv[1]`` is the JSON layout
(:class:`reviewbench.sandbox.Layout`); the rest is the command. In order:

1. every mount of the host is remounted read-only (``/proc``, ``/sys``, ``/dev`` aside);
2. outer paths first, each hidden path is covered by an empty tmpfs (a file: by
   ``/dev/null``) and each kept path bound at its own path, read-write or read-only, from a
   descriptor opened before any cover (so a kept tree inside a hidden ``/tmp`` appears, and
   a hidden corpus inside a kept folder stays hidden);
3. the covers are made read-only;
4. a fresh ``/dev/shm`` and a ``/proc`` of the new PID namespace (the caller's processes,
   and so their environments, are not visible);
5. resource limits, ``cwd``, and ``exec``.

Any failure exits 125 with one line on stderr, before the command runs.
"""

import ctypes
import json
import os
import resource
import stat
import sys
import warnings  # noqa: F401 - os.execvp imports it late, when the stdlib may be hidden

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21

# statvfs flags → mount flags that must be repeated on a remount (the kernel refuses to
# clear a flag a less privileged namespace inherited locked).
_KEEP = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
         (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
_PSEUDO = ("/proc", "/sys", "/dev")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)


class _SetupError(Exception):
    pass


def _mount(source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise _SetupError(f"mount {target}: {os.strerror(err)}")


def _kept_flags(path):
    got = os.statvfs(path).f_flag
    return sum(flag for st, flag in _KEEP if got & st)


def _unescape(field):
    return field.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def _mount_points():
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
        points = [_unescape(line.split()[4]) for line in handle if line.strip()]
    return sorted(set(points), key=len)


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def _read_only_host():
    for point in _mount_points():
        if any(_under(point, p) for p in _PSEUDO):
            continue
        try:
            flags = _kept_flags(point)
        except OSError:
            continue  # covered by a later mount
        try:
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except _SetupError as exc:
            raise _SetupError(f"cannot make {point} read-only ({exc})") from None


def _hide(path, covers):
    if not os.path.lexists(path) or os.path.islink(path):
        return
    if os.path.isdir(path):
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        covers.append(path)
    else:
        _mount("/dev/null", path, None, MS_BIND)


def _bind(fd, path, writable):
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.makedirs(path, exist_ok=True)
    else:  # a kept file (the resolver's) inside a cover: its mount point is an empty file
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.lexists(path):
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
    flags = _kept_flags(path)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | flags | (0 if writable else MS_RDONLY))


def main(argv):
    layout = json.loads(argv[1])
    command = argv[2:]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    keep = []
    for path, writable in layout["keep"]:
        try:
            keep.append((os.open(path, os.O_PATH | os.O_CLOEXEC), path, writable))
        except OSError as exc:
            raise _SetupError(f"cannot open {path}: {exc.strerror}") from None
    if layout["read_only"]:
        _read_only_host()
    # Outer paths first: a kept path inside a hidden one is bound into its cover, a hidden
    # path inside a kept one is covered on top of the binding.
    steps = [(path, None) for path in layout["hide"]] + [(path, (fd, w)) for fd, path, w in keep]
    steps.sort(key=lambda step: (len(step[0]), step[1] is not None))
    covers = []
    for path, kept in steps:
        if kept is None:
            _hide(path, covers)
        else:
            _bind(kept[0], path, kept[1])
            os.close(kept[0])
    for path in covers:
        _mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except _SetupError:
        # No new proc here: hide the host's rather than show the caller's environment.
        _mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if layout.get("memory_bytes"):
        limit = layout["memory_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.chdir(layout["cwd"])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"reviewbench sandbox: cannot run {command[0]}: {exc.strerror}\n")
        sys.exit(127)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (_SetupError, OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"reviewbench sandbox: {exc}\n")
        sys.exit(125)
