//! A recount of every cfs_rq's counters from its entities, for the debug checks: what each
//! entity adds to the queue it is counted on (its [`Share`]) and the sums over each queue,
//! moved when an entity the event touched is recounted. The per-event checks compare a
//! queue's counters (load, `h_nr_running`, EEVDF's `avg_vruntime`) with these sums in O(1)
//! where a recount would walk the queue; the full check walks every queue and compares the
//! walk with them too, and every entity with its recorded share, so a change the marking
//! missed shows up there.

use super::{Fair, SeId};

/// What an entity adds to the queue it is queued on (nothing when it is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Share {
    /// The queue, the entity's weight and the tasks it stands for (1, or the `h_nr_running`
    /// of a group entity's queue).
    queued: Option<(usize, u64, u32)>,
    /// The vruntime it waits with in the queue's timeline (not while it runs).
    waiting: Option<u64>,
}

/// The sums over the entities queued on one cfs_rq.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Sums {
    /// Their weights (`load.weight`) and the tasks below them (`h_nr_running`).
    pub load: u64,
    pub h_nr_running: u32,
    /// Over the waiting ones: Σ weight × vruntime and Σ weight (EEVDF's `avg_vruntime` is
    /// the first less min_vruntime × the second, which is `avg_load`).
    pub waiting_vw: i128,
    pub waiting_load: u64,
}

impl Sums {
    /// Count share `s` in (`add`) or out of the sums.
    fn count(&mut self, s: Share, add: bool) {
        let Some((_, w, h)) = s.queued else { return };
        let vw = s.waiting.map(|v| i128::from(v) * i128::from(w));
        if add {
            self.load += w;
            self.h_nr_running += h;
            if let Some(vw) = vw {
                self.waiting_vw += vw;
                self.waiting_load += w;
            }
        } else {
            self.load -= w;
            self.h_nr_running -= h;
            if let Some(vw) = vw {
                self.waiting_vw -= vw;
                self.waiting_load -= w;
            }
        }
    }

    /// The sums with entity `se`'s share counted (a walk of its queue recomputing them).
    pub(super) fn with(mut self, fair: &Fair, se: SeId) -> Sums {
        self.count(fair.share_of(se), true);
        self
    }
}

/// The recorded shares and the sums they make, per entity and per queue.
#[derive(Debug, Clone, Default)]
pub(super) struct Shadow {
    shares: Vec<Share>,
    sums: Vec<Sums>,
}

impl Shadow {
    /// Record `now` as entity `se`'s share, moving the sums.
    pub(super) fn recount(&mut self, se: SeId, now: Share) {
        if se >= self.shares.len() {
            self.shares.resize(se + 1, Share::default());
        }
        let old = std::mem::replace(&mut self.shares[se], now);
        for (s, add) in [(old, false), (now, true)] {
            if let Some((q, _, _)) = s.queued {
                if q >= self.sums.len() {
                    self.sums.resize(q + 1, Sums::default());
                }
                self.sums[q].count(s, add);
            }
        }
    }

    /// The share recorded for entity `se`.
    pub(super) fn share(&self, se: SeId) -> Share {
        self.shares.get(se).copied().unwrap_or_default()
    }

    /// The sums of queue `cfs`.
    pub(super) fn sums(&self, cfs: usize) -> Sums {
        self.sums.get(cfs).copied().unwrap_or_default()
    }
}

impl Fair {
    /// What entity `se` adds to its queue now.
    pub(super) fn share_of(&self, se: SeId) -> Share {
        let e = &self.ses[se];
        if !e.on_rq {
            return Share::default();
        }
        let h = e.my_q.map_or(1, |q| self.rqs[q].h_nr_running);
        let waiting = self.rqs[e.cfs_rq].curr != Some(se);
        Share {
            queued: Some((e.cfs_rq, e.load.weight, h)),
            waiting: waiting.then_some(e.vruntime),
        }
    }
}
