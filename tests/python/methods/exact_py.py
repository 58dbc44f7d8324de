"""Exact attention written in NumPy, declared equivalent to kvbound's built-in `exact` within
1e-12 (kvb-props --method exact_py replays it against the built-in), with a trivially true
error bound declared (eps = 1e-9, delta = 0) — and a known-wrong twin that forgets the first
token, which the replay must reject."""

import numpy as np


class ExactPy:
    """exact attention in NumPy (log-sum-exp), equivalent to the built-in exact"""
    name = "exact_py"
    declares = {"error_bound"}
    equivalent_to = "exact"
    equivalence_tol = 1e-12

    def __init__(self, ctx):
        self.scale, self.n = ctx.scale, 0
        self._K = np.empty((64, ctx.d_key))
        self._V = np.empty((64, ctx.d_value))

    def update(self, k, v):
        if self.n == len(self._K):
            self._K = np.resize(self._K, (2 * self.n, self._K.shape[1]))
            self._V = np.resize(self._V, (2 * self.n, self._V.shape[1]))
        self._K[self.n], self._V[self.n] = k, v
        self.n += 1

    def query(self, q):
        s = self.scale * (self._K[:self.n] @ q)
        w = np.exp(s - s.max())
        return (w @ self._V[:self.n]) / w.sum()

    def error_bound(self, inp):
        return 1e-9, 0.0

    def memory(self):
        return 8 * self.n * (self._K.shape[1] + self._V.shape[1]), 2 * self.n


class ExactDropFirstPy(ExactPy):
    """exact attention that forgets the first token (a known-wrong 'equivalent' of exact)"""
    name = "exact_drop_first_py"

    def query(self, q):
        if self.n == 1:
            return self._V[0].copy()
        s = self.scale * (self._K[1:self.n] @ q)
        w = np.exp(s - s.max())
        return (w @ self._V[1:self.n]) / w.sum()
