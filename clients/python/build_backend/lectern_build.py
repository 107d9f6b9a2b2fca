"""The package's build backend (PEP 517, with PEP 660 editable installs), standard library only.

The package has no dependency, and neither has its build: a wheel and an sdist build offline, with
nothing to install first, on any Python the package supports. The metadata is core metadata 2.4
(PEP 639: ``License-Expression`` and ``License-File``), read from ``[project]`` in
``pyproject.toml``; the wheel holds ``src/lectern`` as it is.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import io
import os
import re
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# Python 3.10 reads TOML with tomli, which get_requires_for_build_* asks for.
tomllib = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")

ROOT = Path(__file__).resolve().parent.parent
SOURCES = Path("src")
#: What an sdist holds besides the package's sources and the licence files.
SDIST_FILES = ("pyproject.toml", "README.md", "build_backend/lectern_build.py")
TAG = "py3-none-any"
#: Zip entries carry this time unless SOURCE_DATE_EPOCH says otherwise, so that builds repeat.
DEFAULT_EPOCH = 315532800  # 1980-01-01, the earliest a zip file can hold


def _project() -> Dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project: Dict[str, Any] = tomllib.load(file)["project"]
    for field in ("name", "version", "license", "license-files", "requires-python"):
        if field not in project:
            raise ValueError(f"pyproject.toml: [project] needs {field}")
    if not isinstance(project["license"], str):
        raise ValueError('pyproject.toml: project.license must be an SPDX expression, e.g. "MIT"')
    return project


def _names(project: Dict[str, Any]) -> Tuple[str, str, str]:
    """The distribution's name as file names spell it, its version, and its ``.dist-info`` folder."""
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    version = str(project["version"])
    return name, version, f"{name}-{version}.dist-info"


def _license_files(project: Dict[str, Any]) -> List[Path]:
    files: List[Path] = []
    for pattern in project["license-files"]:
        matched = sorted(path.relative_to(ROOT) for path in ROOT.glob(pattern) if path.is_file())
        if not matched:
            raise ValueError(f"pyproject.toml: license-files pattern {pattern!r} matches no file")
        files.extend(matched)
    return files


def _package_files() -> List[Path]:
    """Every file of the package under ``src/``, compiled files left out, in a stable order."""
    found = [
        path.relative_to(ROOT / SOURCES)
        for path in (ROOT / SOURCES).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")
    ]
    return sorted(found)


def _metadata(project: Dict[str, Any]) -> bytes:
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    lines.append(f"License-Expression: {project['license']}")
    lines.extend(f"License-File: {path.as_posix()}" for path in _license_files(project))
    lines.extend(f"Classifier: {classifier}" for classifier in project.get("classifiers", []))
    lines.append(f"Requires-Python: {project['requires-python']}")
    lines.extend(f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", []))
    lines.extend(f"Project-URL: {label}, {url}" for label, url in project.get("urls", {}).items())
    text = "\n".join(lines) + "\n"
    readme = project.get("readme")
    if readme is not None:
        if not (isinstance(readme, str) and readme.endswith(".md")):
            raise ValueError("pyproject.toml: project.readme must name a Markdown file")
        text += "Description-Content-Type: text/markdown\n\n" + (ROOT / readme).read_text(encoding="utf-8")
    return text.encode("utf-8")


def _epoch() -> int:
    return max(DEFAULT_EPOCH, int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH)))


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, contents: List[Tuple[str, bytes]], project: Dict[str, Any]) -> str:
    name, version, dist_info = _names(project)
    wheel_name = f"{name}-{version}-{TAG}.whl"
    entries = list(contents)
    entries.append((f"{dist_info}/METADATA", _metadata(project)))
    entries.append(
        (f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: lectern_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode())
    )
    for path in _license_files(project):
        entries.append((f"{dist_info}/licenses/{path.as_posix()}", (ROOT / path).read_bytes()))
    record_name = f"{dist_info}/RECORD"
    record = "".join(_record_line(entry, data) + "\n" for entry, data in entries) + f"{record_name},,\n"
    entries.append((record_name, record.encode("utf-8")))
    stamp = time.gmtime(_epoch())[:6]
    with zipfile.ZipFile(Path(directory) / wheel_name, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for entry, data in entries:
            info = zipfile.ZipInfo(entry, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return wheel_name


def _tomli_if_needed() -> List[str]:
    return [] if sys.version_info >= (3, 11) else ["tomli>=1.1"]


# The PEP 517 and PEP 660 hooks.


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return _tomli_if_needed()


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return _tomli_if_needed()


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return _tomli_if_needed()


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None
) -> str:
    project = _project()
    dist_info = Path(metadata_directory) / _names(project)[2]
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_bytes(_metadata(project))
    for path in _license_files(project):
        target = dist_info / "licenses" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / path).read_bytes())
    return dist_info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    project = _project()
    contents = [(path.as_posix(), (ROOT / SOURCES / path).read_bytes()) for path in _package_files()]
    return _write_wheel(wheel_directory, contents, project)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    project = _project()
    # A .pth file puts the checkout's src/ on the path: edits apply without reinstalling.
    pth = (str(ROOT / SOURCES) + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [(f"_{_names(project)[0]}_editable.pth", pth)], project)


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = _project()
    name, version, _ = _names(project)
    base = f"{name}-{version}"
    files = [Path(file) for file in SDIST_FILES] + _license_files(project)
    files += [SOURCES / path for path in _package_files()]
    sdist_name = f"{base}.tar.gz"
    mtime = _epoch()

    def add(archive: tarfile.TarFile, entry: str, data: bytes) -> None:
        info = tarfile.TarInfo(f"{base}/{entry}")
        info.size, info.mtime, info.mode = len(data), mtime, 0o644
        archive.addfile(info, io.BytesIO(data))

    with tarfile.open(Path(sdist_directory) / sdist_name, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        add(archive, "PKG-INFO", _metadata(project))
        for path in sorted(set(files)):
            add(archive, path.as_posix(), (ROOT / path).read_bytes())
    return sdist_name
