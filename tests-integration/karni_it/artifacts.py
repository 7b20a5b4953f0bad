"""Opening a built wheel and sdist for inspection, without installing them."""

from __future__ import annotations

import configparser
import email.parser
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path


@dataclass
class Artifact:
    """One distribution's wheel and sdist, opened for inspection."""

    name: str
    wheel: Path
    sdist: Path
    metadata: Message
    wheel_names: list[str]
    sdist_names: list[str]
    entry_points: dict[str, dict[str, str]]
    pyproject: dict
    sdist_files: dict[str, bytes] = field(repr=False)

    @property
    def version(self) -> str:
        return self.metadata["Version"]

    def wheel_bytes(self, member: str) -> bytes:
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.read(member)


def open_artifact(name: str, wheel: Path, sdist: Path) -> Artifact:
    """Read the metadata, entry points and file lists of ``wheel`` and ``sdist``."""
    with zipfile.ZipFile(wheel) as archive:
        wheel_names = archive.namelist()
        dist_info = next(n.split("/")[0] for n in wheel_names if ".dist-info/" in n)
        metadata_text = archive.read(f"{dist_info}/METADATA").decode("utf-8")
        metadata = email.parser.Parser().parsestr(metadata_text)
        entry_points: dict[str, dict[str, str]] = {}
        if f"{dist_info}/entry_points.txt" in wheel_names:
            parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
            parser.optionxform = str  # entry-point names are case-sensitive
            parser.read_string(archive.read(f"{dist_info}/entry_points.txt").decode())
            entry_points = {s: dict(parser.items(s)) for s in parser.sections()}
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile()]
        top = members[0].name.split("/")[0]
        sdist_files = {}
        for member in members:
            handle = archive.extractfile(member)
            assert handle is not None
            sdist_files[member.name.removeprefix(f"{top}/")] = handle.read()
    return Artifact(
        name=name,
        wheel=wheel,
        sdist=sdist,
        metadata=metadata,
        wheel_names=wheel_names,
        sdist_names=sorted(sdist_files),
        entry_points=entry_points,
        pyproject=tomllib.loads(sdist_files["pyproject.toml"].decode("utf-8")),
        sdist_files=sdist_files,
    )


def find_artifacts(dist_dir: Path, names: list[str]) -> dict[str, Artifact]:
    """Distribution name → its wheel and sdist in ``dist_dir`` (exactly one of each)."""
    found: dict[str, Artifact] = {}
    for name in names:
        stem = name.replace("-", "_")
        wheels = sorted(dist_dir.glob(f"{stem}-*.whl"))
        sdists = sorted(dist_dir.glob(f"{stem}-*.tar.gz"))
        assert len(wheels) == 1, f"{name}: expected one wheel in {dist_dir}, found {wheels}"
        assert len(sdists) == 1, f"{name}: expected one sdist in {dist_dir}, found {sdists}"
        found[name] = open_artifact(name, wheels[0], sdists[0])
    return found
