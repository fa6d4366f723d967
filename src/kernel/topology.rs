//! Scheduling domains as v6.1 `kernel/sched/topology.c` builds them from the platform: SMT
//! (hardware threads of a core), MC (CPUs sharing a last-level cache) and DIE (the whole
//! package), with degenerate levels removed; `SD_ASYM_CPUCAPACITY(_FULL)` on the levels that
//! see more than one CPU capacity; the LLC and SMT masks wakeup placement scans; and the
//! performance domains (one per cpufreq policy) the energy model is registered on.

use crate::platform::Platform;
use crate::workload::CpuSet;

/// One `struct sched_domain` of one CPU.
#[derive(Debug, Clone)]
pub struct SchedDomain {
    /// "SMT", "MC" or "DIE" (the `sched_domain_topology_level` name).
    pub name: &'static str,
    pub span: CpuSet,
    pub weight: u32,
    /// The groups balancing compares: the child level's spans, single CPUs at the bottom.
    pub groups: Vec<CpuSet>,
    /// SD_SHARE_CPUCAPACITY: the CPUs are hardware threads of one core.
    pub share_cpucapacity: bool,
    /// SD_SHARE_PKG_RESOURCES: the CPUs share a last-level cache.
    pub share_pkg_resources: bool,
    /// SD_ASYM_CPUCAPACITY: the span holds CPUs of different capacities.
    pub asym_cpucapacity: bool,
    /// SD_ASYM_CPUCAPACITY_FULL: the span holds every capacity of the system.
    pub asym_cpucapacity_full: bool,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    pub busy_factor: u64,
    /// `min_interval`, `max_interval` in ms (the span weight and twice it).
    pub min_interval_ms: u64,
    pub max_interval_ms: u64,
}

/// The domains of every CPU, lowest level first, and the masks placement uses.
#[derive(Debug, Clone)]
pub struct Topology {
    /// `for_each_domain(cpu, sd)`: per CPU, from its lowest domain to the root.
    pub domains: Vec<Vec<SchedDomain>>,
    /// `sd_llc` span per CPU (the CPU alone if it shares no cache).
    pub llc: Vec<CpuSet>,
    /// `cpu_smt_mask()` per CPU (the CPU and its siblings).
    pub smt: Vec<CpuSet>,
    /// Index into `domains[cpu]` of `sd_asym_cpucapacity` (the lowest FULL level).
    pub asym_level: Vec<Option<usize>>,
    /// `sched_smt_active()`.
    pub smt_active: bool,
    /// The performance domains: the CPUs of each cpufreq policy.
    pub perf_domains: Vec<CpuSet>,
    /// `rd->max_cpu_capacity`.
    pub max_capacity: u32,
}

fn mask(cpus: impl IntoIterator<Item = usize>) -> CpuSet {
    CpuSet(cpus.into_iter().fold(0u64, |m, c| m | 1u64 << c))
}

/// The CPUs of a mask, lowest first (`for_each_cpu`), one step per set bit.
pub fn cpus(m: CpuSet) -> impl Iterator<Item = usize> {
    let mut bits = m.0;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let c = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            c
        })
    })
}

fn or(a: CpuSet, b: CpuSet) -> CpuSet {
    CpuSet(a.0 | b.0)
}

fn weight(m: CpuSet) -> u32 {
    m.0.count_ones()
}

impl Topology {
    /// `build_sched_domains()` for the platform.
    pub fn new(p: &Platform) -> Topology {
        let n = p.nr_cpus();
        let all = CpuSet::all(n);
        let smt: Vec<CpuSet> = (0..n)
            .map(|c| mask(std::iter::once(c).chain(p.cpus[c].smt_siblings.iter().copied())))
            .collect();
        let llc: Vec<CpuSet> = (0..n)
            .map(|c| mask((0..n).filter(|&o| p.cpus[o].llc == p.cpus[c].llc)))
            .collect();
        let capacities = |m: CpuSet| {
            let mut caps: Vec<u32> = m.iter().map(|c| p.cpus[c].capacity_orig).collect();
            caps.sort_unstable();
            caps.dedup();
            caps.len()
        };
        let nr_caps = capacities(all);
        let mut domains = Vec::with_capacity(n);
        let mut asym_level = Vec::with_capacity(n);
        for cpu in 0..n {
            // (name, span, flags) per topology level; a level spanning no more than its child
            // degenerates.
            let levels = [
                ("SMT", smt[cpu], true, true),
                ("MC", or(llc[cpu], smt[cpu]), false, true),
                ("DIE", all, false, false),
            ];
            let mut list: Vec<SchedDomain> = Vec::new();
            let mut child_span = mask([cpu]);
            for (name, span, share_cap, share_pkg) in levels {
                let span = or(span, child_span);
                if span == child_span {
                    continue;
                }
                // The child level's span of each CPU: its core below MC, its LLC below DIE.
                let child_of = |c: usize| match list.last().map(|d| d.name) {
                    None => mask([c]),
                    Some("SMT") => smt[c],
                    Some(_) => or(llc[c], smt[c]),
                };
                let mut groups: Vec<CpuSet> = Vec::new();
                for c in span.iter() {
                    let g = child_of(c);
                    if !groups.contains(&g) {
                        groups.push(g);
                    }
                }
                let w = weight(span);
                let caps = capacities(span);
                list.push(SchedDomain {
                    name,
                    span,
                    weight: w,
                    groups,
                    share_cpucapacity: share_cap,
                    share_pkg_resources: share_pkg,
                    asym_cpucapacity: caps > 1,
                    asym_cpucapacity_full: caps > 1 && caps == nr_caps,
                    imbalance_pct: if share_cap { 110 } else { 117 },
                    cache_nice_tries: if share_cap { 0 } else { 1 },
                    busy_factor: 16,
                    min_interval_ms: u64::from(w),
                    max_interval_ms: 2 * u64::from(w),
                });
                child_span = span;
            }
            asym_level.push(list.iter().position(|d| d.asym_cpucapacity_full));
            domains.push(list);
        }
        Topology {
            smt_active: smt.iter().any(|&m| weight(m) > 1),
            domains,
            llc,
            smt,
            asym_level,
            perf_domains: p
                .freq_domains
                .iter()
                .map(|d| mask(d.cpus.iter().copied()))
                .collect(),
            max_capacity: p.cpus.iter().map(|c| c.capacity_orig).max().unwrap_or(0),
        }
    }

    /// `sched_asym_cpucap_active()`.
    pub fn asym(&self) -> bool {
        self.asym_level.iter().any(Option::is_some)
    }

    /// `cpus_share_cache()`.
    pub fn share_cache(&self, a: usize, b: usize) -> bool {
        self.llc[a].contains(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::preset;

    #[test]
    fn juno_has_cluster_mc_and_an_asymmetric_die() {
        let t = Topology::new(&preset("juno-r0").unwrap());
        let d = &t.domains[0];
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].name, d[0].span), ("MC", mask([0, 3, 4, 5])));
        assert!(!d[0].asym_cpucapacity);
        assert_eq!((d[1].name, d[1].weight), ("DIE", 6));
        assert!(d[1].asym_cpucapacity_full);
        assert_eq!(d[1].groups, vec![mask([0, 3, 4, 5]), mask([1, 2])]);
        assert_eq!(t.asym_level[1], Some(1));
        assert_eq!(t.perf_domains.len(), 2);
        assert!(!t.smt_active);
    }

    #[test]
    fn smt_levels_and_one_llc_on_x86_and_symmetric_smp8() {
        let t = Topology::new(&preset("x86-4c8t").unwrap());
        let d = &t.domains[0];
        assert_eq!(d.iter().map(|s| s.name).collect::<Vec<_>>(), ["SMT", "MC"]);
        assert_eq!(d[0].span, mask([0, 4]));
        assert_eq!(d[1].groups.len(), 4);
        assert!(t.smt_active && !t.asym());
        // smp8: two LLCs of four CPUs.
        let s = Topology::new(&preset("smp8").unwrap());
        assert_eq!(s.domains[3].len(), 2);
        assert_eq!(s.domains[3][0].groups.len(), 4);
        assert_eq!(
            s.domains[3][1].groups,
            vec![mask([0, 1, 2, 3]), mask([4, 5, 6, 7])]
        );
        assert!(!s.asym());
        // sdm845: one LLC with both capacities, so MC is the asymmetric level.
        let q = Topology::new(&preset("sdm845").unwrap());
        assert_eq!(q.domains[0].len(), 1);
        assert_eq!(q.asym_level[0], Some(0));
    }
}
