"""The package installs without a compiler or a network (`pip install ./src/python`: the
in-tree PEP 517 backend) and says where it looked when libkvbound.so is missing."""

import importlib
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import kvbound as kvb
from conftest import ROOT, child_env

SRC = os.path.join(ROOT, "src", "python")


def test_missing_library_error_lists_every_place_tried(tmp_path):
    # a copy of the package away from any build tree, run from a directory without build/
    shutil.copytree(os.path.join(SRC, "kvbound"), str(tmp_path / "pkg" / "kvbound"))
    env = child_env()
    env["PYTHONPATH"] = str(tmp_path / "pkg")
    env["KVBOUND_LIB"] = str(tmp_path / "nowhere" / "libkvbound.so")
    env["PKG_CONFIG_PATH"] = str(tmp_path)  # no kvbound.pc there
    env["PKG_CONFIG_LIBDIR"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", "import kvbound"], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    err = r.stderr
    assert "LibraryNotFound" in err and "$KVBOUND_LIB=" in err and "nowhere" in err
    assert "pkg-config" in err and "build tree" in err
    assert str(tmp_path / "pkg" / "build") in err or str(tmp_path / "build") in err


def test_kvbound_lib_may_name_the_directory():
    env = child_env()
    env["KVBOUND_LIB"] = os.path.dirname(kvb.lib_path)
    r = subprocess.run([sys.executable, "-c", "import kvbound; print(kvbound.lib_path)"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == kvb.lib_path


def _backend():
    sys.path.insert(0, os.path.join(SRC, "_build"))
    try:
        return importlib.import_module("kvb_backend")
    finally:
        sys.path.pop(0)


def test_backend_builds_a_wheel_of_the_package(tmp_path):
    be = _backend()
    assert be.get_requires_for_build_wheel() == []
    name = be.build_wheel(str(tmp_path))
    assert name == "kvbound-%s-py3-none-any.whl" % kvb.__version__
    with zipfile.ZipFile(str(tmp_path / name)) as z:
        names = set(z.namelist())
        assert "kvbound/__init__.py" in names and "kvbound/_lib.py" in names
        meta = z.read("kvbound-%s.dist-info/METADATA" % kvb.__version__).decode()
        assert "Requires-Dist: numpy" in meta
        assert z.testzip() is None
    sd = be.build_sdist(str(tmp_path))
    assert os.path.exists(str(tmp_path / sd))


def test_pip_installs_it_offline(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("this python3 has no pip (Debian: python3-pip)")
    target = tmp_path / "site"
    env = dict(child_env(), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--target", str(target), SRC], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    env["PYTHONPATH"] = str(target)
    r = subprocess.run([sys.executable, "-c", "import kvbound, numpy as np; print(kvbound.__file__); "
                        "print(kvbound.exact_attention(np.eye(2), np.eye(2), [1.0, 0.0]))"],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(target))
