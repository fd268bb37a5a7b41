"""Credentials of the host that no sandboxed command may read.

Test runs see the host read-only (their interpreter, a venv or pyenv may live anywhere,
the caller's home included), and whatever a test prints lands in the case log, which a
corpus carries to raters and exports. So the system's secrets and the caller's home's
credential files and folders are covered in every sandbox; agents see none of the home
anyway (``_agent.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HOME_SECRETS", "SYSTEM_SECRETS", "secret_paths"]

#: Secrets inside the system folders: password hashes, the host's SSH keys, TLS private keys.
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh",
                  "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d")  # fmt: skip
#: Credentials in a home folder: keys, cloud and forge tokens, package-index passwords.
HOME_SECRETS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".kube", ".docker",
    ".netrc", ".pypirc", ".git-credentials", ".npmrc", ".yarnrc", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".vault-token", ".terraform.d", ".password-store", ".local/share/keyrings",
    ".config/pypoetry/auth.toml", ".config/huggingface", ".cache/huggingface/token", ".huggingface",
)


def secret_paths() -> tuple[Path, ...]:
    """The system's and the caller's home's credential paths that exist here."""
    home = os.path.expanduser("~")
    paths = [Path(p) for p in SYSTEM_SECRETS] + [Path(home, p) for p in HOME_SECRETS]
    return tuple(p for p in paths if os.path.lexists(p) and not p.is_symlink())
