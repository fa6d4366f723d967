"""`schedlab.compare`: the command line's statistics, as a table."""

import json
import os
import subprocess
import sys

import schedlab
from conftest import ROOT, cli

WORKLOAD = ROOT / "workloads/default.json"


def rows(table):
    return table if isinstance(table, list) else table.to_dict("records")


def test_identical_sides_differ_in_nothing():
    table = rows(schedlab.compare([WORKLOAD, WORKLOAD], runs=3, duration="1s"))
    assert table, "no metrics"
    assert not any(r["significant"] for r in table)
    assert all(r["diff_pct"] == 0 for r in table)


def fio_sides(tmp_path):
    fio = schedlab.gen("fio", service_time=80, runtime=1)
    path = tmp_path / "fio.json"
    path.write_text(json.dumps(fio))
    return fio, path


def test_iowait_boost_off_costs_fio_iops_as_the_cli_says(tmp_path):
    # Seed 004: without schedutil's iowait boost, fio's psync loop runs at a lower frequency
    # and completes fewer I/Os (rk3399, rate_limit_us 2000).
    fio, path = fio_sides(tmp_path)
    common = ["--platform", "rk3399", "--duration", "1s", "--runs", "3",
              "--set", "cpufreq.rate_limit_us=2000"]
    expected = json.loads(cli("compare", path, "--vs", "cpufreq.iowait_boost=false",
                              *common, "--json", "-").stdout)
    table = schedlab.compare(
        [fio], vs=[{"cpufreq.iowait_boost": False}], runs=3, platform="rk3399",
        duration="1s", set={"cpufreq.rate_limit_us": 2000},
    )
    got = table.attrs["json"] if not isinstance(table, list) else None
    if got is not None:
        assert got["metrics"] == expected["metrics"]
    iops = [r for r in rows(table) if r["metric"].endswith("iops")]
    assert [r["side"] for r in iops][1] == "cpufreq.iowait_boost=false"
    off = iops[1]
    cli_row = next(m for m in expected["metrics"] if m["metric"].endswith("iops"))
    assert off["diff_pct"] < 0 and off["significant"]
    assert (off["diff_pct"], off["significant"]) == (cli_row["diff_pct"][1], cli_row["significant"][1])


def test_metrics_filter():
    table = rows(schedlab.compare([WORKLOAD, WORKLOAD], runs=2, duration="1s",
                                  metrics="energy_mj"))
    assert {r["metric"] for r in table} == {"energy_mj"}


def test_the_numbers_do_not_depend_on_the_thread_count(tmp_path):
    fio, path = fio_sides(tmp_path)
    code = (
        "import json, schedlab, sys\n"
        f"t = schedlab.compare([{str(path)!r}], vs=[{{'cpufreq.iowait_boost': False}}], runs=4,"
        " platform='rk3399', duration='1s', metrics=['iops'])\n"
        "rows = t if isinstance(t, list) else t.to_dict('records')\n"
        "print(json.dumps([(r['mean'], r['stddev'], r['values']) for r in rows]))\n"
    )
    outs = []
    for threads in ("1", "3"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True)
        outs.append(p.stdout)
    assert outs[0] == outs[1]
