"""A worked example of a kvbound method written in Python (src/README.md, "Your own method"): a
randomized strided sampler. At creation it draws an offset o uniform in {0, ..., s-1} from the
method's generator (ctx.uniform(), so a seed reproduces it) and keeps the tokens i ≡ o (mod s).
Every token is then kept with probability 1/s, so with weight s per kept token

    N̂ = s · Σ_kept e^{scale·<q,k_i>} v_i   and   D̂ = s · Σ_kept e^{scale·<q,k_i>}

are unbiased estimates of N = Σ_i e^{scale·<q,k_i>} v_i and D = Σ_i e^{scale·<q,k_i>} (the
quantities SubGen and BalanceKV estimate; arXiv 2402.06082 and 2502.07861), and it answers
z = N̂ / D̂ (the weight cancels there). It declares both unbiasedness properties, so
`kvb-props --method strided_sample_py` z-tests them.

    import kvbound, strided_sample_py
    kvbound.register_method(strided_sample_py.StridedSamplePy)
    kvbound.props_main(["--method", "strided_sample_py,stride=4"])
"""

import numpy as np


class StridedSamplePy:
    """randomized strided sampler: keeps tokens i = o mod s, o uniform, weight s"""
    name = "strided_sample_py"
    params = {"stride": (4, 1, 1e6, "s: keep one token in s (offset drawn uniformly at creation)")}
    randomized = True
    declares = {"unbiased_num", "unbiased_den"}

    def __init__(self, ctx):
        self.s = ctx.params["stride"]
        self.scale = ctx.scale
        self.offset = min(int(ctx.uniform() * self.s), self.s - 1)
        self.seen = self.kept = 0
        self._K = np.empty((16, ctx.d_key))  # storage, doubled when full
        self._V = np.empty((16, ctx.d_value))

    @property
    def K(self):
        return self._K[:self.kept]

    @property
    def V(self):
        return self._V[:self.kept]

    def update(self, k, v):
        if self.seen % self.s == self.offset:
            if self.kept == len(self._K):  # grow first: nothing changes if this fails
                K2, V2 = np.resize(self._K, (2 * self.kept, self._K.shape[1])), \
                    np.resize(self._V, (2 * self.kept, self._V.shape[1]))
                self._K, self._V = K2, V2
            self._K[self.kept], self._V[self.kept] = k, v
            self.kept += 1
        self.seen += 1

    def _weights(self, q):
        """e^{scores − shift} of the kept tokens and the shift (the largest score), so no
        exponential overflows; (None, None) when nothing is kept yet."""
        if len(self.K) == 0:
            return None, None
        sc = self.scale * (self.K @ q)
        top = sc.max()
        return np.exp(sc - top), top

    def query(self, q):
        w, _ = self._weights(q)
        if w is None:  # the offset is beyond the tokens seen: nothing to average
            return np.zeros(self.V.shape[1])
        return (w @ self.V) / w.sum()

    def query_parts(self, q):
        w, top = self._weights(q)
        if w is None:
            return np.zeros(self.V.shape[1]), 0.0
        e = np.exp(top)
        return self.s * e * (w @ self.V), self.s * e * w.sum()

    def memory(self):
        return (self.K.size + self.V.size) * 8, 2 * self.kept  # float64 keys and values
