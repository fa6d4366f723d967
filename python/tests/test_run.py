"""`schedlab.run` gives what `schedlab run` gives, whatever form the workload takes."""

import json
import pathlib

import pytest

import schedlab
from conftest import ROOT, cli_json

WORKLOAD = ROOT / "workloads/default.json"
# A 16 ms periodic task and a 30% one, as rt-app JSON (the default workload has comments,
# which rt-app accepts and Python's json does not).
RTAPP = {
    "tasks": {
        "frame": {"loop": -1, "run": 4000, "timer": {"ref": "frame", "period": 16000}},
        "bg": {"loop": -1, "run": 3000, "sleep": 7000, "priority": 10},
    },
    "global": {"duration": 2},
}
EXPERIMENT = ROOT / "experiments/seed004-fio-iowait.toml"


def without_file(results: dict) -> dict:
    """Results minus the workload's file name, which a dict or JSON text does not have."""
    return {k: v for k, v in results.items() if k != "workload_file"}


@pytest.mark.parametrize(
    "kind",
    ["path", "pathlib", "json_text", "dict", "experiment", "default"],
)
def test_each_kind_of_workload_gives_the_cli_results(kind, tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(RTAPP, indent=1))
    arg, given = {
        "path": (path, str(path)),
        "pathlib": (path, pathlib.Path(path)),
        "json_text": (path, path.read_text()),
        "dict": (path, RTAPP),
        "experiment": (EXPERIMENT, str(EXPERIMENT)),
        "default": (None, None),
    }[kind]
    cli_args = ["run"] + ([arg] if arg else []) + ["--duration", "1s", "--reproducible"]
    expected = cli_json(*cli_args)
    got = schedlab.run(given, duration="1s", reproducible=True).json
    if kind in ("json_text", "dict"):
        assert without_file(got) == without_file(expected)
    else:
        assert got == expected


def test_switches_timed_writes_seed_and_platform_as_the_cli():
    expected = cli_json(
        "run", WORKLOAD, "--platform", "sdm845", "--duration", "2s", "--seed", "3",
        "--set", "cpufreq.rate_limit_us=2000", "--set", "feature.UTIL_EST=false",
        "--set-at", "500ms:kernel.sched_util_clamp_min_rt_default=128",
        "--reproducible",
    )
    got = schedlab.run(
        WORKLOAD,
        platform="sdm845",
        duration=2,
        seed=3,
        set={"cpufreq.rate_limit_us": 2000, "feature.UTIL_EST": False},
        set_at=[("500ms", "kernel.sched_util_clamp_min_rt_default", 128)],
        reproducible=True,
    ).json
    assert got == expected
    # The switches took: a different run than the default's.
    assert got != schedlab.run(WORKLOAD, platform="sdm845", duration=2, seed=3,
                               reproducible=True).json


def test_tables_hold_every_task_cpu_and_domain():
    pd = pytest.importorskip("pandas")
    r = schedlab.run(WORKLOAD, duration="1s")
    assert isinstance(r.tasks, pd.DataFrame)
    assert list(r.tasks["name"]) == [t["name"] for t in r.json["tasks"]]
    assert "wakeup_latency_ns.p99" in r.tasks.columns
    assert list(r.cpus["cpu"]) == list(range(6))  # juno-r0's six CPUs
    # juno-r0 has two cpufreq policies; each domain's residencies cover the whole run.
    assert len(r.freq_domains) == 2
    shares = r.freq_residency.groupby("domain")["share"].sum()
    assert shares.round(9).tolist() == [1.0, 1.0]
    total = r.freq_residency.groupby("domain")["time_ns"].sum()
    assert (total == r.json["duration_ns"]).all()


def test_lists_of_dicts_without_pandas(monkeypatch):
    monkeypatch.setattr(schedlab, "_pandas", lambda: None)
    r = schedlab.run(WORKLOAD, duration="1s")
    assert r.tasks == r.json["tasks"]
    assert isinstance(schedlab.platforms(), list)


def test_generator_metrics_and_gen_match_the_cli():
    fio = schedlab.gen("fio", service_time=80, runtime=1)
    assert fio == json.loads(
        __import__("conftest").cli("gen", "fio", "--service-time", "80", "--runtime", "1").stdout
    )
    r = schedlab.run(fio, platform="rk3399", duration="1s")
    assert r.workload["iops"] > 0


def test_platforms_and_platform():
    names = list(schedlab.platforms()["name"]) if schedlab._pandas() else [
        p["name"] for p in schedlab.platforms()
    ]
    assert "juno-r0" in names and "zen3-2s" in names
    juno = schedlab.platform("juno-r0")
    assert isinstance(juno, dict) and len(juno["cpus"]) == 6
    assert "6 CPUs" in juno.description


def test_every_public_function_explains_itself():
    for name in schedlab.__all__:
        assert getattr(schedlab, name).__doc__, name
    assert "set_at" in schedlab.run.__doc__
