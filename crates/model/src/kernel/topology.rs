//! Scheduling domains as v6.1 `kernel/sched/topology.c` builds them from the platform: SMT
//! (hardware threads of a core), MC (CPUs sharing a last-level cache), DIE (the package),
//! and on NUMA machines `sched_init_numa`'s NODE level and a NUMA level per node distance,
//! with `sd_init`'s flags and intervals and degenerate levels removed; `SD_ASYM_CPUCAPACITY(_FULL)` on the levels that
//! see more than one CPU capacity; the LLC and SMT masks wakeup placement scans; and the
//! performance domains (one per cpufreq policy) the energy model is registered on.

use crate::platform::Platform;
use crate::workload::CpuSet;

/// One `struct sched_domain` of one CPU.
#[derive(Debug, Clone)]
pub struct SchedDomain {
    /// "SMT", "MC", "DIE", "NODE" or "NUMA" (the `sched_domain_topology_level` name).
    pub name: &'static str,
    pub span: CpuSet,
    pub weight: u32,
    /// The groups balancing compares: the child level's spans, single CPUs at the bottom
    /// (NUMA levels: the overlapping child spans of their CPUs, `build_overlap_sched_groups`).
    pub groups: Vec<CpuSet>,
    /// The local group (`sd->groups`, the one balancing starts at): the index of the group
    /// holding the CPU, the last of them where overlapping (NUMA) groups hold it more than
    /// once.
    pub local_group: usize,
    /// SD_SHARE_CPUCAPACITY: the CPUs are hardware threads of one core.
    pub share_cpucapacity: bool,
    /// SD_SHARE_PKG_RESOURCES: the CPUs share a last-level cache.
    pub share_pkg_resources: bool,
    /// SD_ASYM_CPUCAPACITY: the span holds CPUs of different capacities.
    pub asym_cpucapacity: bool,
    /// SD_ASYM_CPUCAPACITY_FULL: the span holds every capacity of the system.
    pub asym_cpucapacity_full: bool,
    /// SD_NUMA: a level built by `sched_init_numa` from a node distance above the local one.
    pub numa: bool,
    /// SD_SERIALIZE: one CPU at a time balances it (set with SD_NUMA).
    pub serialize: bool,
    /// SD_PREFER_SIBLING: the parent spreads tasks over this level's groups.
    pub prefer_sibling: bool,
    /// SD_WAKE_AFFINE / SD_BALANCE_FORK / SD_BALANCE_EXEC: cleared on NUMA levels farther
    /// than `node_reclaim_distance`.
    pub wake_affine: bool,
    pub balance_fork: bool,
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
    /// `sd_llc_id` per CPU, as an index from 0 (one `sd_llc_shared` per LLC).
    pub llc_id: Vec<usize>,
    /// `cpu_smt_mask()` per CPU (the CPU and its siblings).
    pub smt: Vec<CpuSet>,
    /// Index into `domains[cpu]` of `sd_asym_cpucapacity` (the lowest FULL level).
    pub asym_level: Vec<Option<usize>>,
    /// The `sched_asym_cpucapacity` static key: some CPU has an asymmetric level.
    asym_active: bool,
    /// `sched_smt_active()`.
    pub smt_active: bool,
    /// The performance domains: the CPUs of each cpufreq policy.
    pub perf_domains: Vec<CpuSet>,
    /// `rd->max_cpu_capacity`.
    pub max_capacity: u32,
}

/// `RECLAIM_DISTANCE`: the default `node_reclaim_distance` (include/linux/topology.h).
pub const RECLAIM_DISTANCE: u32 = 30;

/// One topology level before degenerate levels are removed: its name, flags and, per CPU,
/// its span.
struct Level {
    name: &'static str,
    share_cap: bool,
    share_pkg: bool,
    /// `Some(distance)` for the NUMA levels of `sched_init_numa` above the node itself.
    numa: Option<u32>,
    spans: Vec<CpuSet>,
}

/// The levels `build_sched_domains()` walks on this platform: the architecture's table
/// (x86's `x86_topology`: SMT, MC, DIE; `x86_numa_in_package_topology` without DIE when a
/// node is smaller than a package) then `sched_init_numa`'s NODE level and one NUMA level
/// per distinct node distance above the local one.
fn levels(p: &Platform) -> Vec<Level> {
    let n = p.nr_cpus();
    let per_cpu = |f: &dyn Fn(usize, usize) -> bool| -> Vec<CpuSet> {
        (0..n)
            .map(|c| (0..n).filter(|&o| f(c, o)).collect())
            .collect()
    };
    let smt = per_cpu(&|c, o| c == o || p.cpus[c].smt_siblings.contains(&o));
    let llc = per_cpu(&|c, o| p.cpus[c].llc == p.cpus[o].llc);
    let pkg = per_cpu(&|c, o| p.cpus[c].package == p.cpus[o].package);
    let node = per_cpu(&|c, o| p.cpus[c].node == p.cpus[o].node);
    let numa_in_package = (0..n).any(|c| !pkg[c].is_subset(&node[c]));
    let mut out = vec![
        Level {
            name: "SMT",
            share_cap: true,
            share_pkg: true,
            numa: None,
            spans: smt.clone(),
        },
        Level {
            name: "MC",
            share_cap: false,
            share_pkg: true,
            numa: None,
            spans: (0..n).map(|c| llc[c].or(&smt[c])).collect(),
        },
    ];
    if !numa_in_package {
        out.push(Level {
            name: "DIE",
            share_cap: false,
            share_pkg: false,
            numa: None,
            spans: pkg,
        });
    }
    if p.nr_nodes() > 1 {
        out.push(Level {
            name: "NODE",
            share_cap: false,
            share_pkg: false,
            numa: None,
            spans: node,
        });
        let mut distances: Vec<u32> = p.numa_distance.iter().flatten().copied().collect();
        distances.sort_unstable();
        distances.dedup();
        for &d in distances.iter().skip(1) {
            let near = |c: usize, o: usize| p.node_distance(p.cpus[c].node, p.cpus[o].node) <= d;
            out.push(Level {
                name: "NUMA",
                share_cap: false,
                share_pkg: false,
                numa: Some(d),
                spans: per_cpu(&near),
            });
        }
    }
    out
}

impl Topology {
    /// `build_sched_domains()` for the platform.
    pub fn new(p: &Platform) -> Topology {
        let n = p.nr_cpus();
        let all = CpuSet::all(n);
        let levels = levels(p);
        let smt = levels[0].spans.clone();
        let llc: Vec<CpuSet> = (0..n)
            .map(|c| (0..n).filter(|&o| p.cpus[o].llc == p.cpus[c].llc).collect())
            .collect();
        let mut llc_ids: Vec<usize> = p.cpus.iter().map(|c| c.llc).collect();
        llc_ids.sort_unstable();
        llc_ids.dedup();
        let llc_id = p
            .cpus
            .iter()
            .map(|c| llc_ids.binary_search(&c.llc).unwrap_or(0))
            .collect();
        let capacities = |m: &CpuSet| {
            let mut caps: Vec<u32> = m.iter().map(|c| p.cpus[c].capacity_orig).collect();
            caps.sort_unstable();
            caps.dedup();
            caps.len()
        };
        let nr_caps = capacities(&all);
        let reclaim = p.node_reclaim_distance.unwrap_or(RECLAIM_DISTANCE);
        let mut domains = Vec::with_capacity(n);
        let mut asym_level = Vec::with_capacity(n);
        for cpu in 0..n {
            let mut list: Vec<SchedDomain> = Vec::new();
            // The index in `levels` of each domain kept, to find a CPU's child span.
            let mut kept: Vec<usize> = Vec::new();
            let mut child_span = CpuSet::single(cpu);
            for (li, level) in levels.iter().enumerate() {
                // A level spanning no more than its child degenerates (the kernel's
                // sd_parent_degenerate: the flags of these levels never add a reason to keep
                // a level of the same span).
                let span = level.spans[cpu].or(&child_span);
                if span == child_span {
                    continue;
                }
                // The child level's span of each CPU of the span; single CPUs at the bottom.
                let child_of = |c: usize| match kept.last() {
                    None => CpuSet::single(c),
                    Some(&k) => levels[k].spans[c].or(&CpuSet::single(c)),
                };
                let mut groups: Vec<CpuSet> = Vec::new();
                for c in span.iter() {
                    let g = child_of(c);
                    if !groups.contains(&g) {
                        groups.push(g);
                    }
                }
                let local_group = groups
                    .iter()
                    .rposition(|g| g.contains(cpu))
                    .expect("a domain's groups cover its CPU");
                let w = span.weight();
                let caps = capacities(&span);
                let asym = caps > 1;
                // sd_init(): "Don't attempt to spread across CPUs of different capacities."
                if asym {
                    if let Some(child) = list.last_mut() {
                        child.prefer_sibling = false;
                    }
                }
                let numa = level.numa.is_some();
                let far = level.numa.is_some_and(|d| d > reclaim);
                let (imbalance_pct, cache_nice_tries) = if level.share_cap {
                    (110, 0)
                } else if numa {
                    (117, 2)
                } else {
                    (117, 1)
                };
                list.push(SchedDomain {
                    name: level.name,
                    span,
                    weight: w,
                    groups,
                    local_group,
                    share_cpucapacity: level.share_cap,
                    share_pkg_resources: level.share_pkg,
                    asym_cpucapacity: asym,
                    asym_cpucapacity_full: asym && caps == nr_caps,
                    numa,
                    serialize: numa,
                    prefer_sibling: !numa,
                    wake_affine: !far,
                    balance_fork: !far,
                    imbalance_pct,
                    cache_nice_tries,
                    busy_factor: 16,
                    min_interval_ms: u64::from(w),
                    max_interval_ms: 2 * u64::from(w),
                });
                kept.push(li);
                child_span = span;
            }
            asym_level.push(list.iter().position(|d| d.asym_cpucapacity_full));
            domains.push(list);
        }
        Topology {
            smt_active: smt.iter().any(|m| m.weight() > 1),
            asym_active: asym_level.iter().any(Option::is_some),
            domains,
            llc,
            llc_id,
            smt,
            asym_level,
            perf_domains: p
                .freq_domains
                .iter()
                .map(|d| d.cpus.iter().copied().collect())
                .collect(),
            max_capacity: p.cpus.iter().map(|c| c.capacity_orig).max().unwrap_or(0),
        }
    }

    /// `sched_asym_cpucap_active()`.
    pub fn asym(&self) -> bool {
        self.asym_active
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

    fn mask(cpus: impl IntoIterator<Item = usize>) -> CpuSet {
        cpus.into_iter().collect()
    }

    /// The CPUs of the 2 × 64-core Zen3 machine whose core (CPU mod 128) satisfies `f`:
    /// both threads, as Linux numbers them (siblings n and n + 128).
    fn zen3(f: impl Fn(usize) -> bool) -> CpuSet {
        (0..256).filter(|&c| f(c % 128)).collect()
    }

    #[test]
    fn zen3_nps4_has_the_levels_spans_and_flags_of_v6_1() {
        let t = Topology::new(&preset("zen3-2s-nps4").unwrap());
        for cpu in [0, 37, 128 + 77, 255] {
            let core = cpu % 128;
            let d = &t.domains[cpu];
            // x86_numa_in_package_topology (a node is smaller than the package): no DIE;
            // sched_init_numa adds NODE and one NUMA level per distance above 10 (12, 32).
            let names: Vec<&str> = d.iter().map(|s| s.name).collect();
            assert_eq!(names, ["SMT", "MC", "NODE", "NUMA", "NUMA"], "cpu {cpu}");
            let spans = [
                zen3(|c| c == core),
                zen3(|c| c / 8 == core / 8),
                zen3(|c| c / 16 == core / 16),
                zen3(|c| c / 64 == core / 64),
                CpuSet::all(256),
            ];
            for (level, span) in spans.iter().enumerate() {
                assert_eq!(&d[level].span, span, "cpu {cpu} level {level}");
                let w = span.weight();
                assert_eq!(d[level].weight, w);
                // sd_init(): min_interval = weight, max_interval = 2 × weight, busy_factor 16.
                assert_eq!(
                    (d[level].min_interval_ms, d[level].max_interval_ms),
                    (u64::from(w), 2 * u64::from(w))
                );
                assert_eq!(d[level].busy_factor, 16);
                // The groups are the child level's spans, covering the span exactly once.
                let child = if level == 0 {
                    1
                } else {
                    spans[level - 1].weight()
                };
                assert_eq!(d[level].groups.len() as u32, w / child);
                let union = d[level].groups.iter().fold(CpuSet::empty(), |u, g| u.or(g));
                assert_eq!(&union, span);
                // The local group is the child level's span of the CPU (the CPU at the bottom).
                let local = &d[level].groups[d[level].local_group];
                if level == 0 {
                    assert_eq!(local, &CpuSet::single(cpu));
                } else {
                    assert_eq!(local, &spans[level - 1]);
                }
            }
            // SMT: SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES, imbalance_pct 110.
            assert!(d[0].share_cpucapacity && d[0].share_pkg_resources);
            assert_eq!((d[0].imbalance_pct, d[0].cache_nice_tries), (110, 0));
            // MC: SD_SHARE_PKG_RESOURCES, 117, cache_nice_tries 1.
            assert!(!d[1].share_cpucapacity && d[1].share_pkg_resources);
            assert_eq!((d[1].imbalance_pct, d[1].cache_nice_tries), (117, 1));
            // NODE (numa_level 0) has no SD_NUMA: the plain case, and keeps PREFER_SIBLING.
            assert!(!d[2].numa && !d[2].share_pkg_resources && d[2].prefer_sibling);
            assert_eq!((d[2].imbalance_pct, d[2].cache_nice_tries), (117, 1));
            for numa in &d[3..] {
                // SD_NUMA: SD_SERIALIZE, no SD_PREFER_SIBLING, cache_nice_tries 2; distances
                // 12 and 32 are within Zen's node_reclaim_distance of 32, so both keep
                // SD_WAKE_AFFINE and fork balancing.
                assert!(numa.numa && numa.serialize && !numa.prefer_sibling);
                assert_eq!((numa.imbalance_pct, numa.cache_nice_tries), (117, 2));
                assert!(numa.wake_affine && numa.balance_fork);
            }
            assert!(d.iter().all(|s| !s.asym_cpucapacity));
            assert_eq!(t.llc[cpu], spans[1]);
        }
        assert!(t.smt_active && !t.asym());
    }

    #[test]
    fn zen3_nps1_keeps_die_and_drops_the_degenerate_node_level() {
        let t = Topology::new(&preset("zen3-2s").unwrap());
        let d = &t.domains[3];
        let names: Vec<&str> = d.iter().map(|s| s.name).collect();
        // A node is the package: x86_topology's DIE stays, NODE has DIE's span and degenerates.
        assert_eq!(names, ["SMT", "MC", "DIE", "NUMA"]);
        assert_eq!(d[2].span, zen3(|c| c < 64));
        assert!(d[3].numa && d[3].span == CpuSet::all(256));
        assert_eq!(d[3].groups, vec![zen3(|c| c < 64), zen3(|c| c >= 64)]);
    }

    #[test]
    fn numa_levels_beyond_reclaim_distance_lose_wake_affine() {
        // Xeon: one node per socket at distance 21, within RECLAIM_DISTANCE (30).
        let t = Topology::new(&preset("xeon-2s").unwrap());
        let names: Vec<&str> = t.domains[0].iter().map(|s| s.name).collect();
        assert_eq!(names, ["SMT", "MC", "NUMA"]);
        assert!(t.domains[0][2].wake_affine);
        let mut p = preset("xeon-2s").unwrap();
        p.numa_distance = vec![vec![10, 31], vec![31, 10]];
        let far = Topology::new(&p);
        assert!(!far.domains[0][2].wake_affine && !far.domains[0][2].balance_fork);
    }

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
