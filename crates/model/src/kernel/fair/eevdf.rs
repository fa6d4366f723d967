//! The EEVDF policy of the fair class (`variant.fair=eevdf`): fair.c as merged in v6.6 with
//! v6.12's custom slices. Same entities, runqueues, weights, PELT and min_vruntime as CFS;
//! what differs is placement (lag), the pick (earliest eligible virtual deadline) and
//! preemption (a request's deadline passing, RUN_TO_PARITY, PREEMPT_SHORT).
//!
//! `avg_vruntime` is kept as the kernel keeps it: the weighted sum of the waiting entities'
//! keys (vruntime − min_vruntime) and their summed weight, the running entity added on the
//! fly. Eligible entities (vruntime ≤ the weighted average) are a prefix of the vruntime
//! timeline; the pick descends it using each subtree's earliest (deadline, insertion), the
//! kernel's `min_deadline` augmentation, to the eligible entity with the earliest deadline.

use super::{Fair, Preempt, SeId};

/// v6.12 clamps a custom slice (`sched_attr.sched_runtime` of a fair task) to 0.1..100 ms.
pub const MIN_CUSTOM_SLICE_NS: u64 = 100_000;
pub const MAX_CUSTOM_SLICE_NS: u64 = 100_000_000;

impl Fair {
    /// `entity_key()`: vruntime relative to min_vruntime.
    fn entity_key(&self, cfs: usize, se: SeId) -> i64 {
        self.ses[se]
            .vruntime
            .wrapping_sub(self.rqs[cfs].min_vruntime) as i64
    }

    /// The weighted key sum and weight of the queue, the running entity included.
    fn avg_sums(&self, cfs: usize) -> (i128, i128) {
        let rq = &self.rqs[cfs];
        let (mut avg, mut load) = (rq.avg_vruntime, i128::from(rq.avg_load));
        if let Some(c) = rq.curr.filter(|&c| self.ses[c].on_rq) {
            let w = i128::from(self.ses[c].load.weight);
            avg += i128::from(self.entity_key(cfs, c)) * w;
            load += w;
        }
        (avg, load)
    }

    /// `avg_vruntime()`: the load-weighted average vruntime (0-lag point) of the queue.
    pub fn avg_vruntime(&self, cfs: usize) -> u64 {
        let (mut avg, load) = self.avg_sums(cfs);
        if load > 0 {
            // The division floors, as the kernel's sign-adjusted one does.
            if avg < 0 {
                avg -= load - 1;
            }
            avg /= load;
        }
        self.rqs[cfs].min_vruntime.wrapping_add(avg as i64 as u64)
    }

    /// `entity_eligible()`: the entity's lag is not negative.
    pub fn entity_eligible(&self, cfs: usize, se: SeId) -> bool {
        let (avg, load) = self.avg_sums(cfs);
        avg >= i128::from(self.entity_key(cfs, se)) * load
    }

    /// `__setscheduler_params()` of v6.12 for a fair task: `sched_runtime` (0 = none) becomes
    /// a custom slice, clamped to 0.1..100 ms; otherwise the base slice.
    pub fn set_custom_slice(&mut self, se: SeId, runtime_ns: u64) {
        let base = self.base_slice();
        let e = &mut self.ses[se];
        e.custom_slice = runtime_ns != 0;
        e.slice = if e.custom_slice {
            runtime_ns.clamp(MIN_CUSTOM_SLICE_NS, MAX_CUSTOM_SLICE_NS)
        } else {
            base
        };
    }

    /// `sysctl_sched_base_slice`: 0.75 ms scaled like the CFS tunables.
    pub(super) fn base_slice(&self) -> u64 {
        self.tun.min_granularity
    }

    /// The request size of `se` in wall time: its custom slice or the base slice.
    fn request_slice(&self, se: SeId) -> u64 {
        let e = &self.ses[se];
        if e.custom_slice {
            e.slice
        } else {
            self.base_slice()
        }
    }

    /// `place_entity()` of v6.6: at the 0-lag point minus the lag the entity left with,
    /// inflated by the weight it adds; the deadline one request (half one for a new task,
    /// PLACE_DEADLINE_INITIAL) later. Called before the entity is accounted on the queue.
    ///
    /// v6.12's DELAY_DEQUEUE and DELAY_ZERO, approximated at the wakeup (`same_queue`: woken
    /// where it slept): an entity that went to sleep ineligible would have stayed queued
    /// until eligible, then left with its lag clipped to 0. If the queue's 0-lag point has
    /// passed its vruntime it wakes with no lag; otherwise it is still "delayed" and resumes
    /// at its vruntime and deadline (`requeue_delayed_entity()`).
    pub(super) fn place_entity_eevdf(&mut self, cfs: usize, se: SeId, same_queue: bool) {
        if std::mem::take(&mut self.ses[se].delayed) && same_queue {
            let avg = self.avg_vruntime(cfs);
            if (avg.wrapping_sub(self.ses[se].vruntime) as i64) < 0 {
                self.ses[se].protect = false;
                return;
            }
            self.ses[se].vlag = 0;
        }
        let slice = self.request_slice(se);
        self.ses[se].slice = slice;
        let mut vslice = self.calc_delta_fair(slice, se);
        let vruntime = self.avg_vruntime(cfs);
        let mut lag: i128 = 0;
        if self.rqs[cfs].nr_running > 0 {
            let (_, load) = self.avg_sums(cfs);
            let w = i128::from(self.ses[se].load.weight);
            lag = i128::from(self.ses[se].vlag) * (load + w) / load.max(1);
        }
        let initial = std::mem::take(&mut self.ses[se].eevdf_initial);
        if initial {
            vslice /= 2;
        }
        let e = &mut self.ses[se];
        e.vruntime = vruntime.wrapping_sub(lag as i64 as u64);
        e.deadline = e.vruntime.wrapping_add(vslice);
        e.protect = false;
    }

    /// `update_entity_lag()` at dequeue: the entity's lag against the 0-lag point, limited
    /// to two requests or a tick of virtual time.
    pub(super) fn update_entity_lag(&mut self, cfs: usize, se: SeId) {
        let lag = self.avg_vruntime(cfs).wrapping_sub(self.ses[se].vruntime) as i64;
        let limit = self.calc_delta_fair((2 * self.ses[se].slice).max(self.tick_ns), se) as i64;
        self.ses[se].vlag = lag.clamp(-limit, limit);
    }

    /// `update_deadline()` from `update_curr()`: once the running entity's vruntime reaches
    /// its deadline it gets a new request, and the CPU reschedules if others wait.
    pub(super) fn update_deadline(&mut self, cfs: usize, se: SeId) {
        let e = &self.ses[se];
        if (e.vruntime.wrapping_sub(e.deadline) as i64) < 0 {
            return;
        }
        let slice = self.request_slice(se);
        let vslice = self.calc_delta_fair(slice, se);
        let e = &mut self.ses[se];
        e.slice = slice;
        e.deadline = e.vruntime.wrapping_add(vslice);
        e.protect = false;
        if self.rqs[cfs].nr_running > 1 {
            self.rqs[cfs].eevdf_resched = true;
            self.clear_buddies(cfs, se);
        }
    }

    /// `pick_eevdf()`: the eligible entity with the earliest virtual deadline, the running
    /// one included; a running entity protected by RUN_TO_PARITY keeps the CPU while it
    /// stays eligible.
    pub(super) fn pick_eevdf(&self, cfs: usize) -> Option<SeId> {
        let rq = &self.rqs[cfs];
        let curr = rq
            .curr
            .filter(|&c| self.ses[c].on_rq && self.entity_eligible(cfs, c));
        if let Some(c) = curr.filter(|&c| self.ses[c].protect) {
            return Some(c);
        }
        let (avg, load) = self.avg_sums(cfs);
        let best = rq
            .timeline
            .min_aux_in_prefix(&self.tl_nodes, |s| {
                avg >= i128::from(self.entity_key(cfs, s)) * load
            })
            .or_else(|| rq.first());
        match (best, curr) {
            (Some(b), Some(c)) if self.deadline_before(c, b) => Some(c),
            (None, c) => c,
            (b, _) => b,
        }
    }

    fn deadline_before(&self, a: SeId, b: SeId) -> bool {
        (self.ses[a].deadline.wrapping_sub(self.ses[b].deadline) as i64) < 0
    }

    /// `do_preempt_short()` (v6.12 PREEMPT_SHORT): a waking entity with a shorter slice that
    /// is eligible and ahead of (or facing an ineligible) current cancels its protection.
    fn do_preempt_short(&self, cfs: usize, pse: SeId, se: SeId) -> bool {
        if self.ses[pse].slice >= self.ses[se].slice || !self.entity_eligible(cfs, pse) {
            return false;
        }
        let before = (self.ses[pse].deadline.wrapping_sub(self.ses[se].deadline) as i64) < 0;
        before || !self.entity_eligible(cfs, se)
    }

    /// `check_preempt_wakeup_fair()` of v6.12 once the idle/batch cases are settled: the
    /// woken entity preempts if it is what `pick_eevdf()` would now choose.
    pub(super) fn check_preempt_eevdf(
        &mut self,
        cfs: usize,
        curr: SeId,
        pse: SeId,
        now: u64,
    ) -> Preempt {
        self.update_curr(cfs, now);
        if std::mem::take(&mut self.rqs[cfs].eevdf_resched) {
            return Preempt::Yes;
        }
        if self.do_preempt_short(cfs, pse, curr) {
            self.ses[curr].protect = false;
        }
        if self.pick_eevdf(cfs) == Some(pse) {
            Preempt::Yes
        } else {
            Preempt::No
        }
    }

    /// `yield_task_fair()` under EEVDF: the request ends now.
    pub(super) fn yield_eevdf(&mut self, se: SeId) {
        let vslice = self.calc_delta_fair(self.ses[se].slice, se);
        let e = &mut self.ses[se];
        e.deadline = e.deadline.wrapping_add(vslice);
        e.protect = false;
    }

    /// Debug check of queue `cfs`'s `avg_vruntime` / `avg_load` against the sums over its
    /// waiting entities of weight × vruntime and of weight: the keys are the vruntimes less
    /// min_vruntime.
    #[cfg(debug_assertions)]
    pub(super) fn check_avg_vruntime(&self, cfs: usize, weighted_vruntime: i128, load: u64) {
        let rq = &self.rqs[cfs];
        let avg = weighted_vruntime - i128::from(rq.min_vruntime) * i128::from(load);
        assert_eq!(
            (avg, load),
            (rq.avg_vruntime, rq.avg_load),
            "cfs_rq {cfs}: avg_vruntime sums"
        );
    }
}
