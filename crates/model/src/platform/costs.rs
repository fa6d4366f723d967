//! The machine's time: what the kernel paths the model runs cost the CPU that runs them
//! (a platform file's `[costs]` table), and the memory hierarchy a task's working set is
//! refilled from (`[memory]`). These are the parameters; the rules that apply them, path by
//! path, with who pays, are `machine.rs`.
//!
//! Costs are **work**, in ns of CPU time on a CPU of capacity 1024 at its highest OPP (the
//! unit of rt-app's `run`): the kernel executes them at the CPU's current capacity, so the
//! same path takes longer on a LITTLE core and at a low OPP, as on the hardware. Only
//! `ipi_latency_ns` (the interrupt controller delivering an IPI), `uclamp_rq_op_ns` (cache
//! misses), `cpufreq_work_ns` (a delay) and the memory bandwidths are wall time.
//!
//! A platform file may leave any key out; it then comes from [`Costs::for_uarch`]: the cycles
//! each path takes on a Cortex-A53 ([`A53_CYCLES`]) over the CPU's work per cycle relative to
//! an A53 ([`work_per_cycle`]) at its highest frequency.

use serde::{Deserialize, Serialize};

/// CPU costs of channel operations, ns at capacity 1024 (`cost.pipe_op_ns`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpcCosts {
    /// One pipe `read` or `write` (syscall, pipe lock, wake-up of the other side).
    pub pipe_op_ns: u64,
    /// One AF_UNIX stream `send` or `recv` (also the skb allocation or free).
    pub unix_op_ns: u64,
    /// One UDP/TCP packet through the protocol layers (a UDP `send`, a UDP or TCP `recv`).
    pub inet_op_ns: u64,
    /// One TCP `send` that appends to the socket's write queue: small sends are coalesced
    /// (autocorking, Nagle) into segments of up to 64 KiB on loopback, whose transmit and
    /// receive work (`inet_op_ns` + `net_rx_ns`) each send pays pro rata of its bytes.
    pub tcp_send_ns: u64,
    /// The loopback receive softirq of one packet (`net_rx_action` → IP → UDP/TCP receive),
    /// run on the sending CPU as loopback transmission does, so charged to the sender.
    pub net_rx_ns: u64,
    /// Copying to or from user space, picoseconds per byte, on each side.
    pub copy_ps_per_byte: u64,
}

/// The kernel paths' CPU work (ns at capacity 1024) and the IPI's delivery delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Costs {
    /// Interrupt entry and exit (exception vector, GIC/APIC acknowledge and EOI,
    /// `irq_enter`/`irq_exit`, the softirq check), per interrupt: timer or IPI.
    pub irq_ns: u64,
    /// One hrtimer expiry: `hrtimer_interrupt`, `__run_hrtimer`, `hrtimer_wakeup`, and
    /// reprogramming the clock event device.
    pub hrtimer_ns: u64,
    /// One tick: `tick_sched_timer` with `scheduler_tick`, `account_process_tick`,
    /// `run_local_timers` and RCU's check (the fair class's own tick work is included).
    pub tick_ns: u64,
    /// A system call that does not block (entry, exit and trivial work).
    pub syscall_ns: u64,
    /// `try_to_wake_up`'s own work: `pi_lock`, the state checks, `ttwu_do_activate`,
    /// `check_preempt_curr`, statistics (placement and enqueue are separate).
    pub ttwu_ns: u64,
    /// `select_task_rq`'s fixed part (`select_task_rq_fair` or `_rt`).
    pub select_ns: u64,
    /// Each CPU placement examines: an idle-sibling or capacity scan step, a CPU of an EAS
    /// `compute_energy`, a cpupri level check.
    pub select_cpu_ns: u64,
    /// `enqueue_entity` or `dequeue_entity` at one level of the group hierarchy
    /// (`update_curr`, `update_load_avg`, the timeline insert or erase, accounting).
    pub enqueue_ns: u64,
    /// `__schedule`'s fixed part: rq lock and clock, the class loop, and
    /// `put_prev`/`pick_next`/`set_next` at the root level.
    pub schedule_ns: u64,
    /// Each further level of the group hierarchy that `pick_next_task_fair`,
    /// `put_prev_entity` and `set_next_entity` walk.
    pub pick_level_ns: u64,
    /// `context_switch` between threads: `switch_to` (registers, FP/SIMD state, TLS) and
    /// `finish_task_switch`.
    pub context_switch_ns: u64,
    /// The extra of switching address spaces (`switch_mm`: ASID/PCID allocation, the
    /// translation table base write, the TLB and page-walk cache misses that follow).
    pub mm_switch_ns: u64,
    /// Sending an IPI (`smp_call_function_single_async`, the interrupt controller write).
    pub ipi_send_ns: u64,
    /// Wall time from sending an IPI to the target CPU taking it.
    pub ipi_latency_ns: u64,
    /// One uclamp fast-path bucket operation (`uclamp_rq_inc_id`, `uclamp_rq_dec_id`, a
    /// `uclamp_rq_max_value` rescan), wall time: the seeds blame the cache misses on
    /// `rq->uclamp[].bucket[]` and `p->uclamp[]` it takes, which wait on memory whatever the
    /// core and its frequency.
    pub uclamp_rq_op_ns: u64,
    /// Wall time from schedutil queueing its kthread's work (drivers without fast switch), or
    /// a dbs governor queueing its work, to that work setting the frequency.
    pub cpufreq_work_ns: u64,
    #[serde(flatten)]
    pub ipc: IpcCosts,
}

/// The memory a task's working set and kernel state are refilled from after it lost its
/// cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Cache private to a CPU (its L1D, plus a private L2 where there is one), KiB: what
    /// a task loses to the tasks that run on its CPU after it.
    pub private_kib: u64,
    /// One last-level cache, KiB.
    pub llc_kib: u64,
    /// Bandwidth one CPU refills its private cache with from the LLC, MB/s.
    pub llc_mb_s: u64,
    /// Bandwidth one CPU refills with from memory (a cache miss in the LLC), MB/s; a remote
    /// NUMA node gives this times the local over the remote node distance.
    pub dram_mb_s: u64,
    /// Load-to-use latency of a miss in the private cache that hits the LLC, ns.
    pub llc_latency_ns: u64,
    /// Load-to-use latency of a miss in the LLC (local memory), ns; a remote NUMA node
    /// gives this times the node distance over the local one (the SLIT's distances are
    /// relative latencies).
    pub dram_latency_ns: u64,
}

/// Cache lines of a task's own kernel state that its wake-up, switch-in and return to user
/// space walk (v6.1 arm64, 64-byte lines; the scheduler's shared structures, runqueue and
/// timer base, are hot from the other tasks and not counted): `task_struct` fields of
/// `try_to_wake_up`, the enqueue and the pick (state, `pi_lock`, `cpus_mask`, the
/// `sched_entity` with its `sched_avg`, `sched_info`, uclamp) and `thread_struct`'s
/// `cpu_context` and TLS, 24; the FP/SIMD state restored on the return to user space
/// (32 × 16 bytes and the status), 9; the kernel stack from the syscall's entry to
/// `cpu_switch_to` (about 1 KiB of frames) and `pt_regs` (336 bytes), 22; the hrtimer or
/// wait-queue entry that wakes it, 2; `mm_struct` (pgd, ASID, cpumask), 3; the page-table
/// walks of the vmapped kernel stack's two pages and of the six user pages the return
/// touches first (code, stack, data, vDSO, vvar, rseq), 14. Each is a dependent load (the
/// task → its entity → its stack…), so each pays the miss latency; the user data the task
/// then touches is its working set, refilled at the memory's bandwidth.
pub const TASK_STATE_LINES: u64 = 74;

/// A key of `[costs]` or `[memory]` as `--set cost.<name>` / `memory.<name>` and
/// `schedlab switches` show it.
pub struct MachineField {
    pub name: &'static str,
    /// The smallest value: 1 where a thread may loop on requests that complete at once (a
    /// syscall, a dropped datagram) and must still see time pass, or for a bandwidth.
    pub min: u64,
    pub meaning: &'static str,
}

const fn field(name: &'static str, min: u64, meaning: &'static str) -> MachineField {
    MachineField { name, min, meaning }
}

/// The fields of [`Costs`], in its order.
pub const COST_FIELDS: &[MachineField] = &[
    field(
        "irq_ns",
        0,
        "interrupt entry and exit, per timer interrupt or IPI",
    ),
    field(
        "hrtimer_ns",
        0,
        "one hrtimer expiry (hrtimer_interrupt, hrtimer_wakeup, reprogramming)",
    ),
    field("tick_ns", 0, "one scheduler tick"),
    field("syscall_ns", 1, "a system call that does not block"),
    field(
        "ttwu_ns",
        0,
        "try_to_wake_up's own work (placement and enqueue apart)",
    ),
    field("select_ns", 0, "select_task_rq's fixed part"),
    field(
        "select_cpu_ns",
        0,
        "each CPU placement examines (idle scan step, EAS compute_energy CPU, cpupri level)",
    ),
    field(
        "enqueue_ns",
        0,
        "enqueue or dequeue at one level of the group hierarchy",
    ),
    field(
        "schedule_ns",
        0,
        "__schedule's fixed part with put_prev/pick_next/set_next at the root",
    ),
    field(
        "pick_level_ns",
        0,
        "each further group level pick/put/set_next walk",
    ),
    field(
        "context_switch_ns",
        0,
        "switch_to and finish_task_switch between threads",
    ),
    field(
        "mm_switch_ns",
        0,
        "the extra of switching address spaces (switch_mm)",
    ),
    field("ipi_send_ns", 0, "sending an IPI"),
    field(
        "ipi_latency_ns",
        0,
        "wall time from sending an IPI to the target taking it",
    ),
    field(
        "uclamp_rq_op_ns",
        0,
        "one uclamp fast-path bucket operation while the static key is on, wall time (seeds 000, 001)",
    ),
    field(
        "cpufreq_work_ns",
        0,
        "delay of schedutil's kthread / a dbs governor's work, wall time",
    ),
    field("pipe_op_ns", 1, "one pipe read or write"),
    field("unix_op_ns", 1, "one AF_UNIX stream read or write"),
    field(
        "inet_op_ns",
        1,
        "one UDP/TCP packet through the protocol (a UDP send, a recv)",
    ),
    field("tcp_send_ns", 1, "a TCP send appended to the write queue"),
    field(
        "net_rx_ns",
        0,
        "the loopback receive softirq of a packet, charged to the sender",
    ),
    field(
        "copy_ps_per_byte",
        0,
        "copy to or from user space, ps per byte, on each side",
    ),
];

/// The fields of [`Memory`], in its order.
pub const MEMORY_FIELDS: &[MachineField] = &[
    field(
        "private_kib",
        0,
        "cache private to a CPU (L1D and a private L2), KiB",
    ),
    field("llc_kib", 0, "one last-level cache, KiB"),
    field(
        "llc_mb_s",
        1,
        "refill bandwidth of one CPU from the LLC, MB/s",
    ),
    field(
        "dram_mb_s",
        1,
        "refill bandwidth of one CPU from memory, MB/s",
    ),
    field(
        "llc_latency_ns",
        0,
        "latency of a private-cache miss that hits the LLC, ns",
    ),
    field(
        "dram_latency_ns",
        0,
        "latency of an LLC miss to local memory, ns",
    ),
];

/// Cycles of each path on a Cortex-A53 (v6.1 arm64, CONFIG_FAIR_GROUP_SCHED, no debug
/// options).
pub struct PathCycles {
    pub irq: u64,
    pub hrtimer: u64,
    pub tick: u64,
    pub syscall: u64,
    pub ttwu: u64,
    pub select: u64,
    pub select_cpu: u64,
    pub enqueue: u64,
    pub schedule: u64,
    pub pick_level: u64,
    pub context_switch: u64,
    pub mm_switch: u64,
    pub ipi_send: u64,
}

/// Wall time of one uclamp bucket operation: fitted on seed 000's `perf bench sched pipe` on a
/// Juno A57 (Qais: 16.1762 µs/op compiled out, 17.12574 µs/op compiled in, 0.949 µs per round
/// trip over its 8 bucket operations).
const UCLAMP_RQ_OP_NS: u64 = 119;

/// Wall time from cpufreq work being queued to it setting the frequency: the kthread's or
/// kworker's wake-up and switch-in on a CPU of the policy, 50 µs on any core.
const CPUFREQ_WORK_NS: u64 = 50_000;

/// The relative sizes follow the code each path runs (functions called, loops, locks, the
/// cache lines touched): interrupt entry/exit ≈ hrtimer expiry ≈ 0.55 of a context switch;
/// an enqueue level (update_curr, update_load_avg and its decay, the rbtree insert) ≈ 0.9;
/// `__schedule` ≈ 1.35; ttwu's own part ≈ 0.67; an address-space switch ≈ 0.9 (ASID check,
/// TTBR write, the TLB refills after); a tick ≈ 3.3 (scheduler_tick, accounting, timers,
/// RCU); a syscall's entry and exit ≈ 0.4; a load-balance or placement step per CPU a few
/// cache lines (0.04–0.11).
///
/// Their common scale is fitted on ONE measurement, seed 002's `cyclictest --policy other
/// -D 5 -q -n` on an idle 8-CPU Arm64 board (Vincent's "group 0" row: min 17 µs), which
/// `smp8` (HiKey 620: 8 × A53, schedutil, so the idle board runs at its lowest OPP, 432 MHz)
/// stands for: a timer wake-up of a CPU in WFI is its exit (1 µs) + irq + hrtimer + ttwu +
/// select (the LLC's 4 CPUs) + enqueue + schedule + context switch (with the return to
/// user space) = 6 900 cycles, 15.97 µs at 432 MHz, 16.97 µs in all
/// (`experiments/calibration/smp8-cyclictest.toml`, checked by `tests/it/machine_time.rs`).
pub const A53_CYCLES: PathCycles = PathCycles {
    irq: 880,
    hrtimer: 960,
    tick: 3_940,
    syscall: 480,
    ttwu: 790,
    select: 260,
    select_cpu: 50,
    enqueue: 1_050,
    schedule: 1_580,
    pick_level: 310,
    context_switch: 1_180,
    mm_switch: 1_050,
    ipi_send: 260,
};

/// Work per cycle relative to a Cortex-A53, from the `capacity-dmips-mhz` the kernel's
/// device trees give each core (arm64 `topology.c` scales capacities by it): juno.dts
/// A57 1024 vs A53 578; rk3399.dtsi A72 1024 vs A53 485; sdm845.dtsi Kryo 385 Gold 1024
/// vs Silver 607 (Silver = Cortex-A55, ~1.15 × an A53 per clock in Arm's figures). x86
/// cores have no such property: Sandy Bridge and later are taken at 2.5 × an A53 per
/// clock (an estimate: their kernel paths run at an IPC of ~1.4 where the A53 manages
/// ~0.55), a newer server core (Broadwell, Zen 3) at 3.0. Unknown names get 1.0.
pub fn work_per_cycle(uarch: &str) -> f64 {
    let u = uarch.to_ascii_lowercase();
    // A server part runs the same core as its desktop sibling (Ivy Bridge-EP, -EX).
    let core = u
        .strip_suffix("-ep")
        .or(u.strip_suffix("-ex"))
        .unwrap_or(&u);
    match core {
        "cortex-a53" => 1.0,
        "cortex-a55" | "kryo385-silver" => 1.15,
        "cortex-a57" => 1024.0 / 578.0,
        "cortex-a72" => 1024.0 / 485.0,
        "cortex-a75" | "kryo385-gold" => 1.15 * 1024.0 / 607.0,
        "sandybridge" | "ivybridge" | "haswell" => 2.5,
        "broadwell" | "skylake" | "zen2" | "zen3" => 3.0,
        _ => 1.0,
    }
}

impl Costs {
    /// The costs on a CPU of micro-architecture `uarch` whose highest frequency is
    /// `max_khz` (the capacity-1024 CPU of a platform).
    pub fn for_uarch(uarch: &str, max_khz: u32) -> Costs {
        Costs::for_work_per_cycle(uarch, work_per_cycle(uarch), max_khz)
    }

    /// The costs on a CPU of micro-architecture `uarch` doing `per_cycle` times an A53's
    /// work per cycle (the common scale `schedlab host calibrate` fits on the machine it
    /// runs on, where [`work_per_cycle`] only estimates it) at `max_khz`. The IPI's delivery
    /// is the interrupt controller's (the uarch's family), not the core's speed.
    pub fn for_work_per_cycle(uarch: &str, per_cycle: f64, max_khz: u32) -> Costs {
        let apic = work_per_cycle(uarch) >= 2.5;
        let ghz = (max_khz.max(1) as f64) / 1e6;
        let ns = |cycles: u64| (cycles as f64 / (per_cycle * ghz)).round() as u64;
        let c = &A53_CYCLES;
        Costs {
            irq_ns: ns(c.irq),
            hrtimer_ns: ns(c.hrtimer),
            tick_ns: ns(c.tick),
            syscall_ns: ns(c.syscall).max(1),
            ttwu_ns: ns(c.ttwu),
            select_ns: ns(c.select),
            select_cpu_ns: ns(c.select_cpu),
            enqueue_ns: ns(c.enqueue),
            schedule_ns: ns(c.schedule),
            pick_level_ns: ns(c.pick_level),
            context_switch_ns: ns(c.context_switch),
            mm_switch_ns: ns(c.mm_switch),
            ipi_send_ns: ns(c.ipi_send),
            // GICv2/GICv3 SGI delivery and the target's exception entry: ~1 µs on the
            // Arm boards (GIC-400 at the interconnect's clock), APIC IPIs ~0.5 µs on x86.
            ipi_latency_ns: if apic { 500 } else { 1_000 },
            uclamp_rq_op_ns: UCLAMP_RQ_OP_NS,
            cpufreq_work_ns: CPUFREQ_WORK_NS,
            ipc: IpcCosts::for_scale(|cycles| ns(cycles).max(1)),
        }
    }
}

/// The A53 cycles a `[costs]` key is derived from (`irq_ns`, `pipe_op_ns`, …; per KiB for
/// `copy_ps_per_byte`), or None for the keys that are wall time (`ipi_latency_ns`,
/// `uclamp_rq_op_ns`, `cpufreq_work_ns`).
pub fn a53_cycles(key: &str) -> Option<u64> {
    let c = &A53_CYCLES;
    Some(match key {
        "irq_ns" => c.irq,
        "hrtimer_ns" => c.hrtimer,
        "tick_ns" => c.tick,
        "syscall_ns" => c.syscall,
        "ttwu_ns" => c.ttwu,
        "select_ns" => c.select,
        "select_cpu_ns" => c.select_cpu,
        "enqueue_ns" => c.enqueue,
        "schedule_ns" => c.schedule,
        "pick_level_ns" => c.pick_level,
        "context_switch_ns" => c.context_switch,
        "mm_switch_ns" => c.mm_switch,
        "ipi_send_ns" => c.ipi_send,
        "pipe_op_ns" => PIPE_OP_CYCLES,
        "unix_op_ns" => UNIX_OP_CYCLES,
        "inet_op_ns" => INET_OP_CYCLES,
        "tcp_send_ns" => TCP_SEND_CYCLES,
        "net_rx_ns" => NET_RX_CYCLES,
        "copy_ps_per_byte" => COPY_CYCLES_PER_KIB,
        _ => return None,
    })
}

impl IpcCosts {
    /// The channel costs with each path's A53 cycles converted by `ns`.
    fn for_scale(ns: impl Fn(u64) -> u64) -> IpcCosts {
        IpcCosts {
            pipe_op_ns: ns(PIPE_OP_CYCLES),
            unix_op_ns: ns(UNIX_OP_CYCLES),
            inet_op_ns: ns(INET_OP_CYCLES),
            tcp_send_ns: ns(TCP_SEND_CYCLES),
            net_rx_ns: ns(NET_RX_CYCLES),
            copy_ps_per_byte: (ns(COPY_CYCLES_PER_KIB) * 1000 / 1024).max(1),
        }
    }
}

/// A53 cycles of one pipe read or write beyond the syscall, wake-up and switch paths and
/// the cache refills: fitted on seed 002's `hackbench -p -l 160 -g 16` on `smp8` (0.786 s),
/// the mean of seeds 0–4 (which spread ±9%): 1 350 ns at 1.2 GHz gives 0.779 s (1 250 ns:
/// 0.828 s; 1 500 ns: 0.846 s; the mean does not move monotonically at this scatter, so the
/// fit is to ±5%).
const PIPE_OP_CYCLES: u64 = 1_620;
/// A53 cycles of one AF_UNIX stream send or receive: fitted on seed 002's `hackbench -l 160
/// -g 16` on `smp8` (1.315 s), the mean of seeds 0–4 (which spread ±3%): 4 000 ns at
/// 1.2 GHz gives 1.310 s (3 900 ns: 1.294 s; 4 300 ns: 1.422 s).
const UNIX_OP_CYCLES: u64 = 4_800;
/// A53 cycles of a UDP packet's protocol layers and of its loopback receive softirq (taken
/// equal): fitted on seed 000's netperf UDP_STREAM send-64 Hmean (62.15 Mbit/s, v5.7 base)
/// on `x86-4c8t` (3 820 ns each at 3.8 GHz × 2.5 work per cycle).
const INET_OP_CYCLES: u64 = 36_290;
const NET_RX_CYCLES: u64 = 36_290;
/// A coalesced TCP send's own work: 0.15 of a packet's protocol work (the append to the
/// write queue and the autocork check, against a packet's full transmit path).
const TCP_SEND_CYCLES: u64 = 5_440;
/// A53 cycles to copy 1 KiB to or from user space: ~1 byte per cycle for the kernel's
/// `copy_to_user` on an in-order A53 (its load/store pair loop missing in L1).
const COPY_CYCLES_PER_KIB: u64 = 1_100;

impl Memory {
    /// When a platform file has no `[memory]` table (or leaves a key out): 32 KiB private (an
    /// L1D), a 1 MiB LLC, 8 GB/s and 20 ns from the LLC, 3 GB/s and 150 ns from memory (an
    /// A53 cluster on LPDDR3).
    pub const fn fallback() -> Memory {
        Memory {
            private_kib: 32,
            llc_kib: 1024,
            llc_mb_s: 8_000,
            dram_mb_s: 3_000,
            llc_latency_ns: 20,
            dram_latency_ns: 150,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<T: Serialize>(t: &T) -> Vec<String> {
        match serde_json::to_value(t).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_switch_tables_name_every_field_once() {
        let costs: Vec<&str> = COST_FIELDS.iter().map(|f| f.name).collect();
        let memory: Vec<&str> = MEMORY_FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(costs, keys(&Costs::for_uarch("cortex-a53", 1_200_000)));
        assert_eq!(memory, keys(&Memory::fallback()));
    }

    #[test]
    fn the_uarch_costs_are_its_estimated_scale_and_every_path_names_its_cycles() {
        for u in ["cortex-a53", "cortex-a72", "skylake", "zen3", "unknown"] {
            let at = Costs::for_work_per_cycle(u, work_per_cycle(u), 2_600_000);
            assert_eq!(Costs::for_uarch(u, 2_600_000), at, "{u}");
        }
        // Twice the work per cycle halves a path, the IPI's delivery stays the APIC's.
        let (one, two) = (
            Costs::for_work_per_cycle("skylake", 2.0, 1_000_000),
            Costs::for_work_per_cycle("skylake", 4.0, 1_000_000),
        );
        assert_eq!(one.schedule_ns, 2 * two.schedule_ns);
        assert_eq!((one.ipi_latency_ns, two.ipi_latency_ns), (500, 500));
        for f in COST_FIELDS {
            let wall = ["ipi_latency_ns", "uclamp_rq_op_ns", "cpufreq_work_ns"].contains(&f.name);
            assert_eq!(a53_cycles(f.name).is_none(), wall, "{}", f.name);
        }
    }
}
