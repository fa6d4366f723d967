//! cpuidle (drivers/cpuidle/): the governor that picks each idle CPU's state (`menu.rs`,
//! `teo.rs`; `cpuidle.governor`), the cluster state the last idle CPU of a cluster allows, and
//! where each CPU and each cluster spends its time, for the energy report: busy time
//! per OPP, idle time per OPP (cpufreq's time_in_state counts both), idle time per idle state
//! as chosen.

pub mod menu;
pub mod teo;

use crate::platform::IdleState;
use menu::MenuDevice;
use teo::TeoCpu;

/// `cpuidle.governor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuidleGovernor {
    Menu,
    Teo,
}

impl CpuidleGovernor {
    pub const NAMES: &'static [&'static str] = &["menu", "teo"];

    pub fn parse(s: &str) -> Option<CpuidleGovernor> {
        match s {
            "menu" => Some(CpuidleGovernor::Menu),
            "teo" => Some(CpuidleGovernor::Teo),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CpuidleGovernor::Menu => "menu",
            CpuidleGovernor::Teo => "teo",
        }
    }
}

/// What a governor knows when it selects (`tick_nohz_get_sleep_length()`, PM QoS,
/// `nr_iowait_cpu()`).
#[derive(Debug, Clone, Copy)]
pub struct IdleInput {
    /// Time till the CPU's next timer event, the tick left out (`KTIME_MAX`-like if none).
    pub sleep_length_ns: u64,
    /// Time till the next tick.
    pub delta_tick_ns: u64,
    /// `TICK_NSEC`.
    pub tick_ns: u64,
    /// `cpuidle_governor_latency_req()`.
    pub latency_req_ns: u64,
    pub nr_iowaiters: u32,
}

/// A governor's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub state: usize,
    /// Stop the tick (`tick_nohz_idle_stop_tick()`) or keep it (`..._retain_tick()`).
    pub stop_tick: bool,
}

#[derive(Debug, Clone)]
enum Governor {
    Menu(MenuDevice),
    Teo(TeoCpu),
}

/// `struct cpuidle_device` of one CPU: its governor's data and the idle period in progress.
#[derive(Debug, Clone)]
pub struct CpuidleDevice {
    gov: Governor,
    /// The state the CPU is in while idle.
    pub state: Option<usize>,
    /// When the CPU entered it.
    pub entered: u64,
    /// Whether the governor stopped the tick for this idle period.
    pub tick_stopped: bool,
    /// When the CPU last went idle (`rq->idle_stamp`).
    pub idle_stamp: u64,
    /// Woken for a task: since when the CPU leaves its state, and until when.
    pub exiting: Option<(u64, u64)>,
}

impl CpuidleDevice {
    pub fn new(kind: CpuidleGovernor, nr_states: usize) -> CpuidleDevice {
        CpuidleDevice {
            gov: match kind {
                CpuidleGovernor::Menu => Governor::Menu(MenuDevice::default()),
                CpuidleGovernor::Teo => Governor::Teo(TeoCpu::new(nr_states)),
            },
            state: None,
            entered: 0,
            tick_stopped: false,
            idle_stamp: 0,
            exiting: None,
        }
    }

    /// `cpuidle_select()`, and the state entered from `now`.
    pub fn select(&mut self, states: &[IdleState], inp: &IdleInput, now: u64) -> Selection {
        let sel = match &mut self.gov {
            Governor::Menu(m) => m.select(states, inp),
            Governor::Teo(t) => t.select(states, inp),
        };
        self.state = Some(sel.state);
        self.entered = now;
        self.tick_stopped = sel.stop_tick;
        sel
    }

    /// `cpuidle_reflect()` once the CPU is out of its state at `now` (`exited`: the exit
    /// latency has already passed, as for a switch to a task; else it is added, as
    /// `last_residency_ns` includes it); the CPU has no state afterwards.
    pub fn reflect(
        &mut self,
        states: &[IdleState],
        now: u64,
        exited: bool,
        tick_wakeup: bool,
        tick_ns: u64,
    ) {
        let Some(state) = self.state.take() else {
            return;
        };
        let exit = if exited {
            0
        } else {
            states[state].exit_latency_ns
        };
        let residency = now - self.entered + exit;
        match &mut self.gov {
            Governor::Menu(m) => m.reflect(states, state, residency, tick_wakeup, tick_ns),
            Governor::Teo(t) => t.reflect(states, state, residency, tick_wakeup, tick_ns),
        }
    }
}

/// The cluster state when the last CPU of a cluster goes idle (as PSCI OSI/PC mode with the
/// genpd governor of drivers/base/power/domain_governor.c). A cluster state no slower to
/// leave than every CPU's chosen state (a cluster in WFI while its CPUs are) adds nothing to
/// a wake-up, so it needs only to pay off before the cluster's next timer; a deeper one also
/// needs every CPU to have chosen its deepest state (powered down) and an exit latency within
/// the PM QoS limit. The deepest permitted state is taken; None: no listed state is.
/// `cpus` yields, per CPU, its chosen state's exit latency and whether that is its deepest.
pub fn cluster_state(
    cluster: &[IdleState],
    cpus: impl Iterator<Item = (u64, bool)>,
    latency_req_ns: u64,
    sleep_length_ns: u64,
) -> Option<usize> {
    let (mut min_exit, mut all_deepest) = (u64::MAX, true);
    for (exit_latency_ns, deepest) in cpus {
        min_exit = min_exit.min(exit_latency_ns);
        all_deepest &= deepest;
    }
    cluster.iter().rposition(|s| {
        s.target_residency_ns <= sleep_length_ns
            && (s.exit_latency_ns <= min_exit
                || (all_deepest && s.exit_latency_ns <= latency_req_ns))
    })
}

/// Residency of one CPU, or of one cluster (a frequency domain).
#[derive(Debug, Clone)]
pub struct Residency {
    opp: usize,
    busy: bool,
    since: u64,
    state: Option<usize>,
    state_since: u64,
    pub busy_opp_ns: Vec<u64>,
    pub idle_opp_ns: Vec<u64>,
    pub idle_state_ns: Vec<u64>,
}

impl Residency {
    pub fn new(nr_opps: usize, nr_idle_states: usize, opp: usize) -> Residency {
        Residency {
            opp,
            busy: false,
            since: 0,
            state: None,
            state_since: 0,
            busy_opp_ns: vec![0; nr_opps],
            idle_opp_ns: vec![0; nr_opps],
            idle_state_ns: vec![0; nr_idle_states],
        }
    }

    fn account(&mut self, now: u64) {
        debug_assert!(now >= self.since, "residency time went back");
        let dt = now - self.since;
        if self.busy {
            self.busy_opp_ns[self.opp] += dt;
        } else {
            self.idle_opp_ns[self.opp] += dt;
        }
        self.since = now;
    }

    fn close_state(&mut self, now: u64) {
        if let Some(s) = self.state.take() {
            self.idle_state_ns[s] += now - self.state_since;
        }
    }

    #[inline]
    pub fn set_busy(&mut self, now: u64, busy: bool) {
        if busy == self.busy {
            return;
        }
        self.account(now);
        if busy {
            self.close_state(now);
        }
        self.busy = busy;
    }

    /// The idle CPU (or cluster) enters `state` at `now`.
    pub fn enter_state(&mut self, now: u64, state: Option<usize>) {
        debug_assert!(!self.busy, "a busy CPU entered an idle state");
        self.close_state(now);
        self.state = state;
        self.state_since = now;
    }

    /// The idle state in progress.
    pub fn state(&self) -> Option<usize> {
        self.state
    }

    pub fn set_opp(&mut self, now: u64, opp: usize) {
        self.account(now);
        self.opp = opp;
    }

    /// Account up to `now` (end of run), closing an idle state in progress.
    pub fn finish(&mut self, now: u64) {
        self.account(now);
        self.close_state(now);
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_opp_ns.iter().sum()
    }

    pub fn idle_ns(&self) -> u64 {
        self.idle_opp_ns.iter().sum()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A CPU going idle with its next timer `sleep_ns` away, a 4 ms tick (HZ=250), no PM QoS
    /// request and no task in iowait.
    pub(crate) fn input(sleep_ns: u64) -> IdleInput {
        IdleInput {
            sleep_length_ns: sleep_ns,
            delta_tick_ns: 4_000_000,
            tick_ns: 4_000_000,
            latency_req_ns: 2_000_000_000_000,
            nr_iowaiters: 0,
        }
    }

    /// WFI (1 µs / 1 µs, ARM_CPUIDLE_WFI_STATE) and hi6220's cpu-sleep (250 µs / 1000 µs).
    pub(crate) fn arm_states() -> Vec<IdleState> {
        vec![
            IdleState {
                name: "WFI".into(),
                power_mw: 6.0,
                exit_latency_ns: 1_000,
                target_residency_ns: 1_000,
                polling: false,
                typical_exit_ns: None,
            },
            IdleState {
                name: "cpu-sleep".into(),
                power_mw: 0.0,
                exit_latency_ns: 250_000,
                target_residency_ns: 1_000_000,
                polling: false,
                typical_exit_ns: None,
            },
        ]
    }

    #[test]
    fn time_is_split_by_opp_and_chosen_state() {
        let mut r = Residency::new(2, 2, 1);
        r.enter_state(0, Some(0));
        r.set_busy(100, true);
        r.set_opp(300, 0);
        r.set_busy(400, false);
        r.enter_state(400, Some(0));
        // An idle tick moves the CPU to the deep state.
        r.enter_state(4_000_400, Some(1));
        r.finish(5_000_400);
        assert_eq!(r.busy_opp_ns, vec![100, 200]);
        assert_eq!(r.idle_opp_ns, vec![5_000_000, 100]);
        assert_eq!(r.idle_state_ns, vec![4_000_100, 1_000_000]);
        assert_eq!(r.busy_ns() + r.idle_ns(), 5_000_400);
    }

    #[test]
    fn a_cluster_powers_down_only_when_every_cpu_did() {
        let cpu = arm_states();
        let cluster = [
            IdleState {
                name: "cluster-WFI".into(),
                target_residency_ns: 1_000,
                ..cpu[0].clone()
            },
            IdleState {
                name: "cluster-sleep".into(),
                exit_latency_ns: 700_000,
                target_residency_ns: 2_700_000,
                ..cpu[1].clone()
            },
        ];
        let lat = |s: usize| cpu[s].exit_latency_ns;
        let all_deep = [(lat(1), true), (lat(1), true)];
        let one_wfi = [(lat(1), true), (lat(0), false)];
        let pick = |cpus: &[(u64, bool)], qos: u64, sleep: u64| {
            cluster_state(&cluster, cpus.iter().copied(), qos, sleep)
        };
        assert_eq!(pick(&all_deep, u64::MAX, 10_000_000), Some(1));
        assert_eq!(pick(&one_wfi, u64::MAX, 10_000_000), Some(0));
        // The next timer comes before the cluster state pays off, or PM QoS forbids it:
        // the cluster stays in WFI with its CPUs.
        assert_eq!(pick(&all_deep, u64::MAX, 2_000_000), Some(0));
        assert_eq!(pick(&all_deep, 0, 10_000_000), Some(0));
        assert_eq!(pick(&all_deep, 0, 500), None);
    }
}
