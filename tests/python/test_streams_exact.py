"""Streams by name and exact attention, against a NumPy reference."""

import numpy as np
import pytest

import kvbound as kvb


def ref_attention(K, V, q, scale):
    s = scale * (K @ q)
    p = np.exp(s - s.max())
    return (p / p.sum()) @ V, s.max() + np.log(np.exp(s - s.max()).sum())


def test_every_stream_is_listed_with_its_parameters():
    names = [s["name"] for s in kvb.streams()]
    for want in ("gaussian", "clusterable", "npy", "adv_sphere"):
        assert want in names
    g = next(s for s in kvb.streams() if s["name"] == "gaussian")
    assert {"n", "d_key", "d_value"} <= {p["name"] for p in g["params"]}


def test_stream_shapes_and_seeds():
    s = kvb.stream("gaussian", n=40, d_key=6, d_value=5, seed=11)
    assert s.Q.shape == (40, 6) and s.K.shape == (40, 6) and s.V.shape == (40, 5)
    assert s.Q.dtype == np.float64 and np.all(np.isfinite(s.K))
    again = kvb.stream("gaussian,n=40,d_key=6,d_value=5", seed=11)  # parameters in the name
    assert np.array_equal(s.K, again.K) and np.array_equal(s.V, again.V)
    other = kvb.stream("gaussian", n=40, d_key=6, d_value=5, seed=12)
    assert not np.array_equal(s.K, other.K)
    # substreams of one seed differ too (pcg32.h: trial i draws substream i)
    assert not np.array_equal(s.K, kvb.stream("gaussian", n=40, d_key=6, d_value=5, seed=11, index=1).K)


def test_clusterable_stream_reports_its_guarantees():
    s = kvb.stream("clusterable", n=64, d_key=4, d_value=4, seed=3)
    assert np.isfinite(s.m) and np.isfinite(s.delta) and s.r > 0
    assert np.max(np.linalg.norm(s.Q, axis=1)) <= s.r * (1 + 1e-12)


def test_unknown_stream_and_bad_parameter_raise():
    with pytest.raises(kvb.KvbError) as e:
        kvb.stream("no_such_stream", n=4)
    assert e.value.name == "KVB_ENOTFOUND" and "no_such_stream" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.stream("gaussian", n=0, d_key=2, d_value=2)
    assert e.value.name == "KVB_EINVAL" and "n" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.stream("gaussian", n=4, d_key=2, d_value=2, no_such_param=1)
    assert "no_such_param" in e.value.message


@pytest.mark.parametrize("scale", [1.0, 0.125, 7.0])
def test_exact_attention_matches_numpy_to_1e12(scale):
    rng = np.random.default_rng(5)
    K, V, Q = rng.normal(size=(300, 16)), rng.normal(size=(300, 9)), rng.normal(size=(7, 16))
    Z, lse = kvb.exact_attention(K, V, Q, scale=scale, return_lse=True)
    assert Z.shape == (7, 9) and lse.shape == (7,)
    for i in range(7):
        z, l = ref_attention(K, V, Q[i], scale)
        assert np.max(np.abs(Z[i] - z)) <= 1e-12 * max(1.0, np.max(np.abs(z)))
        assert abs(lse[i] - l) <= 1e-12 * max(1.0, abs(l))
    # one query -> one answer
    z1 = kvb.exact_attention(K, V, Q[2], scale=scale)
    assert z1.shape == (9,) and np.array_equal(z1, Z[2])


def test_exact_attention_large_scores_do_not_overflow():
    rng = np.random.default_rng(6)
    K, V, q = rng.normal(size=(50, 4)) * 100, rng.normal(size=(50, 3)), rng.normal(size=4) * 100
    z = kvb.exact_attention(K, V, q)
    assert np.all(np.isfinite(z))
    assert np.max(np.abs(z - ref_attention(K, V, q, 1.0)[0])) <= 1e-12 * max(1, np.abs(z).max())


def test_attention_batch_agrees_with_the_reference():
    rng = np.random.default_rng(8)
    K, V, Q = rng.normal(size=(3, 70, 8)), rng.normal(size=(3, 70, 5)), rng.normal(size=(3, 4, 8))
    Z = kvb.attention_batch(K, V, Q, scale=0.3, threads=1)
    for h in range(3):
        want = kvb.exact_attention(K[h], V[h], Q[h], scale=0.3)
        assert np.max(np.abs(Z[h] - want)) <= 1e-12
    assert np.array_equal(Z, kvb.attention_batch(K, V, Q, scale=0.3, threads=2))


def test_exact_attention_refuses_bad_input():
    K, V, q = np.ones((4, 3)), np.ones((4, 2)), np.ones(3)
    bad = q.copy()
    bad[1] = np.nan
    for args, status in (((K, V, bad), "KVB_EDOM"), ((K, np.ones((5, 2)), q), "KVB_EDIM"),
                         ((K, V, np.ones(4)), "KVB_EDIM"), ((np.ones((0, 3)), np.ones((0, 2)), q), "KVB_EINVAL"),
                         ((K, V, np.ones((2, 2, 3))), "KVB_EDIM")):
        with pytest.raises(kvb.KvbError) as e:
            kvb.exact_attention(*args)
        assert e.value.name == status, (args, e.value)
    Kinf = K.copy()
    Kinf[2, 0] = np.inf
    with pytest.raises(kvb.KvbError):
        kvb.exact_attention(Kinf, V, q)
    with pytest.raises(kvb.KvbError):
        kvb.exact_attention(K, V, q, scale=float("nan"))
    with pytest.raises(kvb.KvbError):
        kvb.exact_attention([["a"]], V, q)
