//! A small deterministic random generator (xorshift) for tests and benchmarks that build
//! random boards: seeded, so a failing board can be made again and every run of a benchmark
//! has the same one.

/// Seeded with any number but 0.
pub struct Dice(pub u64);

impl Dice {
    /// A number below `sides` (which must be at least 1).
    pub fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % sides as u64) as usize
    }
}
