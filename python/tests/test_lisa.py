"""A LISA user's loop: an `RTAConf` runs directly, and the trace opens in LISA with the
run's platform info; rt-app's own trace lines reach LISA's rta analysis."""

import shutil

import pytest

import schedlab
from conftest import ROOT, cannot_check, cli_json, need


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


def rtapp_example(name):
    """rt-app's example `name` (../shared beside the checkout, as the Rust tests read it)."""
    path = ROOT.parent / "shared/workloads/rt-app-examples" / f"{name}.json"
    if not path.exists():
        cannot_check(f"{path} not found (rt-app's examples)")
    return path.read_text()


@pytest.mark.parametrize("name, trace_format", [("run.txt", None), ("run.trace", "text"),
                                                ("run.dat", None)])
def test_lisa_trace_of_an_rt_app_example_has_rt_apps_stats(tmp_path, name, trace_format):
    """rt-app's example 1 (a thread running 20 ms, sleeping 80 ms) with rt-app's stats lines
    on: `lisa_trace()` gives LISA's rta analysis rt-app's lines (a text trace, whatever its
    name, is read with the parser told how `print` lines read: LISA's default parser fails
    on them with KeyError 'ip'), and the task analyses agree with the results."""
    need("lisa.trace")
    if name.endswith(".dat") and shutil.which("trace-cmd") is None:
        cannot_check("trace-cmd is not installed: LISA cannot read a trace.dat")
    before = '"ftrace" : "main,task,loop,event"'
    workload = rtapp_example("example1")
    assert before in workload
    workload = workload.replace(before, '"ftrace" : "main,task,loop,event,stats"')
    trace = tmp_path / name
    r = schedlab.run(workload, duration="1s", trace=trace, trace_format=trace_format,
                     reproducible=True)
    # The iterations rt-app ended, as the text trace says.
    text_trace = tmp_path / "text.txt"
    schedlab.run(workload, duration="1s", trace=text_trace, reproducible=True)
    ends = text_trace.read_text().count(" rtapp_stats: ")
    assert ends >= 9
    t = r.lisa_trace()
    stats = t.ana.rta.df_rtapp_stats()
    assert len(stats) == ends
    assert set(stats["__comm"]) == {"thread0-0"}
    assert (stats["c_run"] == 20000).all() and (stats["c_period"] == 0).all()
    assert (stats["run"] >= stats["c_run"]).all()
    assert (stats["period"] >= 100000).all(), stats["period"]
    loops = t.ana.rta.df_rtapp_loop()
    assert len(loops[loops["event"] == "end"]) == ends
    assert [task.comm for task in t.ana.rta.rtapp_tasks] == ["rt-app", "thread0-0"]
    # The task analyses: the thread's running time is the results' runtime.
    runtime = t.ana.tasks.df_tasks_runtime()
    (task,) = r.json["tasks"]
    assert task["name"] == "thread0-0"
    assert abs(runtime.loc[1000, "runtime"] - task["runtime_ns"] / 1e9) < 1e-6
    activations = t.ana.tasks.df_task_activation("thread0-0")
    assert len(activations[activations["active"] == 1]) >= ends
