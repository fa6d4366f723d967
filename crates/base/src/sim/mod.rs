//! The discrete-event engine: events ordered by (time ns, sequence number), a seeded RNG, and
//! the loop that hands each event to the model. Nothing here reads the wall clock.

mod prefetch;
mod queue;
mod rng;

pub use prefetch::prefetch;
pub use queue::{EventQueue, Pending};
pub use rng::SimRng;

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// A model driven by the engine: it handles one event at a time and may schedule more.
pub trait Model {
    /// An event; the default value only fills the queue's unused places.
    type Event: Copy + Default;
    /// Handle `event` at time `now`. Returns false if the event was stale (cancelled by a
    /// generation counter since it was scheduled) and so did nothing.
    fn handle(
        &mut self,
        now: Time,
        event: Self::Event,
        queue: &mut EventQueue<Self::Event>,
    ) -> bool;

    /// Whether the model has nothing more to do whatever is queued (the workload has
    /// ended): the run stops there.
    fn ended(&self) -> bool {
        false
    }
}

/// What a run popped from the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events the model acted on.
    pub handled: u64,
    /// Events popped that the model ignored as cancelled.
    pub stale: u64,
    /// The time of the last event popped.
    pub last: Time,
}

/// Run `model` until the queue is empty, the next event lies beyond `until` or the model
/// has ended.
pub fn run<M: Model>(model: &mut M, queue: &mut EventQueue<M::Event>, until: Time) -> RunStats {
    let mut stats = RunStats::default();
    while !model.ended() {
        let Some((time, event)) = queue.pop_before(until) else {
            break;
        };
        debug_assert!(
            time >= stats.last,
            "time went back: {time} < {}",
            stats.last
        );
        stats.last = time;
        if model.handle(time, event, queue) {
            stats.handled += 1;
        } else {
            stats.stale += 1;
        }
    }
    stats
}
