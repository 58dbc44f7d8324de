"""A Python class registered as a kvbound method (kvb_method_register through ctypes
callbacks): created by name like a built-in, its randomness from the method's generator, its
parameters validated by the library, and every exception inside a callback turned into an error
status with a message, never a crash."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kvbound as kvb
from conftest import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "methods"))
from strided_sample_py import StridedSamplePy  # noqa: E402

D_KEY, D_VALUE, SCALE = 5, 3, 0.4


def _ensure(cls, **kw):
    name = kw.get("name") or cls.name
    if name not in kvb.registered():
        kvb.register_method(cls, **kw)
    return name


@pytest.fixture(scope="module")
def data():
    s = kvb.stream("gaussian", n=64, d_key=D_KEY, d_value=D_VALUE, seed=31)
    return s.K, s.V, s.Q[-5:]


def test_registered_method_is_listed_and_runs_by_name(data):
    K, V, Q = data
    name = _ensure(StridedSamplePy)
    row = next(m for m in kvb.methods() if m["name"] == name)
    assert row["randomized"] and row["params"][0]["name"] == "stride"
    with kvb.Method(name, D_KEY, D_VALUE, scale=SCALE, seed=3, stride=4) as m:
        m.update_many(K, V)
        Z = m.query_many(Q)
        mem = m.memory()
    # the same answer computed here from the offset the method drew
    inst = [i for i in kvb.pymethod._instances.values()]  # closed above: none of ours left
    assert all(not isinstance(i, StridedSamplePy) or i.seen != 64 for i in inst)
    offsets = []
    for o in range(4):
        keep = np.arange(64) % 4 == o
        offsets.append((o, kvb.exact_attention(K[keep], V[keep], Q, scale=SCALE)))
    match = [o for o, z in offsets if np.max(np.abs(z - Z)) <= 1e-12]
    assert len(match) == 1
    assert mem == (16 * (D_KEY + D_VALUE) * 8, 32)


def test_a_seed_reproduces_a_randomized_python_method(data):
    K, V, Q = data
    name = _ensure(StridedSamplePy)
    runs = {seed: kvb.run(name, K, V, Q, scale=SCALE, seed=seed, stride=8)[0] for seed in range(6)}
    again = kvb.run(name, K, V, Q, scale=SCALE, seed=2, stride=8)[0]
    assert np.array_equal(runs[2], again)
    distinct = {r.tobytes() for r in runs.values()}
    assert len(distinct) > 1  # the offset does come from the seed


def test_parameters_are_validated_by_the_library():
    name = _ensure(StridedSamplePy)
    for bad in (dict(stride=0), dict(stride=2.5), dict(strid=3)):
        with pytest.raises(kvb.KvbError) as e:
            kvb.Method(name, D_KEY, D_VALUE, **bad)
        assert e.value.name in ("KVB_EINVAL", "KVB_ENOTFOUND") and "strid" in e.value.message
    # the library validates the inputs before the callback: NaN/dimension errors never reach it
    with kvb.Method(name, D_KEY, D_VALUE, stride=1) as m:
        with pytest.raises(kvb.KvbError) as e:
            m.update(np.full(D_KEY, np.nan), np.zeros(D_VALUE))
        assert e.value.name == "KVB_EDOM"
        with pytest.raises(kvb.KvbError) as e:
            m.query(np.zeros(D_KEY))
        assert e.value.name == "KVB_ESTATE"


class Faulty:
    """raises where its parameter says (for the error-path tests)"""
    params = {"fail": ""}  # which callback misbehaves
    mutants = {"off_by_one": "a test mutant"}

    def __init__(self, ctx):
        self.fail = ctx.params["fail"]
        self.mutant = ctx.mutant
        if self.fail == "init":
            raise RuntimeError("init refused on purpose")
        self.n = 0
        self.dv = ctx.d_value

    def update(self, k, v):
        if self.fail == "update" and self.n == 2:
            raise ValueError("update refused on purpose")
        if self.fail == "update_kvb" and self.n == 2:
            raise kvb.KvbError(8, "a FAIL event on purpose")
        self.n += 1

    def query(self, q):
        if self.fail == "query":
            return [1.0]  # wrong length
        if self.fail == "query_nan":
            return np.full(self.dv, np.nan)
        if self.fail == "query_type":
            return "not numbers"
        return np.full(self.dv, float(self.n))

    def memory(self):
        if self.fail == "memory":
            raise ZeroDivisionError("memory on purpose")
        if self.fail == "memory_negative":
            return (-1, 0)
        return (8 * self.n, self.n)


def test_exceptions_in_callbacks_become_errors_not_crashes():
    name = _ensure(Faulty, name="faulty_py")
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method(name, 3, 2, fail="init")
    assert "faulty_py" in e.value.message and "init refused on purpose" in e.value.message
    assert "test_pymethod.py:" in e.value.where  # the line that raised

    m = kvb.Method(name, 3, 2, fail="update")
    m.update([1, 2, 3], [1, 2])
    m.update([1, 2, 3], [1, 2])
    with pytest.raises(kvb.KvbError) as e:
        m.update([1, 2, 3], [1, 2])
    assert e.value.name == "KVB_EINVAL" and "ValueError: update refused on purpose" in e.value.message
    assert m.n == 2 and np.array_equal(m.query([0, 0, 0]), [2.0, 2.0])

    m = kvb.Method(name, 3, 2, fail="update_kvb")
    m.update_many(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(kvb.KvbError) as e:
        m.update_many(np.ones((2, 3)), np.ones((2, 2)))
    assert e.value.name == "KVB_EFAIL" and e.value.message.startswith("row 0:")

    for fail, status in (("query", "KVB_EDIM"), ("query_nan", "KVB_ERANGE"), ("query_type", "KVB_EINVAL")):
        m = kvb.Method(name, 3, 2, fail=fail)
        m.update([1, 2, 3], [1, 2])
        with pytest.raises(kvb.KvbError) as e:
            m.query([0, 0, 0])
        assert e.value.name == status, (fail, e.value)

    for fail in ("memory", "memory_negative"):
        m = kvb.Method(name, 3, 2, fail=fail)
        m.update([1, 2, 3], [1, 2])
        assert m.memory() == (0, 0)  # memory has no status: it reports nothing
    assert any(cb == "memory" for _, cb, _ in kvb.pymethod.callback_errors)

    with kvb.Method(name, 3, 2, mutant="off_by_one") as m:
        assert m.mutant == "off_by_one"


def test_refused_registrations_name_the_problem():
    _ensure(StridedSamplePy)
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(StridedSamplePy)  # twice
    assert "duplicate" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(StridedSamplePy, name="exact")  # a built-in's name
    assert "duplicate" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(StridedSamplePy, name="has,comma")
    assert "','" in e.value.message

    class NoParts:
        declares = {"unbiased_num"}
        def __init__(self, ctx): pass
        def update(self, k, v): pass
        def query(self, q): return q
        def memory(self): return (0, 0)
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(NoParts, name="no_parts_py")
    assert "query_parts" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(NoParts, name="bad_declares_py", declares={"unbiased"})
    with pytest.raises(kvb.KvbError) as e:
        kvb.register_method(object, name="no_update_py")
    assert "update" in e.value.message
    assert "no_parts_py" not in [m["name"] for m in kvb.methods()]


CHILD = r"""
import sys, numpy as np
sys.path.insert(0, %r)
import kvbound as kvb
class Boom:
    def __init__(self, ctx): self.n = 0
    def update(self, k, v):
        self.n += 1
        if self.n == 3: raise KeyError("boom")
    def query(self, q): return np.zeros(2)
    def memory(self): return (0, 0)
kvb.register_method(Boom, name="boom_py")
m = kvb.Method("boom_py", 3, 2)
try:
    m.update_many(np.ones((5, 3)), np.ones((5, 2)))
except kvb.KvbError as e:
    print("RAISED", e.name, e.message)
print("ALIVE", m.n)
"""


def test_a_callback_error_in_a_fresh_process_leaves_it_alive():
    r = subprocess.run([sys.executable, "-c", CHILD % os.path.join(HERE, "methods")],
                       capture_output=True, text=True, env=child_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "RAISED KVB_EINVAL row 2: python method boom_py: update raised KeyError" in r.stdout
    assert "ALIVE 2" in r.stdout


class PyExact:
    """exact attention in NumPy, declaring everything (for the ABI v1 callback plumbing)"""
    name = "py_exact_test"
    declares = {"unbiased_num", "unbiased_den", "error_bound"}

    def __init__(self, ctx):
        self.scale, self.K, self.V = ctx.scale, [], []

    def update(self, k, v):
        self.K.append(k)
        self.V.append(v)

    def query(self, q):
        return kvb.exact_attention(np.array(self.K), np.array(self.V), q, scale=self.scale)

    def query_parts(self, q):
        if q[0] == 123.0:
            raise ArithmeticError("parts on purpose")
        w = np.exp(self.scale * (np.array(self.K) @ q))
        return w @ np.array(self.V), w.sum()

    def error_bound(self, inp):
        return 1e-9 * inp.n, 0.0

    def memory(self):
        return 8 * len(self.K) * (len(self.K[0]) + len(self.V[0])) if self.K else 0, 2 * len(self.K)


def test_query_parts_and_error_bound_reach_c(data):
    import ctypes
    K, V, Q = data
    name = _ensure(PyExact, equivalent_to="exact", equivalence_tol=1e-12)
    t = kvb._lib.lib.kvb_method_lookup(name.encode()).contents
    assert t.declares == 7 and t.equivalent_to == b"exact" and t.equivalence_tol == 1e-12
    PD = ctypes.POINTER(ctypes.c_double)
    with kvb.Method(name, D_KEY, D_VALUE, scale=SCALE) as m:
        m.update_many(K, V)
        num, den = np.zeros(D_VALUE), ctypes.c_double()
        q = np.ascontiguousarray(Q[0])
        assert t.query_parts(m._ptr, q.ctypes.data_as(PD), num.ctypes.data_as(PD), ctypes.byref(den)) == 0
        w = np.exp(SCALE * (K @ Q[0]))
        assert np.allclose(num, w @ V, rtol=1e-12) and abs(den.value - w.sum()) <= 1e-12 * w.sum()
        bad = np.full(D_KEY, 123.0)
        st = t.query_parts(m._ptr, bad.ctypes.data_as(PD), num.ctypes.data_as(PD), ctypes.byref(den))
        assert st == 1 and "parts on purpose" in kvb._lib.lib.kvb_strerror_last().decode()
        inp = kvb._lib.BoundInput(n=100, d_key=D_KEY, d_value=D_VALUE, scale=SCALE)
        eps, delta = ctypes.c_double(), ctypes.c_double(-1)
        assert t.error_bound(m._ptr, ctypes.byref(inp), ctypes.byref(eps), ctypes.byref(delta)) == 0
        assert eps.value == pytest.approx(1e-7) and delta.value == 0.0
        Z = m.query_many(Q)
    assert np.max(np.abs(Z - kvb.exact_attention(K, V, Q, scale=SCALE))) <= 1e-12


def test_load_plugin_refusal_is_an_error(tmp_path):
    with pytest.raises(kvb.KvbError) as e:
        kvb.load_plugin(str(tmp_path / "absent.so"))
    assert "absent.so" in e.value.message


PLUGINS = os.path.join(os.environ.get("KVB_BUILD", os.path.join(HERE, "..", "..", "build")), "plugins")


@pytest.mark.skipif(not os.path.exists(os.path.join(PLUGINS, "strided_sample.so")),
                    reason="build/plugins/*.so not built (make)")
def test_a_c_plugin_loaded_from_python_is_a_method_and_bad_ones_are_refused(data):
    K, V, Q = data
    kvb.load_plugin(os.path.join(PLUGINS, "strided_sample.so"))
    kvb.load_plugin(os.path.join(PLUGINS, "strided_sample.so"))  # the same file again: a no-op
    assert "strided_sample" in [m["name"] for m in kvb.methods()]
    Z, mem = kvb.run("strided_sample", K, V, Q, scale=SCALE, stride=4)
    # it keeps tokens 0, 4, 8, ...: exact attention over those
    assert np.max(np.abs(Z - kvb.exact_attention(K[::4], V[::4], Q, scale=SCALE))) <= 1e-12
    assert mem == (16 * (D_KEY + D_VALUE) * 8, 32)
    for bad, words in (("bad_abi.so", "ABI"), ("null_callback.so", "query"),
                       ("no_entry.so", "kvb_plugin_entry")):
        with pytest.raises(kvb.KvbError) as e:
            kvb.load_plugin(os.path.join(PLUGINS, bad))
        assert bad in e.value.message and words in e.value.message, e.value
    assert "no_query" not in [m["name"] for m in kvb.methods()]


class _ClosesItself:
    """update (or memory) closes the kvbound.Method it runs in: the free used to happen inside
    the callback, so the library's wrapper then wrote to freed memory (ASan:
    heap-use-after-free in src/core/method.c)."""
    name = "closes_itself_py"
    handle = None   # the kvbound.Method, set by the test
    log = []

    def __init__(self, ctx):
        self.inside = False

    def update(self, k, v):
        self.inside = True
        _ClosesItself.handle.close()
        self.inside = False

    def query(self, q):
        return np.zeros(D_VALUE)

    def memory(self):
        self.inside = True
        _ClosesItself.handle.close()
        self.inside = False
        return (0, 0)

    def close(self):
        _ClosesItself.log.append("freed inside a callback" if self.inside else "freed after")


def test_closing_the_method_from_its_own_callback_defers_the_free(data):
    K, V, Q = data
    name = _ensure(_ClosesItself)
    for how in ("update", "update_many", "memory"):
        _ClosesItself.log = []
        m = kvb.Method(name, D_KEY, D_VALUE)
        _ClosesItself.handle = m
        if how == "update":
            m.update(K[0], V[0])  # completes: the free waits until the callback returned
            assert m.n == 1
        elif how == "update_many":
            with pytest.raises(kvb.KvbError) as e:  # row 1 finds the method closed
                m.update_many(K[:3], V[:3])
            assert e.value.name == "KVB_ESTATE" and m.n == 1
        else:
            m.memory()
        assert _ClosesItself.log == ["freed after"], how
        with pytest.raises(kvb.KvbError) as e:
            m.update(K[0], V[0])
        assert e.value.name == "KVB_ESTATE"
        m.close()  # a second close is harmless
        assert _ClosesItself.log == ["freed after"]
