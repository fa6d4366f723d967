//! The discrete-event engine: events ordered by (time ns, sequence number), a seeded RNG, and
//! the loop that hands each event to the model. Nothing here reads the wall clock.

mod queue;
mod rng;

pub use queue::EventQueue;
pub use rng::SimRng;

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// A model driven by the engine: it handles one event at a time and may schedule more.
pub trait Model {
    type Event: Copy;
    /// Handle `event` at time `now`.
    fn handle(&mut self, now: Time, event: Self::Event, queue: &mut EventQueue<Self::Event>);
}

/// Run `model` until the queue is empty or the next event lies beyond `until`.
/// Returns the number of events handled and the time of the last one.
pub fn run<M: Model>(model: &mut M, queue: &mut EventQueue<M::Event>, until: Time) -> (u64, Time) {
    let mut handled = 0u64;
    let mut last = 0;
    while let Some((time, event)) = queue.pop_before(until) {
        debug_assert!(time >= last, "time went back: {time} < {last}");
        last = time;
        model.handle(time, event, queue);
        handled += 1;
    }
    (handled, last)
}
