//! What an event touched, for the invariant checks of debug builds: a set of indices (CPUs,
//! tasks, entities, runqueues, timeline nodes, channels) marked where the model changes
//! them, and taken out by the checks after the event, which then look at those alone.
//!
//! In release builds a `Touched` is empty and marking it does nothing: the model pays
//! nothing for its checks there.

/// A set of indices marked since it was last emptied, in marking order, each once. Marking
/// and taking are O(1); the set reuses its memory, so steady state allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct Touched {
    #[cfg(debug_assertions)]
    list: Vec<u32>,
    /// Whether each index is in `list`.
    #[cfg(debug_assertions)]
    marked: Vec<bool>,
}

impl Touched {
    /// Add `id` to the set.
    #[inline]
    pub fn mark(&mut self, id: usize) {
        #[cfg(debug_assertions)]
        {
            if id >= self.marked.len() {
                self.marked.resize(id + 1, false);
            }
            if !self.marked[id] {
                self.marked[id] = true;
                self.list.push(id as u32);
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = id;
    }

    /// Take one index out of the set (the last marked), None once it is empty.
    #[cfg(debug_assertions)]
    pub fn pop(&mut self) -> Option<usize> {
        let id = self.list.pop()? as usize;
        self.marked[id] = false;
        Some(id)
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::Touched;

    #[test]
    fn each_index_comes_out_once_and_the_set_empties() {
        let mut t = Touched::default();
        for id in [3, 0, 3, 7, 0] {
            t.mark(id);
        }
        let mut out: Vec<usize> = std::iter::from_fn(|| t.pop()).collect();
        out.sort_unstable();
        assert_eq!(out, [0, 3, 7]);
        assert_eq!(t.pop(), None);
        t.mark(3);
        assert_eq!((t.pop(), t.pop()), (Some(3), None));
    }
}
