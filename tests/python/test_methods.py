"""Every registered built-in method by name through the bindings: creation with parameters,
update/query/memory, batch helpers, reproducibility, and refusals that leave the state as it
was."""

import math

import numpy as np
import pytest

import kvbound as kvb

D_KEY, D_VALUE, N = 6, 4, 96
SCALE = 1 / math.sqrt(D_KEY)

# The parameters a built-in requires (its table's NaN defaults), at small valid values.
REQUIRED = {
    "subgen": dict(delta=0.5, t=4, s=8),
    "merge_reduce": dict(r_key=8.0, r_value=8.0, t=8, T=2),
    "balancekv": dict(r=8.0, t=8, T=2, eps=0.5, n=N),
    "recent_kcenter": dict(window=8, centers=8),
    "sink_recent": dict(budget=16), "h2o": dict(budget=16), "snapkv": dict(budget=16, window=4),
    "pyramidkv": dict(budget=16, window=4), "tova": dict(budget=16), "knorm": dict(budget=16),
}
BUILTINS = ["exact", "subgen", "merge_reduce", "balancekv", "balancekv_block", "uniform_sample",
            "recent_kcenter", "z_zero", "sink_recent", "h2o", "snapkv", "pyramidkv", "tova",
            "knorm", "kivi", "q8_0", "q4_0"]


@pytest.fixture(scope="module")
def data():
    s = kvb.stream("gaussian", n=N, d_key=D_KEY, d_value=D_VALUE, seed=21)
    return s.K, s.V, s.Q[-8:]


def test_every_builtin_is_listed():
    names = [m["name"] for m in kvb.methods()]
    assert set(BUILTINS) <= set(names)


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_round_trip(name, data):
    K, V, Q = data
    params = REQUIRED.get(name, {})
    m = kvb.Method(name, D_KEY, D_VALUE, scale=SCALE, seed=4, **params)
    m.update_many(K, V)
    assert m.n == N
    Z = m.query_many(Q)
    assert Z.shape == (len(Q), D_VALUE) and np.all(np.isfinite(Z))
    assert np.array_equal(Z[3], m.query(Q[3]))  # one query == the batch's row
    mem = m.memory()
    assert mem.bytes >= 0 and mem.vectors >= 0
    # the same seed and parameters reproduce every answer
    again, _ = kvb.run(name, K, V, Q, scale=SCALE, seed=4, **params)
    assert np.array_equal(Z, again)
    m.close()


def test_exact_method_is_exact_attention(data):
    K, V, Q = data
    Z, mem = kvb.run("exact", K, V, Q, scale=SCALE)
    assert np.max(np.abs(Z - kvb.exact_attention(K, V, Q, scale=SCALE))) <= 1e-12
    assert mem.vectors == 2 * N


def test_z_zero_answers_zero(data):
    K, V, Q = data
    Z, _ = kvb.run("z_zero", K, V, Q)
    assert not np.any(Z)


def test_sink_recent_keeps_its_budget_and_parameters_in_the_name(data):
    K, V, Q = data
    with kvb.Method("sink_recent,budget=10", D_KEY, D_VALUE, scale=SCALE) as m:
        m.update_many(K, V)
        assert m.memory().vectors == 2 * 10
        assert m.params == {"budget": 10.0}


def test_missing_or_bad_parameters_raise():
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method("subgen", D_KEY, D_VALUE, delta=0.5, t=4)
    assert e.value.name == "KVB_EINVAL" and "'s'" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method("sink_recent", D_KEY, D_VALUE, budget=1)   # below its minimum 2
    assert "budget" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method("sink_recent", D_KEY, D_VALUE, budget=2.5)  # an integer parameter
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method("no_such_method", D_KEY, D_VALUE)
    assert e.value.name == "KVB_ENOTFOUND"
    with pytest.raises(kvb.KvbError):
        kvb.Method("exact", 0, D_VALUE)
    with pytest.raises(kvb.KvbError):
        kvb.Method("exact", D_KEY, D_VALUE, scale=-1)
    with pytest.raises(kvb.KvbError) as e:
        kvb.Method("sink_recent", D_KEY, D_VALUE, budget=8, mutant="no_such_mutant")
    assert "sink_off_by_one" in e.value.message  # the error lists the type's mutants


def test_mutant_by_parameter():
    with kvb.Method("sink_recent", D_KEY, D_VALUE, budget=8, mutant="evict_newest") as m:
        assert m.mutant == "evict_newest"
    with kvb.Method("sink_recent", D_KEY, D_VALUE, budget=8) as m:
        assert m.mutant is None


@pytest.mark.parametrize("name", ["exact", "subgen", "balancekv_block", "h2o"])
def test_bad_input_raises_and_leaves_the_state_unchanged(name, data):
    K, V, Q = data
    m = kvb.Method(name, D_KEY, D_VALUE, scale=SCALE, seed=9, **REQUIRED.get(name, {}))
    with pytest.raises(kvb.KvbError) as e:
        m.query(Q[0])  # before any update
    assert e.value.name == "KVB_ESTATE"
    m.update_many(K[:50], V[:50])
    z0, mem0 = m.query(Q[0]), m.memory()
    nan_k = K[50].copy()
    nan_k[2] = np.nan
    inf_v = V[50].copy()
    inf_v[0] = -np.inf
    bad_calls = [
        (lambda: m.update(nan_k, V[50]), "KVB_EDOM"),
        (lambda: m.update(K[50], inf_v), "KVB_EDOM"),
        (lambda: m.update(K[50][:-1], V[50]), "KVB_EDIM"),
        (lambda: m.update(K[50], np.ones(D_VALUE + 1)), "KVB_EDIM"),
        (lambda: m.update(np.ones((2, D_KEY)), V[50]), "KVB_EDIM"),
        (lambda: m.query(np.full(D_KEY, np.nan)), "KVB_EDOM"),
        (lambda: m.query(np.ones(D_KEY + 2)), "KVB_EDIM"),
        # a batch with one bad row is refused whole: no row of it is absorbed
        (lambda: m.update_many(np.vstack([K[50:60], nan_k]), np.vstack([V[50:60], V[60]])), "KVB_EDOM"),
        (lambda: m.update_many(K[50:60], V[50:59]), "KVB_EDIM"),
        (lambda: m.query_many(np.ones((3, D_KEY + 1))), "KVB_EDIM"),
    ]
    for call, status in bad_calls:
        with pytest.raises(kvb.KvbError) as e:
            call()
        assert e.value.name == status, (name, e.value)
        assert m.n == 50 and m.memory() == mem0
        assert np.array_equal(m.query(Q[0]), z0), name
    # and the method goes on as if the bad calls had never happened
    ref = kvb.Method(name, D_KEY, D_VALUE, scale=SCALE, seed=9, **REQUIRED.get(name, {}))
    ref.update_many(K[:50], V[:50])
    ref.query(Q[0])
    m.update_many(K[50:], V[50:])
    ref.update_many(K[50:], V[50:])
    assert np.array_equal(m.query_many(Q), ref.query_many(Q))


def test_closed_method_raises():
    m = kvb.Method("exact", 2, 2)
    m.close()
    with pytest.raises(kvb.KvbError) as e:
        m.update([1, 2], [3, 4])
    assert e.value.name == "KVB_ESTATE"


GARBAGE = [None, "text", [["a", "b"]], 3, [], [[1, 2], [3]], np.array([1 + 2j, 3]), {"k": 1},
           np.ones((2, 2, 2)), np.array([np.inf] * D_KEY), np.full(D_KEY, 1 + 1j)]


def test_garbage_input_raises_kvberror_and_never_crashes(data):
    K, V, Q = data
    m = kvb.Method("exact", D_KEY, D_VALUE, scale=SCALE)
    m.update_many(K[:10], V[:10])
    z0 = m.query(Q[0])
    for g in GARBAGE:
        for call in (lambda: m.update(g, V[0]), lambda: m.update(K[0], g), lambda: m.query(g),
                     lambda: m.update_many(g, V[:1]), lambda: m.query_many(g),
                     lambda: kvb.exact_attention(g, V, Q[0]), lambda: kvb.exact_attention(K, V, g)):
            try:
                call()
            except kvb.KvbError:
                pass
    assert m.n == 10 and np.array_equal(m.query(Q[0]), z0)
    for args in ((-1, 2), (2, 0), (2.5, 2), ("2", 2), (None, 2), (True, 2)):
        with pytest.raises(kvb.KvbError):
            kvb.Method("exact", *args)
    with pytest.raises(kvb.KvbError):
        kvb.Method("exact", 2, 2, scale="big")
    for bad in (dict(n=-5, d_key=2, d_value=2), dict(n="x", d_key=2, d_value=2),
                dict(n=[1], d_key=2, d_value=2)):
        with pytest.raises(kvb.KvbError):
            kvb.stream("gaussian", **bad)


def test_integers_out_of_the_c_range_are_refused_not_wrapped():
    # ctypes converts modulo 2^64: seed -1 was 2^64 - 1, d_key 2^64 + 4 was 4 in C while Python
    # reported 2^64 + 4
    for bad in (dict(d_key=2**64 + 4, d_value=4), dict(d_key=4, d_value=2**64 + 4),
                dict(d_key=4, d_value=4, seed=-1), dict(d_key=4, d_value=4, seed=2**64),
                dict(d_key=4, d_value=4, index=-1), dict(d_key=4, d_value=4, seed=1.5)):
        with pytest.raises(kvb.KvbError) as e:
            kvb.Method("exact", **bad)
        assert e.value.name == "KVB_EINVAL" and e.value.where == "python", bad
    with pytest.raises(kvb.KvbError) as e:
        kvb.stream("gaussian", n=8, d_key=2, d_value=2, seed=-1)
    assert "seed = -1 is out of range" in e.value.message
    with pytest.raises(kvb.KvbError):
        kvb.stream("gaussian", n=2**53 + 1, d_key=2, d_value=2)  # not exactly a double
    with pytest.raises(kvb.KvbError):
        kvb.stream("gaussian", n=np.int64(2**62 + 1), d_key=2, d_value=2)
    with pytest.raises(kvb.KvbError):
        kvb.stream("gaussian", n=10**400, d_key=2, d_value=2)  # beyond double range
    K = np.ones((1, 2, 2))
    with pytest.raises(kvb.KvbError):
        kvb.attention_batch(K, K, K, threads=2**32 + 1)
    # the extremes of the range still work
    assert kvb.Method("exact", 2, 2, seed=2**64 - 1, index=2**64 - 1).d_key == 2


def test_a_nul_in_a_name_is_refused_not_truncated():
    # C reads a char* up to its first NUL: "exact\0junk" created "exact"
    for call in (lambda: kvb.Method("exact\0junk", 2, 2),
                 lambda: kvb.stream("gaussian\0x", n=4, d_key=2, d_value=2),
                 lambda: kvb.Method("sink_recent", 2, 2, mutant="x\0y")):
        with pytest.raises(kvb.KvbError) as e:
            call()
        assert e.value.name == "KVB_EINVAL" and "NUL" in e.value.message
