"""Real-model caches (`kvbound dump-kv`) read as arrays: the reader on a dump it writes itself,
and on a real one (SmolLM2-135M, a few tokens) when the model is present (skipped otherwise)."""

import os

import numpy as np
import pytest

import kvbound as kvb


def fake_dump(path, layers=2, n=5, hq=4, hk=2, d=3):
    rng = np.random.default_rng(1)
    os.makedirs(path, exist_ok=True)
    arrays = {}
    for l in range(layers):
        for what, h in (("q", hq), ("k", hk), ("v", hk)):
            a = rng.normal(size=(h, n, d)).astype(np.float32)
            np.save(os.path.join(path, "layer%02d_%s.npy" % (l, what)), a)
            arrays[l, what] = a
    with open(os.path.join(path, "tokens.txt"), "w") as f:
        f.write("".join("%d\n" % (100 + i) for i in range(n)))
    with open(os.path.join(path, "norms.tsv"), "w") as f:
        f.write("# layer\tq_mean\tq_sd\tk_mean\tk_sd\tkc_mean\tkc_sd\tv_mean\tv_sd (...)\n")
        for l in range(layers):
            f.write("%d\t1\t2\t3\t4\t5\t6\t7\t8\n" % l)
    return arrays


def test_reader_layout_on_a_written_dump(tmp_path):
    arrays = fake_dump(str(tmp_path))
    d = kvb.read_dump(str(tmp_path))
    assert d.layers == [0, 1] and (d.n, d.n_head, d.n_head_kv, d.head_dim, d.group) == (5, 4, 2, 3, 2)
    assert list(d.tokens) == [100, 101, 102, 103, 104]
    assert d.norms[1]["v_sd"] == 8.0
    assert np.array_equal(d.k(1), arrays[1, "k"]) and d.q(0).dtype == np.float32
    Q, K, V = d.head(1, 3)  # query head 3 attends with key/value head 3 // 2 = 1
    assert Q.dtype == np.float64 and np.array_equal(Q, arrays[1, "q"][3])
    assert np.array_equal(K, arrays[1, "k"][1]) and np.array_equal(V, arrays[1, "v"][1])
    s = d.stream(0, 0, n=4)
    assert s.K.shape == (4, 3) and s.r == pytest.approx(np.max(np.linalg.norm(s.Q, axis=1)))
    assert kvb.read_dump(str(tmp_path), mmap=True).v(0).shape == (2, 5, 3)


def test_reader_refuses_broken_dumps(tmp_path):
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path / "absent"))
    assert e.value.name == "KVB_EIO"
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path))  # empty
    assert e.value.name == "KVB_EFORMAT"
    fake_dump(str(tmp_path))
    os.remove(str(tmp_path / "layer01_v.npy"))
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path))
    assert "layer01_v.npy" in e.value.message
    fake_dump(str(tmp_path))
    np.save(str(tmp_path / "layer01_k.npy"), np.zeros((2, 6, 3), np.float32))
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path)).k(1)
    assert "shape" in e.value.message
    fake_dump(str(tmp_path))
    with open(str(tmp_path / "tokens.txt"), "a") as f:
        f.write("7\n")
    with pytest.raises(kvb.KvbError):
        kvb.read_dump(str(tmp_path))
    fake_dump(str(tmp_path))
    d = kvb.read_dump(str(tmp_path))
    for bad in ((0, 4), (0, -1)):
        with pytest.raises(kvb.KvbError):
            d.head(*bad)
    with pytest.raises(kvb.KvbError):
        d.q(7)


@pytest.mark.skipif(not kvb.model_available(),
                    reason="SmolLM2-135M not present (sh scripts/fetch-model)")
def test_real_dump_of_a_few_tokens_reads_as_the_npy_stream_reads_it(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Attention is all you need, but a bounded cache is all you can keep. " * 2)
    out = str(tmp_path / "cache")
    d = kvb.dump_kv(str(text), out, tokens=12)
    assert (d.n, d.n_head, d.n_head_kv, d.head_dim, len(d.layers)) == (12, 9, 3, 64, 30)
    assert len(d.tokens) == 12 and set(d.norms) == set(range(30))
    for layer in (0, 29):
        q, k, v = d.q(layer), d.k(layer), d.v(layer)
        assert np.all(np.isfinite(q)) and np.all(np.isfinite(k)) and np.all(np.isfinite(v))
        # the norms table describes these very arrays (printed with 6 significant digits)
        assert d.norms[layer]["q_mean"] == pytest.approx(
            np.mean(np.linalg.norm(q.astype(np.float64), axis=2)), rel=1e-5)
        # the library's "npy" stream reads the same numbers (head 0: query head 0, kv head 0)
        s = kvb.stream("npy", q=os.path.join(out, "layer%02d_q.npy" % layer),
                       k=os.path.join(out, "layer%02d_k.npy" % layer),
                       v=os.path.join(out, "layer%02d_v.npy" % layer), head=0)
        Q, K, V = d.head(layer, 0)
        assert np.array_equal(s.Q, Q) and np.array_equal(s.K, K) and np.array_equal(s.V, V)
    # and a method runs on a real head
    Q, K, V = d.head(14, 4)
    Z, _ = kvb.run("exact", K, V, Q[-3:], scale=1 / 8)
    assert np.max(np.abs(Z - kvb.exact_attention(K, V, Q[-3:], scale=1 / 8))) <= 1e-12


def test_tampered_files_raise_kvberror_not_valueerror(tmp_path):
    fake_dump(str(tmp_path))
    with open(str(tmp_path / "tokens.txt"), "w") as f:
        f.write("100\n101\nxyz\n103\n104\n")
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path))
    assert e.value.name == "KVB_EFORMAT" and "tokens.txt" in e.value.message
    fake_dump(str(tmp_path))
    p = str(tmp_path / "layer01_q.npy")
    with open(p, "r+b") as f:
        f.seek(12)
        f.write(b"{'descr': 'zz',")  # a header NumPy cannot parse
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path)).q(1)
    assert e.value.name == "KVB_EFORMAT" and "layer01_q.npy" in e.value.message
    fake_dump(str(tmp_path))
    with open(p, "r+b") as f:
        f.truncate(100)  # shorter than its shape
    with pytest.raises(kvb.KvbError):
        kvb.read_dump(str(tmp_path)).q(1)
    fake_dump(str(tmp_path))
    os.remove(str(tmp_path / "tokens.txt"))
    os.mkfifo(str(tmp_path / "tokens.txt"))  # never opened: it would block forever
    with pytest.raises(kvb.KvbError) as e:
        kvb.read_dump(str(tmp_path))
    assert "not a regular file" in e.value.message


def test_dump_kv_refuses_a_nul_and_out_of_range_tokens(tmp_path):
    # both refused before the model is touched, so no model is needed
    out = str(tmp_path / "d")
    for kw in (dict(tokens=2**64 + 8), dict(tokens=-1), dict(tokens=2**63)):
        with pytest.raises(kvb.KvbError) as e:
            kvb.dump_kv("debian-licenses", out, **kw)
        assert e.value.name == "KVB_EINVAL" and "tokens" in e.value.message, kw
    for args in (("debian-licenses", out + "\0x"), ("debian\0-licenses", out)):
        with pytest.raises(kvb.KvbError) as e:
            kvb.dump_kv(*args, tokens=4)
        assert "NUL" in e.value.message
    with pytest.raises(kvb.KvbError) as e:
        kvb.dump_kv("debian-licenses", out, tokens=4, model="gemma3\0x")
    assert "NUL" in e.value.message
    assert not os.path.exists(out)
