"""Known-wrong Python methods (src/README.md, "Your own method"): each is the strided sampler of
strided_sample_py.py with one deliberate defect that one of the battery's checks must reject."""

import itertools

from strided_sample_py import StridedSamplePy


class UnderWeighted(StridedSamplePy):
    """strided sampler whose estimates weigh a kept token s−1 instead of s (biased N̂, D̂)"""
    name = "strided_underweighted_py"

    def query_parts(self, q):
        num, den = super().query_parts(q)
        return num * (self.s - 1) / self.s, den * (self.s - 1) / self.s


_instances_made = itertools.count()


class SharedState(StridedSamplePy):
    """strided sampler taking its offset from a counter shared by all its instances instead of
    the method's generator (ctx.uniform()): two instances with the same seed differ"""
    name = "strided_shared_state_py"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.offset = next(_instances_made) % self.s


class MiscountedMemory(StridedSamplePy):
    """strided sampler reporting 8 bytes per stored vector instead of 8·d (bytes and vectors
    disagree: method.h requires bytes >= 8·d·vectors for a method that keeps vectors)"""
    name = "strided_miscounted_memory_py"

    def memory(self):
        return 8 * 2 * self.kept, 2 * self.kept
