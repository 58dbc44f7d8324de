"""Shared set-up of the Python bindings' tests (run by scripts/check-python in `make check`, or
by hand: PYTHONPATH=src/python KVBOUND_LIB=build/libkvbound.so python3 -m pytest tests/python)."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src", "python"))
BUILD = os.environ.get("KVB_BUILD", os.path.join(ROOT, "build"))
os.environ.setdefault("KVBOUND_LIB", os.path.join(BUILD, "libkvbound.so"))
os.environ.setdefault("KVBOUND_PROPS_LIB", os.path.join(BUILD, "libkvbound-props.so"))
os.environ.setdefault("KVBOUND_CLI_LIB", os.path.join(BUILD, "libkvbound-cli.so"))


@pytest.fixture
def kvb():
    import kvbound
    return kvbound


def child_env():
    """The environment a child Python needs to import these bindings."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "src", "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
