"""Known-wrong Python methods for the battery's measured memory (src/README.md, "Your own method"):
kvb-props must FAIL method.contract.memory on each, printing what it measured and what was
reported.

    python3 -m kvbound props --register memory_cheats_py.py --method memory_raises_py
"""

import numpy as np


class MemoryRaisesPy:
    """exact attention whose memory() raises: must be a failed check, not "0 bytes" """
    name = "memory_raises_py"
    params = {}

    def __init__(self, ctx):
        self.scale = ctx.scale
        self.K = np.empty((0, ctx.d_key))
        self.V = np.empty((0, ctx.d_value))

    def update(self, k, v):
        self.K = np.vstack([self.K, k])
        self.V = np.vstack([self.V, v])

    def query(self, q):
        sc = self.scale * (self.K @ q)
        w = np.exp(sc - sc.max())
        return (w @ self.V) / w.sum()

    def memory(self):
        raise RuntimeError("memory() is not implemented")


class StridedHoarderPy:
    """keeps every (s/2)-th token in NumPy arrays but reports every s-th: holds twice its report"""
    name = "strided_hoarder_py"
    params = {"stride": (4, 2, 1e6, "s: reports one token in s (keeps one in s/2)")}

    def __init__(self, ctx):
        self.s = int(ctx.params["stride"])
        self.scale = ctx.scale
        self.seen = self.kept = 0
        self._K = np.empty((16, ctx.d_key))
        self._V = np.empty((16, ctx.d_value))

    def update(self, k, v):
        if self.seen % (self.s // 2) == 0:
            if self.kept == len(self._K):
                self._K = np.resize(self._K, (2 * self.kept, self._K.shape[1]))
                self._V = np.resize(self._V, (2 * self.kept, self._V.shape[1]))
            self._K[self.kept], self._V[self.kept] = k, v
            self.kept += 1
        self.seen += 1

    def query(self, q):
        if self.kept == 0:
            return np.zeros(self._V.shape[1])
        K, V = self._K[:self.kept], self._V[:self.kept]
        sc = self.scale * (K @ q)
        w = np.exp(sc - sc.max())
        return (w @ V) / w.sum()

    def memory(self):
        told = (self.kept + 1) // 2
        return told * (self._K.shape[1] + self._V.shape[1]) * 8, 2 * told
