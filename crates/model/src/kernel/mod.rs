//! The simulated kernel, one module per kernel file where possible: `core.rs` (core.c: rq,
//! wakeup, schedule, fork/exit, setscheduler, migration), `fair.rs` (fair.c: CFS, latency
//! nice; `fair/eevdf.rs` EEVDF, `fair/group.rs` group scheduling), `fair_balance.rs` (fair.c:
//! placement, EAS, load balancing), `topology.rs` (topology.c: sched domains),
//! `energy_model.rs` (the kernel's energy model), `rt.rs` (rt.c), `deadline.rs` (deadline.c),
//! `cpuidle/` (the menu and teo
//! governors, cluster states, time per OPP and idle state), `idle.rs` (idle.c: the idle loop),
//! `hrtimer.rs` (per-CPU sleep timers), `pm_qos.rs` (the CPU latency QoS), `pelt.rs` (pelt.c: PELT, util_est),
//! `syscalls.rs` (what threads ask of the kernel, timed writes), `invariants.rs` (the debug
//! checks after each event, of what it touched (`touched.rs`) and now and then of everything),
//! `futex.rs` (the futex-backed pthread objects rt-app
//! uses), `pipe.rs` (pipes, sockets and futex words as bounded buffers with wait queues), `cpufreq/` (the governors), `sched_cpufreq.rs` (the
//! scheduler's cpufreq hook and frequency changes), `variant.rs` (CONFIG_*, sched features, tunables, patch switches).

pub mod cgroup;
pub mod core;
pub mod cpufreq;
pub mod cpuidle;
pub mod deadline;
pub mod energy_model;
pub mod fair;
pub mod fair_balance;
pub mod futex;
pub mod hrtimer;
mod idle;
mod invariants;
pub mod pelt;
pub mod pipe;
pub mod pm_qos;
pub mod rt;
pub mod sched;
mod sched_cpufreq;
pub mod setattr;
mod syscalls;
pub mod topology;
mod touched;
pub mod tracepoint;
pub mod uclamp;
pub mod variant;

pub use self::core::Kernel;
pub use variant::Variant;
