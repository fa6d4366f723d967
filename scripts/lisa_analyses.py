#!/usr/bin/env python3
"""Run LISA's analyses on a schedlab trace and say which fail (used by tests/it/lisa_trace.rs).

    target/lisa-venv/bin/python scripts/lisa_analyses.py TRACE PLAT_INFO [TRACE PLAT_INFO...]

TRACE is a text trace or a trace.dat; PLAT_INFO the plat_info.yml written beside it.
stdout: {"TRACE": {"<analysis call>": "ok" | "<exception>: <message>", ...}, ...} as JSON,
one entry per call: the dataframe methods of lisa.analysis's tasks, latency, load_tracking, frequency,
idle and rta analyses (for each task and CPU of the trace where they take one; rta's plots
too), and EnergyModel.estimate_from_trace.

A text trace is opened with LISA's human-readable parser told how ftrace's `print` lines
read (`tracing_mark_write: <text>`), as docs/outputs.md's recipe does: its default parser has no
such rule, and rt-app's `userspace@rtapp_*` events are parsed out of them.
"""
import json
import sys
import warnings

warnings.filterwarnings("ignore")


def main():
    args = sys.argv[1:]
    print(json.dumps({path: analyse(path, plat) for path, plat in zip(args[::2], args[1::2])}))


def analyse(path, plat_info):
    from lisa.platforms.platinfo import PlatformInfo
    from lisa.trace import HRTxtTraceParser, PrintTxtEventParser, Trace

    plat_info = PlatformInfo.from_yaml_map(plat_info)
    parser = None
    if path.endswith(".txt"):
        print_parser = PrintTxtEventParser(event="print", func_field="ip", content_field="buf")
        parser = HRTxtTraceParser.from_txt_file(event_parsers=[print_parser])
    trace = Trace(path, plat_info=plat_info, normalize_time=False, parser=parser)
    ana = trace.ana
    # Every task that ran, by its comm after task_rename (LISA's task selection).
    tasks = [t for t in trace.task_ids if t.pid != 0]
    cpus = list(range(plat_info["cpus-count"]))
    calls = []

    def call(name, f):
        calls.append((name, f))

    call("tasks.df_tasks_wakeups", lambda: ana.tasks.df_tasks_wakeups())
    call("tasks.df_top_wakeup", lambda: ana.tasks.df_top_wakeup(min_wakeups=1))
    call("tasks.df_rt_tasks", lambda: ana.tasks.df_rt_tasks())
    call("tasks.df_tasks_states", lambda: ana.tasks.df_tasks_states())
    call("tasks.df_tasks_runtime", lambda: ana.tasks.df_tasks_runtime())
    call("tasks.df_tasks_total_residency", lambda: ana.tasks.df_tasks_total_residency())
    for t in tasks:
        call(f"tasks.df_task_states({t.comm})", lambda t=t: ana.tasks.df_task_states(t))
        call(f"tasks.df_task_total_residency({t.comm})",
             lambda t=t: ana.tasks.df_task_total_residency(t))
        call(f"tasks.df_task_activation({t.comm})", lambda t=t: ana.tasks.df_task_activation(t))
        call(f"latency.df_latency_wakeup({t.comm})", lambda t=t: ana.latency.df_latency_wakeup(t))
        call(f"latency.df_latency_preemption({t.comm})",
             lambda t=t: ana.latency.df_latency_preemption(t))
        call(f"latency.df_activations({t.comm})", lambda t=t: ana.latency.df_activations(t))
        call(f"latency.df_runtimes({t.comm})", lambda t=t: ana.latency.df_runtimes(t))
        call(f"load_tracking.df_task_signal({t.comm}, util)",
             lambda t=t: ana.load_tracking.df_task_signal(t, "util"))
    for signal in ["util", "load"]:
        call(f"load_tracking.df_cpus_signal({signal})",
             lambda s=signal: ana.load_tracking.df_cpus_signal(s))
        call(f"load_tracking.df_tasks_signal({signal})",
             lambda s=signal: ana.load_tracking.df_tasks_signal(s))
    call("load_tracking.df_top_big_tasks",
         lambda: ana.load_tracking.df_top_big_tasks(util_threshold=100, min_samples=1))
    call("frequency.df_cpus_frequency", lambda: ana.frequency.df_cpus_frequency())
    call("idle.df_cpus_idle", lambda: ana.idle.df_cpus_idle())
    call("idle.df_cpus_wakeups", lambda: ana.idle.df_cpus_wakeups())
    for cpu in cpus:
        call(f"frequency.df_cpu_frequency({cpu})", lambda c=cpu: ana.frequency.df_cpu_frequency(c))
        call(f"frequency.df_cpu_frequency_residency({cpu})",
             lambda c=cpu: ana.frequency.df_cpu_frequency_residency(c))
        call(f"frequency.df_domain_frequency_residency({cpu})",
             lambda c=cpu: ana.frequency.df_domain_frequency_residency(c))
        call(f"frequency.df_cpu_frequency_transitions({cpu})",
             lambda c=cpu: ana.frequency.df_cpu_frequency_transitions(c))
        call(f"frequency.df_cpu_frequency_transition_rate({cpu})",
             lambda c=cpu: ana.frequency.df_cpu_frequency_transition_rate(c))
        call(f"idle.df_cpu_idle({cpu})", lambda c=cpu: ana.idle.df_cpu_idle(c))
        call(f"idle.df_cpu_idle_state_residency({cpu})",
             lambda c=cpu: ana.idle.df_cpu_idle_state_residency(c))
    for domain in plat_info["freq-domains"]:
        call(f"idle.df_cluster_idle_state_residency({domain})",
             lambda d=domain: ana.idle.df_cluster_idle_state_residency(d))
    rta_calls(ana.rta, call)
    if "nrg-model" in plat_info:
        call("energy.estimate_from_trace",
             lambda: plat_info["nrg-model"].estimate_from_trace(trace))

    results = {}
    results["rta.threads"] = len(rtapp_threads(ana.rta))
    for name, f in calls:
        try:
            f()
            results[name] = "ok"
        except Exception as exc:  # the test reports every failing call by name
            results[name] = f"{type(exc).__name__}: {exc}"
    return results


def rtapp_threads(rta):
    """The rt-app threads (they write rtapp_task lines; the main process does not), each with
    what it did before the trace ends, which decides the analyses that apply to it, as on a
    real rt-app trace: whether it ended (a thread still running when the use case stops
    writes no end), ended an iteration of its first phase (the phase windows need one) and
    had a period to report slack against in every iteration (the perf index divides by
    c_period - c_run, and LISA's histogram of it fails on a NaN)."""
    from lisa.trace import MissingTraceEventError, TaskID

    try:
        df = rta.df_rtapp_task()
    except MissingTraceEventError:
        return []
    threads = []
    for (pid, comm), rows in df.groupby(["__pid", "__comm"], observed=True):
        t = TaskID(pid=pid, comm=comm)
        loops = rta.df_rtapp_loop(t)
        try:
            stats = rta.df_rtapp_stats(t)
            periodic = bool((stats["c_period"] != stats["c_run"]).all())
        except MissingTraceEventError:
            periodic = False
        threads.append((t, {
            "ended": bool((rows["event"] == "end").any()),
            "phase0_done": bool(((loops["event"] == "end") & (loops["phase"] == 0)).any()),
            "periodic": periodic,
        }))
    return threads


def rta_calls(rta, call):
    """Every analysis of lisa.analysis.rta, for each rt-app thread where it takes one."""
    call("rta.rtapp_tasks", lambda: rta.rtapp_tasks)
    call("rta.df_rtapp_main", lambda: rta.df_rtapp_main())
    call("rta.rtapp_window", lambda: rta.rtapp_window)
    call("rta.rtapp_reftime", lambda: rta.rtapp_reftime)
    call("rta.df_rtapp_task", lambda: rta.df_rtapp_task())
    call("rta.df_rtapp_loop", lambda: rta.df_rtapp_loop())
    call("rta.df_rtapp_event", lambda: rta.df_rtapp_event())
    call("rta.df_rtapp_stats", lambda: rta.df_rtapp_stats())
    call("rta.df_rtapp_phases_start", lambda: rta.df_rtapp_phases_start())
    call("rta.df_rtapp_phases_end", lambda: rta.df_rtapp_phases_end())
    for t, did in rtapp_threads(rta):
        def per(name, f, t=t):
            call(f"rta.{name}({t.comm})", lambda: f(t))
        per("df_rtapp_task", rta.df_rtapp_task)
        per("df_rtapp_loop", rta.df_rtapp_loop)
        per("df_rtapp_event", rta.df_rtapp_event)
        per("df_rtapp_stats", rta.df_rtapp_stats)
        per("df_phases", rta.df_phases)
        per("task_phase_windows", lambda t: list(rta.task_phase_windows(t)))
        per("df_rtapp_phases_start", rta.df_rtapp_phases_start)
        per("df_rtapp_phases_end", rta.df_rtapp_phases_end)
        per("df_rtapp_phase_start", lambda t: rta.df_rtapp_phase_start(t, 0))
        if did["phase0_done"]:
            per("df_rtapp_phase_end", lambda t: rta.df_rtapp_phase_end(t, 0))
            per("task_phase_window", lambda t: rta.task_phase_window(t, 0))
            per("task_phase_at",
                lambda t: rta.task_phase_at(t, rta.df_rtapp_loop(t).index[0]))
        if did["ended"]:
            per("task_window", rta.task_window)
        per("plot_phases", rta.plot_phases)
        per("plot_perf", rta.plot_perf)
        per("plot_latency", rta.plot_latency)
        per("plot_slack_histogram", rta.plot_slack_histogram)
        if did["periodic"]:
            per("plot_perf_index_histogram", rta.plot_perf_index_histogram)

if __name__ == "__main__":
    main()
