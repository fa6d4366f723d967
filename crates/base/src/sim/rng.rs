//! The run's only source of randomness: ChaCha8 seeded from the run's `--seed`, so every
//! machine and every thread count draws the same numbers.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct SimRng(ChaCha8Rng);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        SimRng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// A uniform integer in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.gen_range(0..n)
    }

    /// A value in `[base - base*pct/100, base + base*pct/100]`: jitter around a nominal time.
    pub fn jitter(&mut self, base: u64, pct: u64) -> u64 {
        let span = base * pct / 100;
        if span == 0 {
            return base;
        }
        base - span + self.below(2 * span + 1)
    }
}
