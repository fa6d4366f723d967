//! CONFIG_FAIR_GROUP_SCHED (fair.c): task groups with one cfs_rq and one group entity per
//! CPU, the walks of `enqueue_task_fair()` / `dequeue_task_fair()` / the pick over the
//! hierarchy, group shares from `cpu.weight` and the group latency offset of
//! `cpu.latency.nice` (seed 002, patch 5).
//!
//! Group shares follow `calc_group_shares()` with instantaneous queue weights standing in
//! for the PELT load averages it reads (`max(cfs_rq->load.weight, cfs_rq->avg.load_avg)`
//! and `tg->load_avg`): a group gets `tg->shares × its weight on this CPU / its weight on
//! all CPUs`, at least MIN_SHARES. Group entities carry no PELT signals (see
//! `update_load_avg`).

use super::{CfsRq, Fair, LoadWeight, QueueFlags, SeId, INITIAL_MIN_VRUNTIME, NICE_0_LOAD};
use crate::kernel::variant::FairPolicy;

/// `MIN_SHARES`.
const MIN_SHARES: u64 = 2;

/// `struct task_group`, its fair part.
#[derive(Debug, Clone)]
pub struct FairGroup {
    parent: usize,
    /// `tg->shares`: the weight the group's entities share (NICE_0_LOAD by default).
    pub shares: u64,
    /// `tg->latency_offset` (patch 5).
    pub latency_offset: i64,
    /// The group's entity and queue on each CPU (the root: no entity; the CPUs' queues).
    se: Vec<SeId>,
    pub(super) rq: Vec<usize>,
}

impl FairGroup {
    pub(super) fn root(nr_cpus: usize) -> FairGroup {
        FairGroup {
            parent: 0,
            shares: NICE_0_LOAD,
            latency_offset: 0,
            se: Vec::new(),
            rq: (0..nr_cpus).collect(),
        }
    }
}

impl Fair {
    /// Whether CONFIG_FAIR_GROUP_SCHED is on.
    pub fn group_sched(&self) -> bool {
        self.group_sched
    }

    /// Task groups known to the fair class (the root included).
    pub fn nr_groups(&self) -> usize {
        self.tgs.len()
    }

    /// `alloc_fair_sched_group()` + `init_tg_cfs_entry()` for the cgroup numbered `g`
    /// (groups come in order, parents first): a queue and an entity per CPU, the entity of
    /// NICE_0_LOAD weight and no latency offset, queued on the parent's queue of its CPU.
    pub fn online_group(&mut self, g: usize, parent: usize) {
        debug_assert_eq!(g, self.tgs.len(), "groups come in order");
        let n = self.tgs[0].rq.len();
        let mut group = FairGroup {
            parent,
            shares: NICE_0_LOAD,
            latency_offset: 0,
            se: Vec::with_capacity(n),
            rq: Vec::with_capacity(n),
        };
        for cpu in 0..n {
            let q = self.rqs.len();
            self.rqs.push(CfsRq {
                cpu,
                tg: g,
                min_vruntime: INITIAL_MIN_VRUNTIME,
                ..CfsRq::default()
            });
            let load = LoadWeight {
                weight: NICE_0_LOAD,
                inv_weight: 0,
            };
            let se = self.alloc_se(load, false, self.tgs[parent].rq[cpu], usize::MAX);
            self.ses[se].my_q = Some(q);
            self.ses[se].tg = g;
            group.se.push(se);
            group.rq.push(q);
        }
        self.tgs.push(group);
    }

    /// The task entity `se` belongs to group `g` (set while it is not queued:
    /// `sched_move_task()` dequeues it first). Without CONFIG_FAIR_GROUP_SCHED every task
    /// stays in the root.
    pub fn set_task_group(&mut self, se: SeId, g: usize) {
        debug_assert!(!self.ses[se].on_rq);
        if self.group_sched && g < self.tgs.len() {
            self.ses[se].tg = g;
        }
    }

    /// `parent_entity()`: the group entity whose queue holds `se`, None at the root.
    /// Always inlined: a dozen instructions, called at every level of every enqueue,
    /// dequeue, pick and put (the call cost as much as the body).
    #[inline(always)]
    pub(super) fn parent_se(&self, se: SeId) -> Option<SeId> {
        let e = &self.ses[se];
        let g = if e.my_q.is_some() {
            self.tgs[e.tg].parent
        } else {
            e.tg
        };
        (g != 0).then(|| self.tgs[g].se[self.rqs[e.cfs_rq].cpu])
    }

    /// The queues a walk from `se` up to the root visits (`for_each_sched_entity`): 1 in
    /// the root group, one more per group level. The root group's task, every task without
    /// cgroups, is found inline (no parent); the walk is not.
    #[inline]
    pub fn levels(&self, se: SeId) -> u64 {
        let e = &self.ses[se];
        if e.my_q.is_none() && e.tg == 0 {
            return 1;
        }
        self.levels_walk(se)
    }

    #[inline(never)]
    fn levels_walk(&self, se: SeId) -> u64 {
        self.depth(se) as u64 + 1
    }

    #[inline]
    fn depth(&self, se: SeId) -> usize {
        let mut d = 0;
        let mut p = self.parent_se(se);
        while let Some(e) = p {
            d += 1;
            p = self.parent_se(e);
        }
        d
    }

    /// `find_matching_se()`: the ancestors of `se` and `pse` that share a queue.
    pub(super) fn find_matching_se(&self, mut se: SeId, mut pse: SeId) -> (SeId, SeId) {
        let (mut d, mut pd) = (self.depth(se), self.depth(pse));
        while d > pd {
            se = self.parent_se(se).expect("depth counts parents");
            d -= 1;
        }
        while pd > d {
            pse = self.parent_se(pse).expect("depth counts parents");
            pd -= 1;
        }
        while self.ses[se].cfs_rq != self.ses[pse].cfs_rq {
            match (self.parent_se(se), self.parent_se(pse)) {
                (Some(a), Some(b)) => (se, pse) = (a, b),
                _ => break,
            }
        }
        (se, pse)
    }

    /// `enqueue_task_fair()`'s walk: the task entity joins its group's queue on `cpu`, then
    /// each group entity not yet queued joins its parent's (as a wakeup); the queues above
    /// count the task and their group entities take new shares.
    pub fn enqueue_entity(&mut self, cpu: usize, se: SeId, flags: QueueFlags, now: u64) {
        let idle = u32::from(self.ses[se].idle);
        self.ses[se].cfs_rq = self.tgs[self.ses[se].tg].rq[cpu];
        let mut cur = Some(se);
        let mut f = flags;
        while let Some(e) = cur {
            if self.ses[e].on_rq {
                break;
            }
            let cfs = self.ses[e].cfs_rq;
            self.enqueue_se(cfs, e, f, now);
            if self.ses[e].my_q.is_some() {
                self.rqs[cfs].h_nr_running += 1;
                self.rqs[cfs].idle_h_nr_running += idle;
            }
            f = QueueFlags {
                wakeup: true,
                ..QueueFlags::default()
            };
            cur = self.parent_se(e);
        }
        while let Some(e) = cur {
            let cfs = self.ses[e].cfs_rq;
            self.touch(cfs, e);
            self.rqs[cfs].h_nr_running += 1;
            self.rqs[cfs].idle_h_nr_running += idle;
            self.update_curr_cfs(cfs, now);
            self.update_cfs_group(e, now);
            cur = self.parent_se(e);
        }
    }

    /// `dequeue_task_fair()`'s walk: the task entity leaves its queue, and each group entity
    /// whose queue it emptied leaves its parent's; a task going to sleep makes the group
    /// that still has entities the next buddy above.
    pub fn dequeue_entity(&mut self, _cpu: usize, se: SeId, flags: QueueFlags, now: u64) {
        let idle = u32::from(self.ses[se].idle);
        let task_sleep = flags.wakeup;
        let mut cur = Some(se);
        let mut f = flags;
        while let Some(e) = cur {
            let cfs = self.ses[e].cfs_rq;
            self.dequeue_se(cfs, e, f, now);
            if self.ses[e].my_q.is_some() {
                self.rqs[cfs].h_nr_running -= 1;
                self.rqs[cfs].idle_h_nr_running -= idle;
            }
            cur = self.parent_se(e);
            if self.rqs[cfs].load.weight > 0 {
                if let (true, Some(p)) = (task_sleep, cur) {
                    self.set_buddy(0, p);
                }
                break;
            }
            f = QueueFlags {
                wakeup: true,
                ..QueueFlags::default()
            };
        }
        while let Some(e) = cur {
            let cfs = self.ses[e].cfs_rq;
            self.touch(cfs, e);
            self.rqs[cfs].h_nr_running -= 1;
            self.rqs[cfs].idle_h_nr_running -= idle;
            self.update_curr_cfs(cfs, now);
            self.update_cfs_group(e, now);
            cur = self.parent_se(e);
        }
    }

    /// `pick_next_task_fair()` with the running task already put back: pick at each level
    /// down to a task entity.
    pub fn pick_next_entity(&self, cpu: usize) -> Option<SeId> {
        let mut cfs = cpu;
        loop {
            let se = self.pick_se(cfs)?;
            match self.ses[se].my_q {
                Some(q) => cfs = q,
                None => return Some(se),
            }
        }
    }

    /// The task the root queue of `cpu` would run next if nothing changed before the next
    /// pick (its leftmost, when that is a task's entity), with that entity and the one
    /// after it asked into the host's caches ([`schedlab_base::sim::prefetch`]): a pick reads the
    /// leftmost's entity and, once it is taken out, the next one's. A hint for the host;
    /// it changes nothing.
    pub fn prefetch_next(&self, cpu: usize) -> Option<usize> {
        use schedlab_base::sim::prefetch;
        let rq = &self.rqs[cpu];
        let first = rq.first()?;
        for id in std::iter::once(first).chain(rq.timeline.next_prefetched(&self.tl_nodes, first)) {
            let se = &self.ses[id];
            prefetch(&se.vruntime);
            prefetch(&se.avg);
            prefetch(&se.load);
            prefetch(&se.deadline);
        }
        let task = self.task_of[first];
        (task != u32::MAX).then_some(task as usize)
    }

    /// `set_next_task_fair()`: the task entity and its ancestors become their queues'
    /// running entities.
    pub fn set_next_entity(&mut self, _cpu: usize, se: SeId, now: u64) {
        let mut cur = Some(se);
        while let Some(e) = cur {
            let cfs = self.ses[e].cfs_rq;
            self.set_next_se(cfs, e, now);
            cur = self.parent_se(e);
        }
    }

    /// `put_prev_task_fair()`: the task entity and its ancestors stop running.
    pub fn put_prev_entity(&mut self, _cpu: usize, se: SeId, now: u64) {
        let mut cur = Some(se);
        while let Some(e) = cur {
            let cfs = self.ses[e].cfs_rq;
            self.put_prev_se(cfs, e, now);
            cur = self.parent_se(e);
        }
    }

    /// Whether the task entity `se` is running (the current entity of its queue).
    pub fn is_current(&self, se: SeId) -> bool {
        self.rqs[self.ses[se].cfs_rq].curr == Some(se)
    }

    /// The task entity running on `cpu`, found from the root down.
    pub(super) fn running_task(&self, cpu: usize) -> Option<SeId> {
        let mut se = self.rqs[cpu].curr?;
        while let Some(q) = self.ses[se].my_q {
            se = self.rqs[q].curr?;
        }
        Some(se)
    }

    /// `update_curr()` for what runs on `cpu`, at every level of its hierarchy.
    #[inline]
    pub fn update_curr(&mut self, cpu: usize, now: u64) {
        let mut cfs = cpu;
        loop {
            self.update_curr_cfs(cfs, now);
            match self.rqs[cfs].curr.and_then(|c| self.ses[c].my_q) {
                Some(q) => cfs = q,
                None => return,
            }
        }
    }

    /// The last waiting task of `cpu` (timelines walked right to left, groups entered) that
    /// `accept` takes, as `detach_tasks()` walks the tasks from the tail.
    pub fn find_task_rev(&self, cpu: usize, accept: &impl Fn(usize) -> bool) -> Option<usize> {
        self.queued(cpu)
            .rev()
            .find_map(|se| match self.ses[se].my_q {
                Some(q) => self.find_task_rev(q, accept),
                None => Some(self.ses[se].task).filter(|&t| accept(t)),
            })
    }

    /// `update_cfs_group()`: a group entity takes its share of the group's weight. A task's
    /// entity has none to take: that test is inlined at each of the many calls (two per
    /// enqueue, dequeue and tick), the reweight is not.
    #[inline]
    pub(super) fn update_cfs_group(&mut self, se: SeId, now: u64) {
        if let Some(q) = self.ses[se].my_q {
            self.update_group_shares(se, q, now);
        }
    }

    /// [`Fair::update_cfs_group`] of the group entity `se` owning queue `q`.
    #[inline(never)]
    fn update_group_shares(&mut self, se: SeId, q: usize, now: u64) {
        let shares = self.calc_group_shares(self.ses[se].tg, q);
        self.reweight_entity(self.ses[se].cfs_rq, se, shares, now);
    }

    /// `calc_group_shares()`, with queue weights for load averages (module doc).
    fn calc_group_shares(&self, g: usize, q: usize) -> u64 {
        let tg_shares = self.tgs[g].shares;
        let load = self.rqs[q].load.weight;
        let tg_weight: u64 = self.tgs[g]
            .rq
            .iter()
            .map(|&r| self.rqs[r].load.weight)
            .sum();
        (tg_shares * load / tg_weight.max(1)).clamp(MIN_SHARES, tg_shares)
    }

    /// `reweight_entity()`: a new weight, the queue's load following if it is queued.
    fn reweight_entity(&mut self, cfs: usize, se: SeId, weight: u64, now: u64) {
        let old = self.ses[se].load.weight;
        if old == weight {
            return;
        }
        self.touch(cfs, se);
        let on_rq = self.ses[se].on_rq;
        let in_tree = on_rq && self.rqs[cfs].curr != Some(se);
        let eevdf = self.policy == FairPolicy::Eevdf;
        if on_rq {
            if !in_tree {
                self.update_curr_cfs(cfs, now);
            }
            if in_tree && eevdf {
                self.avg_vruntime_add(cfs, se, false);
            }
            self.rqs[cfs].load.sub(old);
        }
        self.ses[se].load = LoadWeight {
            weight,
            inv_weight: 0,
        };
        if on_rq {
            self.rqs[cfs].load.add(weight);
            if in_tree && eevdf {
                self.avg_vruntime_add(cfs, se, true);
            }
        }
    }

    /// `sched_group_set_shares()` (`cpu.weight`): the group's entities are reweighted on
    /// every CPU.
    pub fn set_group_shares(&mut self, g: usize, shares: u64, now: u64) {
        self.tgs[g].shares = shares;
        for cpu in 0..self.tgs[g].se.len() {
            let se = self.tgs[g].se[cpu];
            self.update_curr_cfs(self.ses[se].cfs_rq, now);
            self.update_cfs_group(se, now);
        }
    }

    /// `sched_group_set_latency()` (patch 5, with patch 7's removal from the latency tree):
    /// the group's entities on every CPU take the offset.
    pub fn set_group_latency(&mut self, g: usize, offset: i64) {
        self.tgs[g].latency_offset = offset;
        for cpu in 0..self.tgs[g].se.len() {
            let se = self.tgs[g].se[cpu];
            self.dequeue_latency(self.ses[se].cfs_rq, se);
            self.ses[se].latency_offset = offset;
        }
    }

    /// `cpu_weight_read_u64()`: `cpu.weight` as read back, the shares × 100 / 1024 rounded.
    pub fn group_weight(&self, g: usize) -> u64 {
        (self.tgs[g].shares * 100 + 512) / 1024
    }

    /// `cpu.latency.nice` as read back: the table entry closest to the group's offset.
    pub fn group_latency_nice(&self, g: usize) -> i32 {
        self.latency_nice_of_offset(self.tgs[g].latency_offset)
    }

    /// Debug check of group entity `se`: queued exactly when its queue has entities, on a
    /// queue of its queue's CPU.
    #[cfg(debug_assertions)]
    pub(super) fn check_group_se(&self, se: SeId) {
        let e = &self.ses[se];
        let q = e.my_q.expect("a group entity owns a queue");
        assert_eq!(
            e.on_rq,
            self.rqs[q].nr_running > 0,
            "group entity {se}: queued out of step with cfs_rq {q}"
        );
        assert_eq!(
            self.rqs[e.cfs_rq].cpu, self.rqs[q].cpu,
            "group entity {se}: on another CPU than its queue"
        );
    }

    /// The group entity that owns queue `cfs` (None for a CPU's root queue).
    #[cfg(debug_assertions)]
    pub(super) fn owner_se(&self, cfs: usize) -> Option<SeId> {
        let rq = &self.rqs[cfs];
        (rq.tg != 0).then(|| self.tgs[rq.tg].se[rq.cpu])
    }
}
