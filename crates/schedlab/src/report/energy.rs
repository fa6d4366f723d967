//! Energy from residencies and the platform's power table: per CPU, active power of
//! its OPP while busy and the power of its idle state while idle; per cluster, the cluster's
//! active power of its OPP while any CPU runs and its idle state's power while all are idle.
//! mW × ns = pJ, reported in mJ.

use crate::kernel::cpuidle::Residency;
use crate::platform::{IdleState, Opp};

const PJ_PER_MJ: f64 = 1e9;

/// Energy of a CPU in mJ.
pub fn cpu_energy_mj(res: &Residency, opps: &[Opp], idle: &[IdleState]) -> f64 {
    let active: f64 = res
        .busy_opp_ns
        .iter()
        .zip(opps)
        .map(|(&ns, o)| ns as f64 * o.power_mw)
        .sum();
    active_plus_idle(active, res, idle)
}

/// Energy of a cluster (its shared logic, not its CPUs) in mJ.
pub fn cluster_energy_mj(res: &Residency, opps: &[Opp], idle: &[IdleState]) -> f64 {
    let active: f64 = res
        .busy_opp_ns
        .iter()
        .zip(opps)
        .map(|(&ns, o)| ns as f64 * o.cluster_power_mw)
        .sum();
    active_plus_idle(active, res, idle)
}

fn active_plus_idle(active_pj: f64, res: &Residency, idle: &[IdleState]) -> f64 {
    let idle_pj: f64 = res
        .idle_state_ns
        .iter()
        .zip(idle)
        .map(|(&ns, s)| ns as f64 * s.power_mw)
        .sum();
    (active_pj + idle_pj) / PJ_PER_MJ
}
