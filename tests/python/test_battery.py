"""Python methods through the C battery (`kvb-props --method`, run in the Python process by
`python3 -m kvbound props --register FILE.py`): the worked example passes every check; each
known-wrong variant is rejected by the check it breaks, which the correct method passes; an
exception inside a callback under the battery is a failed check, not a crash."""

import os
import re
import subprocess
import sys

import pytest

from conftest import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = os.path.join(HERE, "methods")


def battery(register, method, *args):
    """Runs the battery in a fresh Python process; (exit status, output)."""
    env = child_env()
    env["OPENBLAS_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-m", "kvbound", "props", "--register",
                        os.path.join(METHODS, register), "--method", method] + list(args),
                       env=env, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


VERDICT = r"(HOLDS|FAILS|MIXED|VACUOUS[A-Z-]*|NOT-OBSERVED|INCONCLUSIVE|SKIPPED)"


def results(out):
    """{check id: verdict} of the faithful runs' report lines (the verdict first)."""
    return {m.group(2): m.group(1) for m in
            re.finditer(r"^" + VERDICT + r" (method\.[a-z_.]+)", out, re.M)}


def test_the_worked_example_passes_the_battery(tmp_path):
    report = str(tmp_path / "report.md")
    rc, out = battery("strided_sample_py.py", "strided_sample_py,stride=4", "--report", report)
    assert rc == 0, out
    assert not re.search(r"^FAIL", out, re.M), out
    v = results(out)
    for check in ("method.contract.inputs", "method.contract.memory", "method.contract.determinism",
                  "method.declared.unbiased"):
        assert v.get(check) == "HOLDS", (check, out)
    # every mutant of those checks was caught (a check that cannot fail would prove nothing)
    assert len(re.findall(r"^PASS method\.\S+ caught mutant", out, re.M)) >= 5
    assert re.search(r"^SKIPPED method\.declared\.error_bound: .*declares no error bound", out, re.M)
    with open(report) as f:
        text = f.read()
    assert "The battery for method `strided_sample_py,stride=4`" in text


# right: the correct method that must pass the same check (None: strided_sample_py, whose HOLDS
# on these checks test_the_worked_example_passes_the_battery asserts)
@pytest.mark.parametrize("register, wrong, right, check, why", [
    ("wrong_methods_py.py", "strided_underweighted_py", None,
     "method.declared.unbiased", r"REJECTED: declared unbiased: .*BIASED"),
    ("wrong_methods_py.py", "strided_shared_state_py", None,
     "method.contract.determinism", r"violated: two runs .*differ"),
    ("wrong_methods_py.py", "strided_miscounted_memory_py", None,
     "method.contract.memory", r"violated: .*undercounts what it stores"),
    ("exact_py.py", "exact_drop_first_py", "exact_py",
     "method.declared.equivalence", r"violated: NOT EQUIVALENT to exact"),
])
def test_a_known_wrong_python_method_is_rejected(register, wrong, right, check, why):
    rc, out = battery(register, wrong + ",stride=4" if "strided" in wrong else wrong,
                      "--only", check, "--no-mutants")
    assert rc != 0, out
    assert results(out).get(check) == "FAILS", out
    assert re.search(why, out), out
    if right:  # the correct method passes the very same check
        rc, out = battery(register, right, "--only", check, "--no-mutants")
        assert rc == 0 and results(out).get(check) == "HOLDS", out


RAISING = '''
import numpy as np
class RaisesLate:
    """exact attention that raises at its 100th token"""
    name = "raises_late_py"
    def __init__(self, ctx): self.K, self.V, self.scale = [], [], ctx.scale
    def update(self, k, v):
        if len(self.K) == 99:
            raise OverflowError("token 100 on purpose")
        self.K.append(k); self.V.append(v)
    def query(self, q):
        K, V = np.array(self.K), np.array(self.V)
        s = self.scale * K @ q
        w = np.exp(s - s.max())
        return w @ V / w.sum()
    def memory(self): return 8 * len(self.K) * (len(self.K[0]) + len(self.V[0])), 2 * len(self.K)
'''


def test_an_exception_under_the_battery_fails_the_check_without_a_crash(tmp_path):
    global METHODS
    (tmp_path / "raises_late_py.py").write_text(RAISING)
    saved, METHODS = METHODS, str(tmp_path)
    try:
        rc, out = battery("raises_late_py.py", "raises_late_py", "--only", "method.contract",
                          "--no-mutants")
    finally:
        METHODS = saved
    assert rc == 1, out  # an ordinary failed run: no signal, no abort
    assert re.search(r"^FAILS method\.contract\.", out, re.M), out
    assert "python method raises_late_py: update raised OverflowError: token 100 on purpose" in out
    # runs that failed are not compared: no "identical" after them
    assert re.search(r"^FAILS method\.contract\.determinism", out, re.M), out
    assert "identical over 2 serial runs" not in out, out


def test_props_main_in_this_process_twice(capfd):
    """The battery called from this very process (no child): the registered method is reached
    through its callbacks, and a second call with another method forgets the first."""
    import kvbound as kvb
    sys.path.insert(0, METHODS)
    from strided_sample_py import StridedSamplePy
    from wrong_methods_py import MiscountedMemory
    for cls in (StridedSamplePy, MiscountedMemory):
        if cls.name not in kvb.registered():
            kvb.register_method(cls)
    rc1 = kvb.props_main(["--method", "strided_sample_py", "--only", "method.contract.memory", "--no-mutants"])
    rc2 = kvb.props_main(["--method", "strided_miscounted_memory_py", "--only", "method.contract.memory",
                          "--no-mutants"])
    out = capfd.readouterr().out
    assert (rc1, rc2) == (0, 1), out
    assert re.search(r"^HOLDS method\.contract\.memory", out, re.M), out
    assert re.search(r"^FAILS method\.contract\.memory", out, re.M), out


def test_a_correct_exact_python_method_passes_accuracy_at_equal_memory():
    """exact_py errs by float64 rounding (~1e-16) and uniform sampling at its memory keeps every
    token (error 0): below the rounding floor both count as equal, so a correct method HOLDS;
    the floor's mutant (a by-eye 1e-3) is caught by the float32 witness on this method too."""
    rc, out = battery("exact_py.py", "exact_py", "--only", "method.accuracy.synthetic")
    assert rc == 0 and not re.search(r"^FAIL", out, re.M), out
    assert results(out).get("method.accuracy.synthetic") == "HOLDS", out
    assert re.search(r"^PASS method\.accuracy\.synthetic caught mutant check:floor_loose", out, re.M), out
    rc, out = battery("exact_py.py", "exact_py", "--only", "method.accuracy.adversarial",
                      "--no-mutants")
    assert rc == 0 and results(out).get("method.accuracy.adversarial") == "HOLDS", out


def test_a_loose_declared_error_bound_is_not_a_failed_mutant():
    """exact_py declares eps = 1e-9 and errs 1e-16: the bound HOLDS, and the check's mutant (every
    run's error reported as 1.01 eps) is caught on it as on any method — no FAIL line."""
    rc, out = battery("exact_py.py", "exact_py", "--only", "method.declared.error_bound")
    assert rc == 0 and not re.search(r"^FAIL", out, re.M), out
    assert results(out).get("method.declared.error_bound") == "HOLDS", out
    assert re.search(r"^PASS method\.declared\.error_bound caught mutant check:error_over_eps", out,
                     re.M), out


def test_the_inputs_check_names_a_method_that_is_not_reproducible():
    """A method whose twins differ without any bad input is NOT-REPRODUCIBLE: the inputs check
    says so instead of blaming a refused call."""
    rc, out = battery("wrong_methods_py.py", "strided_shared_state_py,stride=4", "--only",
                      "method.contract.inputs", "--no-mutants")
    assert rc != 0 and results(out).get("method.contract.inputs") == "FAILS", out
    assert re.search(r"violated: NOT-REPRODUCIBLE: two twins from the same seed", out), out
    assert "a refused call changed the state" not in out, out


def test_shards_of_a_python_methods_battery_merge_into_its_report(tmp_path):
    """--shard K/N --out DIR records the method under test (and the plugins loaded); the merge
    judges the method's battery from those records without being told the method again."""
    dirs = [str(tmp_path / ("s%d" % k)) for k in range(2)]
    for k, d in enumerate(dirs):
        rc, out = battery("exact_py.py", "exact_py", "--only", "method.contract", "--no-mutants",
                          "--shard", "%d/2" % k, "--out", d)
        assert rc == 0, out
        with open(os.path.join(d, "meta.txt")) as f:
            assert "method exact_py\n" in f.read()
    report = str(tmp_path / "merged.md")
    env = child_env()
    env["OPENBLAS_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-m", "kvbound", "props", "--register",
                        os.path.join(METHODS, "exact_py.py"), "--merge"] + dirs + ["--report", report],
                       env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    v = results(out)
    for check in ("method.contract.inputs", "method.contract.memory", "method.contract.determinism"):
        assert v.get(check) == "HOLDS", (check, out)
    with open(report) as f:
        assert "The battery for method `exact_py`" in f.read()
    # a merge told another method than the shards ran is refused
    r = subprocess.run([sys.executable, "-m", "kvbound", "props", "--register",
                        os.path.join(METHODS, "exact_py.py"), "--method", "exact_drop_first_py",
                        "--merge"] + dirs, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "the shards ran exact_py" in r.stderr, r.stdout + r.stderr


def test_report_lines_start_with_the_verdict():
    """Every report line of the battery starts with its verdict; only the battery's own
    regression lines (a mutant caught, the budget) say PASS/FAIL."""
    rc, out = battery("strided_sample_py.py", "strided_sample_py,stride=4", "--only", "method.contract")
    assert rc == 0, out
    assert not re.search(r"^PASS method\.[a-z_.]+: ", out, re.M), out
    assert re.search(r"^HOLDS method\.contract\.memory", out, re.M), out
    assert re.search(r"^PASS method\.contract\.memory caught mutant check:extra_heap", out, re.M), out


@pytest.mark.parametrize("method", ["memory_raises_py", "strided_hoarder_py,stride=4"])
def test_memory_cheats_fail_the_measured_memory_contract(method):
    """A memory() that raises is a failed check (not 0 bytes); a method keeping twice what it
    reports in NumPy arrays is caught by the heap the battery measures, both numbers printed."""
    rc, out = battery("memory_cheats_py.py", method, "--only", "method.contract.memory",
                      "--no-mutants")
    assert rc == 1, out
    assert re.search(r"^FAILS method\.contract\.memory", out, re.M), out
    if method.startswith("memory_raises"):
        assert "memory() failed (python method memory_raises_py: memory raised RuntimeError" in out, out
    else:
        assert re.search(r"MEASURED growth \d+ bytes .* memory\(\) REPORTS growth \d+ bytes", out), out
