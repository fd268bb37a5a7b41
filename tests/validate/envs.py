"""Real Python environments for validation tests, built offline.

A test environment is a ``python -m venv --without-pip`` whose site-packages also sees
this interpreter's (a ``.pth`` line: pytest is there), with tiny packages installed from
wheels written here by ``pip install --no-index``: no network, no build backend.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path


def wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel of ``files`` (paths inside site-packages → text)."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    entries = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: reviewbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    target = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return target


def venv(path: Path, wheels: list[Path] = (), *, see_pytest: bool = True) -> Path:
    """A virtual environment at ``path`` with ``wheels`` installed; its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    if see_pytest:
        Path(purelib, "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--disable-pip-version-check", "--prefix", str(path), *map(str, wheels)],
                       check=True, capture_output=True)  # fmt: skip
    return python
