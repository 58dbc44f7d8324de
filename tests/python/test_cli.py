"""`kvbound run` on a Python method: the command line's library (kvb_cli_main of
libkvbound-cli.so) runs in the process that registered the method, so a spec names it like a
built-in — through kvb.cli_main([...]) and through `python3 -m kvbound run --register FILE.py`."""

import csv
import json
import os
import subprocess
import sys

from conftest import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = os.path.join(HERE, "methods")

SPEC = '''name "python_method"
stream "gaussian" { n = 128, d_key = 8, d_value = 8 }
scale "inv_sqrt_d"
method "strided_sample_py" { stride = 4 }
method "exact" {}
trials(2)
queries { last = true }
measures { "error", "memory" }
'''


def rows(out_dir):
    with open(os.path.join(out_dir, "results.csv")) as f:
        return list(csv.DictReader(f))


def check_run(out_dir):
    r = [x for x in rows(out_dir) if x["method"] == "strided_sample_py"]
    assert len(r) == 2 and all(x["status"] == "0" for x in r), r
    # stride 4 over 128 tokens keeps 32 of them: 32 keys and 32 values of d = 8, in float64
    assert all(x["mem_vectors"] == "64" and x["mem_bytes"] == "4096" for x in r), r
    with open(os.path.join(out_dir, "meta.json")) as f:
        meta = json.load(f)
    m = {x["type"]: x for x in meta["methods"]}
    assert m["strided_sample_py"].get("plugin") == "registered at run time", meta["methods"]
    assert "plugin" not in m["exact"], meta["methods"]


def test_cli_main_runs_a_spec_naming_a_python_method(tmp_path, capfd):
    import kvbound as kvb
    sys.path.insert(0, METHODS)
    from strided_sample_py import StridedSamplePy
    if StridedSamplePy.name not in kvb.registered():
        kvb.register_method(StridedSamplePy)
    spec = tmp_path / "spec.lua"
    spec.write_text(SPEC)
    out = str(tmp_path / "out")
    rc = kvb.cli_main(["run", str(spec), "--out", out, "--jobs", "1"])
    text = capfd.readouterr()
    assert rc == 0, text
    check_run(out)
    # a second call in the same process (another output directory) gives the same rows
    rc = kvb.cli_main(["run", str(spec), "--out", out + "2", "--jobs", "2"])
    assert rc == 0, capfd.readouterr()
    with open(os.path.join(out, "results.csv")) as a, open(os.path.join(out + "2", "results.csv")) as b:
        assert a.read() == b.read()


def test_python_m_kvbound_run_register(tmp_path):
    spec = tmp_path / "spec.lua"
    spec.write_text(SPEC)
    out = str(tmp_path / "out")
    env = child_env()
    env["OPENBLAS_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-m", "kvbound", "run", "--register",
                        os.path.join(METHODS, "strided_sample_py.py"), str(spec), "--out", out],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "strided_sample_py" in r.stdout, r.stdout
    check_run(out)
