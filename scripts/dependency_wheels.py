"""Wheels of Karni's third-party runtime dependencies, for installs that never reach an index.

The bench and the integration tests install the built wheels with
``--no-index --find-links DIR``, as a user would from a folder of wheels, and
with the network cut. karni-cli needs ``tomlkit`` (for ``karni config set``),
so DIR must hold its wheel too: it is repacked here from the copy installed in
the running environment (a pure-Python wheel, its files unchanged, a fresh
``RECORD``), so nothing is downloaded.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

RUNTIME_DEPENDENCIES = ("tomlkit",)
"""Third-party distributions the published packages require at run time."""

_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD", "uv_cache.json"}


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tag(distribution: metadata.Distribution) -> str:
    for line in (distribution.read_text("WHEEL") or "").splitlines():
        if line.startswith("Tag:"):
            return line.partition(":")[2].strip()
    raise SystemExit(f"{distribution.metadata['Name']} was not installed from a wheel")


def repack(name: str, out_dir: Path) -> Path:
    """Write ``name``'s wheel into ``out_dir`` from its installed files; return its path."""
    distribution = metadata.distribution(name)
    version = distribution.version
    stem = f"{name.replace('-', '_')}-{version}"
    wheel = out_dir / f"{stem}-{_tag(distribution)}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in distribution.files or []:
            path = file.as_posix()
            parts = path.split("/")
            if ".." in parts or "__pycache__" in parts or path.endswith(".pyc"):
                continue
            if parts[0].endswith(".dist-info") and parts[-1] in _INSTALLER_FILES:
                continue
            data = Path(file.locate()).read_bytes()
            archive.writestr(path, data)
            records.append(f"{path},sha256={_digest(data)},{len(data)}")
        record = f"{stem}.dist-info/RECORD"
        archive.writestr(record, "\n".join([*records, f"{record},,"]) + "\n")
    return wheel


def repack_all(out_dir: Path) -> list[Path]:
    """Every runtime dependency's wheel, written into ``out_dir``."""
    return [repack(name, out_dir) for name in RUNTIME_DEPENDENCIES]
