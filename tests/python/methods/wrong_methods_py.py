"""Known-wrong Python methods (README, "Your own method"): each is the strided sampler of
strided_sample_py.py with one deliberate defect that one of the battery's checks must reject."""

import os

from strided_sample_py import StridedSamplePy


class UnderWeighted(StridedSamplePy):
    """strided sampler whose estimates weigh a kept token s−1 instead of s (biased N̂, D̂)"""
    name = "strided_underweighted_py"

    def query_parts(self, q):
        num, den = super().query_parts(q)
        return num * (self.s - 1) / self.s, den * (self.s - 1) / self.s


class Unseeded(StridedSamplePy):
    """strided sampler drawing its offset from the operating system, not the method's generator
    (a seed does not reproduce it)"""
    name = "strided_unseeded_py"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.offset = int.from_bytes(os.urandom(4), "little") % self.s


class MiscountedMemory(StridedSamplePy):
    """strided sampler reporting 8 bytes per stored vector instead of 8·d (bytes and vectors
    disagree: method.h requires bytes >= 8·d·vectors for a method that keeps vectors)"""
    name = "strided_miscounted_memory_py"

    def memory(self):
        return 8 * 2 * self.kept, 2 * self.kept
