"""A Node project's ``node_modules``, installed once per lockfile and shared read-only.

``validate --setup auto`` on a ``package.json`` project installs its dependencies once,
with network, in a sandboxed copy of the repository at the mined HEAD: ``npm ci`` when
there is a ``package-lock.json`` (or shrinkwrap), the lockfile's own manager for
``pnpm-lock.yaml`` and ``yarn.lock`` (yarn 1 and yarn 2+ "berry" told apart by the
lockfile), plain ``npm install`` without one. It
lives under ``CORPUS/envs/node-KEY/``, KEY the hash of the command and of ``package.json``
and the lockfile at HEAD, so a second run reuses it; ``node_modules.json`` there is written
last and marks it complete. Each scratch tree then gets a ``node_modules`` symbolic link
to it (never a copy per case): tests see it read-only, as they see the rest of the host.
Failures and time-outs keep the install's output in ``setup.log`` and name it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..config import Network
from ..errors import GitError, SetupFailed
from ..git.repo import GIT
from ..git.scratch import ScratchClone
from ..sandbox import Sandbox
from .node import node_error_line

__all__ = ["NODE_MODULES", "NodeModules", "build_node_modules", "install_error_line", "node_install_command"]

NODE_MODULES = "node_modules"
_MARKER = "node_modules.json"
_TIMEOUT_S = 1800.0
#: Lockfile → the command that installs exactly it.
_LOCKFILES = (
    ("package-lock.json", "npm ci --no-audit --no-fund"),
    ("npm-shrinkwrap.json", "npm ci --no-audit --no-fund"),
    ("pnpm-lock.yaml", "npx --yes {pnpm} install --frozen-lockfile"),
    ("yarn.lock", "COREPACK_INTEGRITY_KEYS=0 corepack yarn install --frozen-lockfile --non-interactive"),
)
_PNPM = re.compile(r"^pnpm@(\d[\w.+-]*)$")
_YARN = re.compile(r"^yarn@(\d+)([\w.+-]*)$")
#: Yarn 2+ from the npm registry (corepack fetches it from repo.yarnpkg.com, which a
#: registry mirror or proxy may not serve), linked as a plain node_modules rather than
#: Plug'n'Play (tests run with node, which knows no .pnp.cjs), its cache in npm's folder.
_BERRY = ("YARN_NODE_LINKER=node-modules YARN_ENABLE_GLOBAL_CACHE=false YARN_ENABLE_TELEMETRY=0 "
          "npx --yes -p @yarnpkg/cli-dist@{version} yarn install --immutable")  # fmt: skip
_BERRY_LOCK = re.compile(r"^__metadata:\s*\n\s+version:\s*(\d+)", re.MULTILINE)
_NO_LOCKFILE = "npm install --no-audit --no-fund --no-package-lock"


@dataclass(frozen=True)
class NodeModules:
    """An installed ``node_modules`` and what to tell the user about it."""

    path: Path
    command: str
    built: bool
    note: str


def node_install_command(files: set[str], package_manager: str = "", yarn_lock: str = "") -> str:
    """The install command for a project whose root holds ``files``; ``package_manager``:
    its ``package.json``'s ``packageManager`` (``pnpm@10.33.0``, ``yarn@4.5.0``), pinning
    the manager's version; ``yarn_lock``: the head of its ``yarn.lock``, whose
    ``__metadata`` block marks yarn 2+ (lockfile version 4 is yarn 2, 5–6 yarn 3, 7+ yarn 4).
    pnpm comes from the npm registry through npx: corepack's bundled signing keys reject
    current pnpm releases ("No compatible signature found", measured on defu); yarn 1 is
    corepack's own bundled release, which needs no download."""
    lockfile, command = next(((name, command) for name, command in _LOCKFILES if name in files), ("", _NO_LOCKFILE))
    manager = package_manager.split("+", 1)[0]
    if lockfile == "yarn.lock":
        yarn = _YARN.match(manager)
        berry = _BERRY_LOCK.search(yarn_lock)
        if yarn is not None and int(yarn.group(1)) >= 2:
            return _BERRY.format(version=yarn.group(1) + yarn.group(2))
        if berry is not None and yarn is None:
            version = int(berry.group(1))
            return _BERRY.format(version="4" if version >= 7 else "3" if version >= 5 else "2")
    pinned = _PNPM.match(manager)
    return command.replace("{pnpm}", f"pnpm@{pinned.group(1)}" if pinned else "pnpm")


_YARN_ERROR = re.compile(r"YN(?!0000)(\d{4}): (?:│ )?(\s*)")


def _berry_error(lines: list[str]) -> str | None:
    """yarn 2+'s last coded message (YN0000 is its progress), from its first line: the
    indented lines below a message (``│   Exit Code: 128``) are its details."""
    coded = [(i, m) for i, x in enumerate(lines) if (m := _YARN_ERROR.search(x))]
    if not coded:
        return None
    at, last = coded[-1]
    for i, match in reversed(coded):
        if match.group(1) != last.group(1):
            break
        at = i
        if not match.group(2):
            break
    return lines[at]


def install_error_line(log: str) -> str:
    """The line of an install's log that says why it failed: a thrown error, npm's first
    ``npm error``, yarn 1's ``error …``, pnpm's ``ERR_PNPM_…``, yarn 2+'s last coded message
    (``YN0028: The lockfile would have been modified…``, ``YN0001: … Failed cloning the
    repository``), else the last line."""
    lines = [line.strip() for line in log.splitlines()[1:] if line.strip() and not line.startswith("npm notice")]
    found = node_error_line(log) or next((x for x in lines if x.startswith(("npm error", "error "))), None) \
        or next((x for x in lines if "ERR_PNPM_" in x), None) or _berry_error(lines)  # fmt: skip
    return (found or (lines[-1:] or [""])[0])[:300]


def _show(repo: Path, head: str, path: str) -> bytes:
    proc = subprocess.run([*GIT, "-C", str(repo), "show", f"{head}:{path}"], capture_output=True, check=False)
    return proc.stdout if proc.returncode == 0 else b""


def build_node_modules(root: Path, repo: Path, head: str) -> NodeModules:
    """Install the dependencies of ``repo`` at ``head`` under ``root`` (``CORPUS/envs``), or reuse them.

    Raises:
        SetupFailed: the install failed or timed out (its output is in ``setup.log``).
    """
    listing = subprocess.run([*GIT, "-C", str(repo), "ls-tree", "--name-only", head], capture_output=True,
                             text=True, check=False).stdout.split()  # fmt: skip
    try:
        manager = json.loads(_show(repo, head, "package.json") or b"{}").get("packageManager", "")
    except (ValueError, AttributeError):
        manager = ""
    yarn_lock = _show(repo, head, "yarn.lock")[:4096].decode("utf-8", "replace")
    command = node_install_command(set(listing), manager if isinstance(manager, str) else "", yarn_lock)
    digest = hashlib.sha256(command.encode())
    for name in ("package.json", *(n for n, _ in _LOCKFILES)):
        digest.update(name.encode() + b"\0" + _show(repo, head, name) + b"\0")
    key = digest.hexdigest()[:16]
    folder = root.resolve() / f"node-{key}"  # the scratch clone needs an absolute path
    modules = folder / "project" / NODE_MODULES
    if (folder / _MARKER).is_file() and modules.is_dir():
        return NodeModules(modules, command, False, f"node_modules reused from {folder} ({command})")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    project, cache, setup_log = folder / "project", folder / "npm-cache", folder / "setup.log"
    try:
        ScratchClone(repo, project).checkout(head)
    except GitError as exc:
        raise SetupFailed(f"cannot prepare the project copy for npm: {exc}") from None
    cache.mkdir()
    # The install may write its copy of the project, npm's cache and its HOME; nothing else.
    box = Sandbox(Network.ALLOW, None, folder / "home", writable=(project, cache))
    # Every manager's cache in npm's folder; corepack neither prompts nor pins a version into package.json.
    env = (f"export npm_config_cache={shlex.quote(str(cache))} COREPACK_HOME={shlex.quote(str(cache / 'corepack'))} "
           f"YARN_CACHE_FOLDER={shlex.quote(str(cache / 'yarn'))} COREPACK_ENABLE_DOWNLOAD_PROMPT=0 "
           "COREPACK_ENABLE_AUTO_PIN=0 COREPACK_ENABLE_STRICT=0; ")  # fmt: skip
    setup_log.write_text(f"=== {command}\n", encoding="utf-8")
    outcome = box.run(env + command, project, _TIMEOUT_S, setup_log)
    if outcome.timed_out or outcome.exit_code != 0:
        line = install_error_line(setup_log.read_text(errors="replace"))
        why = f"timed out after {_TIMEOUT_S:.0f} s" if outcome.timed_out else f"exit {outcome.exit_code}"
        raise SetupFailed(f"{command} failed ({why}{': ' + line if line else ''}); see {setup_log}")
    if not modules.is_dir():
        modules.mkdir()  # a project without dependencies: an empty folder, so tests find none
    (folder / _MARKER).write_text(json.dumps({"command": command, "key": key}) + "\n", encoding="utf-8")
    return NodeModules(modules, command, True, f"installed node_modules in {folder} ({command})")
