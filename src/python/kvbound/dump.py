"""Real-model caches written by `kvbound dump-kv` (src/model/kv_dump.h) as NumPy arrays.

A dump directory holds, per layer LL, layerLL_q.npy [n_head, n, head_dim] (post-RoPE queries)
and layerLL_k.npy, layerLL_v.npy [n_head_kv, n, head_dim] (float32, C order: plain .npy, so
np.load reads them), tokens.txt (the n token ids, one a line) and norms.tsv (per layer: mean and
sd of the row norms of q, k, k minus its head's mean key, v). Query head h attends with key/value
head h // (n_head / n_head_kv) (grouped-query attention: 3 for SmolLM2-135M, 4 for Gemma 3 270M)."""

import ctypes
import os
import re

import numpy as np

from . import _lib
from ._lib import KvbError, lib
from .core import Stream

_FILE = re.compile(r"^layer(\d+)_([qkv])\.npy$")
NORM_COLUMNS = ("q_mean", "q_sd", "k_mean", "k_sd", "kc_mean", "kc_sd", "v_mean", "v_sd")


def _bad(msg):
    return KvbError(_lib.EFORMAT, msg, "python")


def _regular(p):
    """Refuses what is not a regular file (a FIFO would block the read forever, a device never
    end), as the library's reader does (src/core/read_file.h)."""
    if not os.path.isfile(p):
        raise _bad("%s: not a regular file (a device, FIFO or directory is never read)" % p)


class KVDump:
    """A dump-kv directory. layers: the layer numbers present; n: tokens; n_head, n_head_kv,
    head_dim; group = n_head // n_head_kv; tokens: int array (or None without tokens.txt);
    norms: {layer: {column: value}} from norms.tsv (empty without it). q(l), k(l), v(l) load one
    layer (float32 as written, or memory-mapped with mmap=True); head(l, h) gives one query head
    with its key/value head as float64 (Q, K, V); stream(l, h) the same as a Stream."""

    def __init__(self, path, mmap=False):
        self.path = path
        self._mmap = "r" if mmap else None
        if not os.path.isdir(path):
            raise KvbError(_lib.EIO, "%s: not a directory (a `kvbound dump-kv --out` directory "
                           "was expected)" % path, "python")
        found = {}
        for f in os.listdir(path):
            m = _FILE.match(f)
            if m:
                found.setdefault(int(m.group(1)), set()).add(m.group(2))
        if not found:
            raise _bad("%s: no layerLL_q.npy / _k.npy / _v.npy files (not a dump-kv directory)" % path)
        for layer, kinds in sorted(found.items()):
            if kinds != {"q", "k", "v"}:
                raise _bad("%s: layer %02d lacks %s" % (path, layer,
                           ", ".join("layer%02d_%s.npy" % (layer, w) for w in "qkv" if w not in kinds)))
        self.layers = sorted(found)
        q0, k0, v0 = self.q(self.layers[0], mmap=True), self.k(self.layers[0], mmap=True), \
            self.v(self.layers[0], mmap=True)
        if q0.ndim != 3 or k0.ndim != 3 or k0.shape != v0.shape or q0.shape[1:] != k0.shape[1:]:
            raise _bad("%s: layer %02d shapes q %s, k %s, v %s are not [n_head, n, d] and "
                       "[n_head_kv, n, d]" % (path, self.layers[0], q0.shape, k0.shape, v0.shape))
        self.n_head, self.n, self.head_dim = q0.shape
        self.n_head_kv = k0.shape[0]
        if self.n_head_kv == 0 or self.n_head % self.n_head_kv:
            raise _bad("%s: %d query heads do not share %d key/value heads evenly"
                       % (path, self.n_head, self.n_head_kv))
        self.group = self.n_head // self.n_head_kv
        self.tokens = self._read_tokens()
        self.norms = self._read_norms()

    def _read_tokens(self):
        p = os.path.join(self.path, "tokens.txt")
        if not os.path.exists(p):
            return None
        _regular(p)
        try:
            with open(p) as f:
                ids = [int(line) for line in f if line.strip()]
        except (ValueError, UnicodeDecodeError) as e:
            raise _bad("%s: not one token id a line (%s)" % (p, e))
        if len(ids) != self.n:
            raise _bad("%s has %d token ids, the arrays %d tokens" % (p, len(ids), self.n))
        return np.array(ids, dtype=np.int64)

    def _read_norms(self):
        p = os.path.join(self.path, "norms.tsv")
        out = {}
        if not os.path.exists(p):
            return out
        _regular(p)
        with open(p, errors="replace") as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                cells = line.split("\t")
                if len(cells) != 1 + len(NORM_COLUMNS):
                    raise _bad("%s: a row with %d columns (want %d): %r"
                               % (p, len(cells), 1 + len(NORM_COLUMNS), line))
                try:
                    out[int(cells[0])] = dict(zip(NORM_COLUMNS, (float(c) for c in cells[1:])))
                except ValueError as e:
                    raise _bad("%s: a row that is not numbers (%s): %r" % (p, e, line))
        return out

    def _load(self, layer, what, mmap=None):
        p = os.path.join(self.path, "layer%02d_%s.npy" % (layer, what))
        if not os.path.exists(p):
            raise KvbError(_lib.ENOTFOUND, "%s: no layer %r (layers: %s)"
                           % (self.path, layer, self.layers), "python")
        _regular(p)
        try:
            a = np.load(p, mmap_mode=self._mmap if mmap is None else ("r" if mmap else None),
                        allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            # a truncated or tampered header, a pickled object, a file shorter than its shape
            raise _bad("%s: not a readable .npy array (%s)" % (p, e))
        if hasattr(self, "n"):
            want = (self.n_head if what == "q" else self.n_head_kv, self.n, self.head_dim)
            if a.shape != want:
                raise _bad("%s has shape %s, want %s" % (p, a.shape, want))
        return a

    def q(self, layer, mmap=None):
        return self._load(layer, "q", mmap)

    def k(self, layer, mmap=None):
        return self._load(layer, "k", mmap)

    def v(self, layer, mmap=None):
        return self._load(layer, "v", mmap)

    def head(self, layer, h, n=None):
        """(Q, K, V) of query head h of `layer` (first n tokens), float64, with key/value head
        h // group — the arrays the "npy" stream hands a method for this head."""
        if not 0 <= h < self.n_head:
            raise KvbError(_lib.EINVAL, "head %d out of range [0, %d)" % (h, self.n_head), "python")
        n = self.n if n is None else int(n)
        if not 1 <= n <= self.n:
            raise KvbError(_lib.EINVAL, "n = %d out of range [1, %d]" % (n, self.n), "python")
        g = h // self.group
        return (np.array(self.q(layer, mmap=True)[h, :n], dtype=np.float64),
                np.array(self.k(layer, mmap=True)[g, :n], dtype=np.float64),
                np.array(self.v(layer, mmap=True)[g, :n], dtype=np.float64))

    def stream(self, layer, h, n=None):
        Q, K, V = self.head(layer, h, n)
        r = float(np.max(np.linalg.norm(Q, axis=1)))
        return Stream("dump:%s:layer%02d:head%d" % (self.path, layer, h),
                      {"layer": layer, "head": h}, Q, K, V, float("nan"), float("nan"), r)

    def __repr__(self):
        return "KVDump(%r: %d layers, n=%d, q heads %d, kv heads %d, head_dim %d)" % (
            self.path, len(self.layers), self.n, self.n_head, self.n_head_kv, self.head_dim)


def read_dump(path, mmap=False):
    """Opens a `kvbound dump-kv --out` directory (KVDump)."""
    return KVDump(path, mmap)


def model_available():
    """Whether SmolLM2-135M is where dump_kv looks by default ($KVB_MODEL, else the fetch-model
    cache; scripts/fetch-model downloads it)."""
    return lib.kvb_model_available() == 0


def dump_kv(text, out, tokens=0, model=None):
    """Runs the real model in-process as `kvbound dump-kv --text TEXT --tokens N --model MODEL
    --out OUT` does (kvb_dump_kv) and returns read_dump(out). text: a file or "debian-licenses";
    tokens: the first N (0 = all); model: None (SmolLM2-135M at the fetch-model cache),
    "gemma3", or a GGUF path."""
    n = ctypes.c_size_t()
    tokens = _lib.c_int(tokens, "dump_kv: tokens", 0, 2**(8 * ctypes.sizeof(ctypes.c_long) - 1) - 1)
    _lib.check(lib.kvb_dump_kv(_lib.c_str(text, "dump_kv: text"), tokens,
                               _lib.c_str(model, "dump_kv: model") if model else None,
                               _lib.c_str(out, "dump_kv: out"), ctypes.byref(n)))
    return read_dump(out)
