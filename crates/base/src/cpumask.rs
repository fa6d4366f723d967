//! CPU masks (`include/linux/cpumask.h` over `lib/bitmap.c`): a fixed-size inline bitmap of
//! `NR_CPUS` bits, as the kernel's `struct cpumask` is with `CONFIG_CPUMASK_OFFSTACK=n`.
//!
//! The mask also remembers how many of its 64-bit words can hold set bits (`len`, kept
//! exact: the word after the highest set bit), so that on an 8-CPU machine every operation
//! touches one word and on 256 CPUs four, whatever `NR_CPUS` is; words past `len` are zero.
//! It is `Copy` and never allocates, so masks can be taken per wakeup without a heap.

/// The largest CPU count a mask holds: a distribution kernel's `CONFIG_NR_CPUS` (x86-64
/// `MAXSMP` is 8192, Debian/Fedora/Ubuntu build 8192 or 4096; 4096 is the x86-64 Kconfig's
/// largest without MAXSMP).
pub const NR_CPUS: usize = 4096;

const WORDS: usize = NR_CPUS / 64;

/// A set of CPUs (affinity mask, domain span).
#[derive(Clone, Copy)]
pub struct CpuSet {
    len: u16,
    bits: [u64; WORDS],
}

impl CpuSet {
    /// The empty mask.
    pub const fn empty() -> CpuSet {
        CpuSet {
            len: 0,
            bits: [0; WORDS],
        }
    }

    /// CPUs `0..nr_cpus` (at most `NR_CPUS`).
    pub fn all(nr_cpus: usize) -> CpuSet {
        let n = nr_cpus.min(NR_CPUS);
        let mut m = CpuSet::empty();
        for w in 0..n / 64 {
            m.bits[w] = u64::MAX;
        }
        if n % 64 != 0 {
            m.bits[n / 64] = (1u64 << (n % 64)) - 1;
        }
        m.len = n.div_ceil(64) as u16;
        m
    }

    /// The mask of one CPU.
    pub fn single(cpu: usize) -> CpuSet {
        let mut m = CpuSet::empty();
        m.set(cpu);
        m
    }

    /// Adds `cpu`; a CPU at or above `NR_CPUS` is ignored (the kernel's `cpumask_set_cpu`
    /// is never given one: inputs are checked against the platform first).
    pub fn set(&mut self, cpu: usize) {
        if cpu < NR_CPUS {
            self.bits[cpu / 64] |= 1u64 << (cpu % 64);
            self.len = self.len.max((cpu / 64 + 1) as u16);
        }
    }

    /// Removes `cpu`.
    pub fn clear(&mut self, cpu: usize) {
        if self.contains(cpu) {
            self.bits[cpu / 64] &= !(1u64 << (cpu % 64));
            self.trim();
        }
    }

    pub fn contains(&self, cpu: usize) -> bool {
        cpu / 64 < usize::from(self.len) && self.bits[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `cpumask_weight()`.
    pub fn weight(&self) -> u32 {
        self.words().iter().map(|w| w.count_ones()).sum()
    }

    /// `cpumask_first()`.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// `cpumask_and()`.
    pub fn and(&self, other: &CpuSet) -> CpuSet {
        let mut m = CpuSet::empty();
        let n = usize::from(self.len.min(other.len));
        for w in 0..n {
            m.bits[w] = self.bits[w] & other.bits[w];
        }
        m.len = n as u16;
        m.trim();
        m
    }

    /// `cpumask_or()`.
    pub fn or(&self, other: &CpuSet) -> CpuSet {
        let mut m = *self;
        for w in 0..usize::from(other.len) {
            m.bits[w] |= other.bits[w];
        }
        m.len = self.len.max(other.len);
        m
    }

    /// `cpumask_intersects()`.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        let n = usize::from(self.len.min(other.len));
        (0..n).any(|w| self.bits[w] & other.bits[w] != 0)
    }

    /// `cpumask_subset()`: every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        (0..usize::from(self.len)).all(|w| self.bits[w] & !other.word(w) == 0)
    }

    /// `for_each_cpu()`: the CPUs lowest first, one step per set bit (and per word).
    pub fn iter(&self) -> Cpus<'_> {
        self.iter_from(0)
    }

    /// `for_each_cpu_wrap(cpu, mask, start)`: the CPUs from `start` up, then from 0 below
    /// it.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let start = start.min(NR_CPUS);
        self.iter_from(start)
            .chain(self.iter().take_while(move |&c| c < start))
    }

    /// The CPUs at or above `start`, lowest first.
    pub fn iter_from(&self, start: usize) -> Cpus<'_> {
        let words = self.words();
        let word = start / 64;
        let bits = words
            .get(word)
            .map_or(0, |w| w & (u64::MAX << (start % 64)));
        Cpus { words, word, bits }
    }

    fn words(&self) -> &[u64] {
        &self.bits[..usize::from(self.len)]
    }

    fn word(&self, w: usize) -> u64 {
        if w < usize::from(self.len) {
            self.bits[w]
        } else {
            0
        }
    }

    fn trim(&mut self) {
        while self.len > 0 && self.bits[usize::from(self.len) - 1] == 0 {
            self.len -= 1;
        }
    }
}

impl std::fmt::LowerHex for CpuSet {
    /// `%*pb` as the kernel prints a cpumask of `nr_cpu_ids` bits, taken here as up to the
    /// highest CPU set (a root domain's span is every CPU): hex, a comma between 32-bit
    /// groups, the highest group first without leading zeros (`ff,ffffffff` for 40 CPUs).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bits = self.iter().last().map_or(1, |c| c + 1);
        let groups = bits.div_ceil(32);
        let group = |g: usize| (self.word(g / 2) >> (32 * (g % 2))) as u32;
        write!(f, "{:x}", group(groups - 1))?;
        for g in (0..groups - 1).rev() {
            write!(f, ",{:08x}", group(g))?;
        }
        Ok(())
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(cpus: I) -> CpuSet {
        let mut m = CpuSet::empty();
        for c in cpus {
            m.set(c);
        }
        m
    }
}

impl PartialEq for CpuSet {
    fn eq(&self, other: &CpuSet) -> bool {
        self.words() == other.words()
    }
}

impl Eq for CpuSet {}

impl std::hash::Hash for CpuSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words().hash(state);
    }
}

impl std::fmt::Debug for CpuSet {
    /// The kernel's `%*pbl` list form: `0-3,8,10-11`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        let mut it = self.iter().peekable();
        f.write_str("CpuSet[")?;
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&(hi + 1)) {
                hi = it.next().unwrap_or(hi);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if hi == lo {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        f.write_str("]")
    }
}

/// The set CPUs of a mask in ascending order.
pub struct Cpus<'a> {
    words: &'a [u64],
    word: usize,
    bits: u64,
}

impl Iterator for Cpus<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let cpu = self.word * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_across_words() {
        let a: CpuSet = [0, 63, 64, 300, 4095].into_iter().collect();
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 63, 64, 300, 4095]);
        assert_eq!(a.weight(), 5);
        assert!(a.contains(300) && !a.contains(301) && !a.contains(5000));
        let b = CpuSet::all(256);
        assert_eq!(b.weight(), 256);
        assert_eq!(a.and(&b).iter().collect::<Vec<_>>(), [0, 63, 64]);
        assert_eq!(a.and(&b), [0, 63, 64].into_iter().collect());
        assert!(a.intersects(&b) && !CpuSet::single(300).intersects(&b));
        assert_eq!(b.or(&a).weight(), 258);
        assert!(CpuSet::single(200).is_subset(&b) && !a.is_subset(&b));
        assert_eq!(a.iter_wrap(64).collect::<Vec<_>>(), [64, 300, 4095, 0, 63]);
        assert_eq!(a.iter_from(65).collect::<Vec<_>>(), [300, 4095]);
        let mut c = a;
        c.clear(4095);
        c.clear(300);
        assert_eq!(c, [0, 63, 64].into_iter().collect());
        c.clear(64);
        assert_eq!(c.iter().last(), Some(63));
        // Equality ignores how the mask was built.
        assert_eq!(CpuSet::single(70).and(&CpuSet::single(3)), CpuSet::empty());
        assert!(CpuSet::all(0).is_empty());
    }

    #[test]
    fn kernel_hex_groups_of_32_bits() {
        assert_eq!(format!("{:x}", CpuSet::all(8)), "ff");
        assert_eq!(format!("{:x}", CpuSet::all(40)), "ff,ffffffff");
        let m: CpuSet = [64, 95].into_iter().collect();
        assert_eq!(format!("{m:x}"), "80000001,00000000,00000000");
    }
}
