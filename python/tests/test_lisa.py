"""A LISA user's loop: an `RTAConf` runs directly, and the trace opens in LISA with the
run's platform info."""

import json

import schedlab
from conftest import cli_json, need


def rtaconf():
    rta = need("lisa.wlgen.rta")
    plat_info = schedlab.platform("juno-r0").plat_info()
    profile = {
        "small": rta.RTAPhase(prop_wload=rta.PeriodicWload(duty_cycle_pct=10, period=16e-3,
                                                           duration=1)),
        "big": rta.RTAPhase(prop_wload=rta.PeriodicWload(duty_cycle_pct=60, period=16e-3,
                                                         duration=1)),
    }
    return rta.RTAConf.from_profile(profile, plat_info=plat_info)


def test_platform_info_is_lisas():
    need("lisa.platforms.platinfo")
    juno = schedlab.platform("juno-r0")
    info = juno.plat_info()
    assert info["cpus-count"] == 6
    capacities = info["cpu-capacities"]["orig"]
    assert [capacities[i] for i in range(6)] == [c["capacity_orig"] for c in juno["cpus"]]


def test_an_rtaconf_runs_and_its_trace_opens_in_lisa(tmp_path):
    conf = rtaconf()
    path = tmp_path / "rta.json"
    path.write_text(conf.json)
    expected = cli_json("run", path, "--reproducible")
    trace = tmp_path / "run.txt"
    r = schedlab.run(conf, trace=trace, reproducible=True)
    assert {k: v for k, v in r.json.items() if k != "workload_file"} == {
        k: v for k, v in expected.items() if k != "workload_file"
    }
    assert r.trace_path == trace and trace.exists()
    t = r.lisa_trace()
    states = t.ana.tasks.df_tasks_states()
    names = {task["name"] for task in r.json["tasks"]}
    assert names <= set(states["comm"])
    # LISA's running time of each task (TaskState.TASK_ACTIVE) is the runtime the results
    # report (1 µs: the trace's timestamps).
    running = states[states["curr_state"] == 8192]
    by_comm = running.groupby("comm")["delta"].sum()
    for task in r.json["tasks"]:
        assert abs(by_comm[task["name"]] - task["runtime_ns"] / 1e9) < 1e-6 * task["wakeups"] + 1e-6, task


def test_lisa_trace_needs_a_trace():
    import pytest

    r = schedlab.run(duration="1s")
    with pytest.raises(ValueError):
        r.lisa_trace()
