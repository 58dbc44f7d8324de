"""A PEP 517 build backend using the standard library only (PEP 517 wheel and sdist, PEP 660
editable). kvbound's Python package is pure Python with one dependency (numpy), so a wheel is a
zip of kvbound/*.py and its .dist-info; writing it here means `pip install ./src/python` needs
no network and no build tools (pyproject.toml: requires = [])."""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "kvbound"
WHEEL_TAG = "py3-none-any"


def _project():
    """name, version, summary, requires-python and dependencies from pyproject.toml's [project]
    (read with a few regular expressions: tomllib is only in Python >= 3.11)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    sect = text.split("[project]", 1)[1].split("\n[", 1)[0]

    def field(key):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), sect, re.M)
        return m.group(1) if m else ""
    deps = re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", sect, re.M)
    return {"name": field("name"), "version": field("version"), "summary": field("description"),
            "requires_python": field("requires-python"),
            "deps": re.findall(r'"([^"]+)"', deps.group(1)) if deps else []}


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % p["version"],
             "Summary: %s" % p["summary"]]
    if p["requires_python"]:
        lines.append("Requires-Python: %s" % p["requires_python"])
    lines += ["Requires-Dist: %s" % d for d in p["deps"]]
    return "\n".join(lines) + "\n"


def _distinfo(p):
    return "%s-%s.dist-info" % (p["name"], p["version"])


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, files):
    """files: [(archive path, bytes)] of the payload; adds the .dist-info and RECORD."""
    p = _project()
    di = _distinfo(p)
    files = list(files) + [
        ("%s/METADATA" % di, _metadata(p).encode()),
        ("%s/WHEEL" % di, ("Wheel-Version: 1.0\nGenerator: kvb_backend\nRoot-Is-Purelib: true\n"
                           "Tag: %s\n" % WHEEL_TAG).encode()),
        ("%s/top_level.txt" % di, (PACKAGE + "\n").encode())]
    record = [_record_line(n, d) for n, d in files] + ["%s/RECORD,," % di]
    files.append(("%s/RECORD" % di, ("\n".join(record) + "\n").encode()))
    name = "%s-%s-%s.whl" % (p["name"], p["version"], WHEEL_TAG)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            info.external_attr = 0o644 << 16
            z.writestr(info, d, zipfile.ZIP_DEFLATED)
    return name


def _package_files():
    out = []
    pkg = os.path.join(ROOT, PACKAGE)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            with open(os.path.join(pkg, f), "rb") as fh:
                out.append(("%s/%s" % (PACKAGE, f), fh.read()))
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    di = os.path.join(metadata_directory, _distinfo(p))
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    return _distinfo(p)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a .pth file putting this source directory on sys.path."""
    return _write_wheel(wheel_directory, [("%s_editable.pth" % PACKAGE, (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "_build/kvb_backend.py"] + \
                   ["%s/%s" % (PACKAGE, f) for f in sorted(os.listdir(os.path.join(ROOT, PACKAGE)))
                    if f.endswith(".py")]:
            t.add(os.path.join(ROOT, rel), arcname="%s/%s" % (base, rel))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata(p).encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
