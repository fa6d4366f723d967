#!/usr/bin/env python3
"""Run LISA's analyses on a schedlab trace and say which fail (used by tests/lisa_trace.rs).

    target/lisa-venv/bin/python scripts/lisa_analyses.py TRACE PLAT_INFO [TRACE PLAT_INFO...]

TRACE is a text trace or a trace.dat; PLAT_INFO the plat_info.yml written beside it.
stdout: {"TRACE": {"<analysis call>": "ok" | "<exception>: <message>", ...}, ...} as JSON,
one entry per call: the dataframe methods of lisa.analysis's tasks, latency, load_tracking, frequency,
idle and rta analyses (for each task and CPU of the trace where they take one), and
EnergyModel.estimate_from_trace.
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
    from lisa.trace import Trace

    plat_info = PlatformInfo.from_yaml_map(plat_info)
    trace = Trace(path, plat_info=plat_info, normalize_time=False)
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
    call("rta.df_rtapp_main", lambda: ana.rta.df_rtapp_main())
    call("rta.df_rtapp_task", lambda: ana.rta.df_rtapp_task())
    call("rta.df_rtapp_loop", lambda: ana.rta.df_rtapp_loop())
    call("rta.df_rtapp_event", lambda: ana.rta.df_rtapp_event())
    call("rta.df_rtapp_stats", lambda: ana.rta.df_rtapp_stats())
    if "nrg-model" in plat_info:
        call("energy.estimate_from_trace",
             lambda: plat_info["nrg-model"].estimate_from_trace(trace))

    results = {}
    for name, f in calls:
        try:
            f()
            results[name] = "ok"
        except Exception as exc:  # the test reports every failing call by name
            results[name] = f"{type(exc).__name__}: {exc}"
    return results


if __name__ == "__main__":
    main()
