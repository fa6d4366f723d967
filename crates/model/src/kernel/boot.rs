//! Boot: the kernel's state from the platform, the run's settings and the workload — the
//! cpufreq policies at their start frequency, the runqueues, uclamp and the cgroups with the
//! settings' writes applied — then the first events (each CPU enters its idle loop, the
//! initial threads are created, the governors start).

use super::cgroup::Cgroups;
use super::core::{Event, Kernel, KernelOutputs, FIRST_PID};
use super::cpufreq::{Cpufreq, Env, GovernorKind, Policies};
use super::cpuidle::{CpuidleDevice, Residency};
use super::fair::Fair;
use super::fair_balance::Balance;
use super::futex::{Barrier, Cond, Futexes, Mutex};
use super::hrtimer::HrtimerBases;
use super::invariants::Checks;
use super::pelt::{PeltClock, SchedAvg};
use super::pipe::Channels;
use super::pm_qos::CpuLatencyQos;
use super::rt::{RtBandwidth, RtRq};
use super::sched::{freq_scale, Domain, Rq};
use super::sched_cpufreq::CpuTimesAcc;
use super::uclamp::{RqUclamp, UclampConfig, UclampSys};
use super::variant::Variant;
use crate::kernel::tracepoint::{EventSelection, TraceEvent};
use crate::platform::{Platform, SCHED_CAPACITY_SCALE};
use crate::workload::{CpuSet, UserSpace, Workload};
use schedlab_base::error::InputError;
use schedlab_base::sim::{EventQueue, SimRng};
use std::sync::Arc;

impl Kernel {
    /// Boot: runqueues at the governor's fixed OPP and the workload's initial threads
    /// scheduled for creation within the first `start_spread_ns`.
    pub fn new(
        platform: Platform,
        variant: Variant,
        workload: Workload,
        outputs: KernelOutputs,
        rng: SimRng,
        queue: &mut EventQueue<Event>,
    ) -> Result<Kernel, InputError> {
        let n = platform.nr_cpus();
        let mut variant = variant;
        let freq_invariant = *variant
            .freq_invariance
            .get_or_insert(platform.freq_invariant);
        let (cpufreq, boot_opp) = boot_cpufreq(&platform, &variant, freq_invariant)?;
        let (uclamp, cgroups) = boot_uclamp(&variant, &workload)?;
        let tg_cgroup = workload
            .taskgroups
            .iter()
            .map(|p| {
                cgroups
                    .find(p)
                    .expect("boot_uclamp creates every workload group")
            })
            .collect();
        let domains: Vec<Domain> = platform
            .freq_domains
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let opp = boot_opp[i];
                Domain {
                    opp,
                    busy_cpus: 0,
                    res: Residency::new(d.opps.len(), d.cluster_idle_states.len(), opp),
                }
            })
            .collect();
        let cpuidle = platform
            .cpus
            .iter()
            .map(|c| CpuidleDevice::new(variant.cpuidle_governor, c.idle_states.len()))
            .collect();
        let rqs = boot_rqs(&platform, &domains, freq_invariant);
        let run_capacity = match workload.global.calibration {
            crate::workload::Calibration::Cpu(c) if c < n => platform.cpus[c].capacity_orig as u64,
            _ => SCHED_CAPACITY_SCALE as u64,
        };
        let futex = boot_futexes(&workload);
        let rt_bw = RtBandwidth {
            runtime: u64::try_from(variant.sched_rt_runtime_us)
                .ok()
                .map(|us| us * 1000),
            period: variant.sched_rt_period_us * 1000,
        };
        let lb = Balance::new(
            &platform,
            variant.energy_model,
            freq_invariant,
            variant.governor == GovernorKind::Schedutil,
            variant.sched_migration_cost_ns,
            (variant.tick_ns(), u64::from(variant.hz)),
        );
        let (costs, memory) = variant.machine(&platform);
        let llc_touched = vec![0; lb.topo.llc_id.iter().max().map_or(1, |m| m + 1)];
        let mut k = Kernel {
            fair: Fair::new(n, &variant),
            lb,
            this_cpu: 0,
            user: UserSpace::new(&workload),
            costs,
            memory,
            platform,
            variant,
            tasks: Vec::new(),
            llc_touched,
            rqs,
            domains,
            cpufreq,
            uclamp,
            cgroups,
            tg_cgroup,
            nohz_stats_armed: false,
            rng,
            futex,
            channels: Channels::new(&workload.channels),
            rt_bw,
            rt_period_armed: false,
            next_pid: FIRST_PID,
            run_capacity,
            events: if outputs.observer.is_some() {
                outputs.events
            } else {
                EventSelection::default()
            },
            observer: outputs.observer,
            rtapp_logs: outputs.rtapp_logs,
            admin_log: Vec::new(),
            free_tasks: Vec::new(),
            resched_mask: vec![0; n.div_ceil(64)],
            checks: Checks::new(n),
            exited_forks: Vec::new(),
            threads_alive: 0,
            thread_exited: false,
            fork_failures: vec![0; workload.tasks.len()],
            all_cpus: Arc::new(CpuSet::all(n)),
            masks: Default::default(),
            wake_scratch: Vec::new(),
            log_scratch: Vec::new(),
            cpuidle,
            hrtimers: HrtimerBases::new(n),
            pm_qos: CpuLatencyQos::default(),
            workload,
        };
        k.start(queue)?;
        Ok(k)
    }

    /// The first events: the settings' PM QoS request and fair cgroup writes, the initial
    /// threads' creation, each CPU's initial trace state and idle loop, rt-app's start
    /// marks, the governors' start and the timed writes.
    fn start(&mut self, queue: &mut EventQueue<Event>) -> Result<(), InputError> {
        let n = self.platform.nr_cpus();
        if let Some(us) = self.workload.global.pm_qos_cpu_dma_latency_us {
            self.pm_qos.add_request(us);
        }
        self.sync_fair_groups();
        for w in &self.variant.cgroup_writes.clone() {
            if w.file.starts_with("cpu.uclamp.") {
                continue;
            }
            let g = self
                .cgroups
                .find(&w.path)
                .expect("boot_uclamp creates every group");
            self.write_fair_cgroup(g, &w.file, &w.value, 0)
                .map_err(|e| {
                    InputError::new(
                        "--set",
                        format!("cgroup.{}.{}", w.path, w.file),
                        "cpu.weight 1..=10000 or cpu.latency.nice -20..=19, in a group below the \
                     root, with CONFIG_FAIR_GROUP_SCHED",
                        format!("`{}` ({})", w.value, e.name()),
                    )
                })?;
        }
        let initial = self.workload.initial_threads();
        // One allocation for the tasks that start (a Task is a few KiB: growing by doubling
        // would copy them all and hold two copies at the peak).
        self.tasks.reserve_exact(initial.len());
        for (spec, _) in initial {
            let t = self.create_task(spec, None);
            let at = if self.variant.start_spread_ns > 0 {
                self.rng.below(self.variant.start_spread_ns)
            } else {
                0
            };
            queue.schedule(at, Event::Spawn { task: t });
        }
        for cpu in 0..n {
            self.emit(
                0,
                cpu,
                &TraceEvent::CpuFrequency {
                    khz: self.rqs[cpu].freq_khz,
                    cpu,
                },
            );
            self.trace_initial_state(cpu);
        }
        // A tick and a completion event per CPU (`work_slot`, `tick_slot`).
        queue.add_slots(2 * n);
        // Every CPU boots into the idle loop.
        for cpu in 0..n {
            self.do_idle(cpu, 0, queue);
        }
        if self.observer.is_some() {
            self.user.enable_marks(self.workload.global.ftrace);
            self.user.marks.main("start");
            self.write_marks(0, 0, None);
        }
        self.cpufreq_start(0, queue);
        self.variant
            .check_timed_writes(&self.platform)
            .map_err(|(_, e)| e)?;
        for (index, w) in self.variant.timed_writes.iter().enumerate() {
            queue.schedule(w.at_ns, Event::AdminWrite { index });
        }
        Ok(())
    }
}

/// The cpufreq policies, each at `policy->cur` as `cpufreq.start_khz` says, and the OPP
/// each frequency domain boots at.
fn boot_cpufreq(
    platform: &Platform,
    variant: &Variant,
    freq_invariant: bool,
) -> Result<(Cpufreq, Vec<usize>), InputError> {
    let env = Env {
        tick_ns: variant.tick_ns(),
        freq_invariant,
        nohz: true,
        // should_io_be_busy() is true on Intel Core CPUs; platform files do not name the
        // vendor, so ondemand counts iowait as idle unless `cpufreq.io_is_busy` says not.
        io_is_busy: false,
    };
    let mut policies = Policies::from_platform(platform, platform.energy_model).map_err(|e| {
        InputError::new(
            platform.name.as_str(),
            "freq_domains",
            "cpufreq policies",
            e,
        )
    })?;
    // The governor starts with the run, each policy at `policy->cur` as
    // `cpufreq.start_khz` says (by default the governor's idle frequency, as a quiet board
    // is when a test starts; see `StartFreq`).
    for (i, d) in platform.freq_domains.iter().enumerate() {
        let p = policies.get_mut(i);
        p.fast_switch = d.fast_switch;
        p.freq_table = d.freq_table;
        p.cur_khz = p.start_freq(variant.cpufreq_start, variant.governor);
    }
    let boot_opp: Vec<usize> = platform
        .freq_domains
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let khz = policies.get(i).cur_khz;
            d.opps.iter().rposition(|o| o.freq_khz <= khz).unwrap_or(0)
        })
        .collect();
    let cpufreq = Cpufreq::new(variant.governor, policies, &variant.cpufreq, &env)
        .map_err(|e| InputError::new("--set", "cpufreq", e, "a tunable the governor refuses"))?;
    Ok((cpufreq, boot_opp))
}

/// Each CPU's runqueue, idle at its domain's boot OPP.
fn boot_rqs(platform: &Platform, domains: &[Domain], freq_invariant: bool) -> Vec<Rq> {
    (0..platform.nr_cpus())
        .map(|cpu| {
            let dom = platform.cpus[cpu].freq_domain;
            let opp = domains[dom].opp;
            let freq = platform.freq_domains[dom].opps[opp].freq_khz;
            Rq {
                curr: None,
                nr_running: 0,
                rt: RtRq::default(),
                dl: Default::default(),
                need_resched: false,
                tick_on: false,
                tick_queued: None,
                work_queued: None,
                progress_ts: 0,
                kernel_work: 0,
                irq_arrival: 0,
                last_mm: 0,
                touched_bytes: 0,
                exec_start: 0,
                freq_khz: freq,
                capacity_cur: platform.capacity_at(cpu, freq) as u64,
                freq_scale: freq_scale(platform, freq_invariant, cpu, freq),
                res: Residency::new(
                    platform.freq_domains[dom].opps.len(),
                    platform.cpus[cpu].idle_states.len(),
                    opp,
                ),
                pelt: PeltClock::default(),
                avg_rt: SchedAvg::default(),
                avg_dl: SchedAvg::default(),
                next_blocked: 0,
                nr_iowait: 0,
                times: CpuTimesAcc::default(),
                dl_running_bw: 0,
                uclamp: RqUclamp::default(),
            }
        })
        .collect()
}

/// The workload's mutexes, condition variables and barriers, all free.
fn boot_futexes(workload: &Workload) -> Futexes {
    Futexes {
        mutexes: vec![Mutex::default(); workload.mutexes.len()],
        conds: vec![Cond::default(); workload.conds.len()],
        barriers: workload
            .barriers
            .iter()
            .map(|b| Barrier {
                participants: b.participants,
                waiters: Vec::new(),
            })
            .collect(),
    }
}

/// uclamp and cgroups at boot, with the sysctl and cgroup writes of the run's settings
/// applied in order: a refused write stops the run (exit 2) with its errno.
fn boot_uclamp(variant: &Variant, workload: &Workload) -> Result<(UclampSys, Cgroups), InputError> {
    let config = UclampConfig::new(variant.uclamp_buckets).expect("the switch checks 5..=20");
    let mut sys = UclampSys::new(
        config,
        variant.uclamp_static_key,
        variant.uclamp_rt_sync,
        variant.uclamp_tg_restrict,
    );
    for &(which, value) in &variant.sysctl_writes {
        sys.write_sysctl(which, value).map_err(|e| {
            InputError::new(
                "--set",
                which.name(),
                "sched_util_clamp_min <= sched_util_clamp_max <= 1024 and sched_util_clamp_min_rt_default <= 1024",
                format!("{value} ({})", e.name()),
            )
        })?;
    }
    let mut paths = workload.taskgroups.clone();
    paths.extend(variant.cgroup_writes.iter().map(|w| w.path.clone()));
    let mut cgroups = Cgroups::new(
        &paths,
        [sys.util_min, sys.util_max],
        variant.cgroup_online_no_eff_update,
    );
    for w in &variant.cgroup_writes {
        if !w.file.starts_with("cpu.uclamp.") {
            continue;
        }
        let g = cgroups.find(&w.path).expect("created above");
        let id = if w.file == "cpu.uclamp.min" { 0 } else { 1 };
        cgroups.write_uclamp(g, id, &w.value).map_err(|e| {
            InputError::new(
                "--set",
                format!("cgroup.{}.{}", w.path, w.file),
                "a percentage 0..=100 with at most two decimals, or max, in a group below the root",
                format!("`{}` ({})", w.value, e.name()),
            )
        })?;
        if variant.uclamp_task_group {
            sys.enable_static_key();
        }
    }
    Ok((sys, cgroups))
}
