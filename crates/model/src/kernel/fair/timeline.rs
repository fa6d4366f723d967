//! The fair class's timelines (the kernel's `rb_root_cached` of `struct sched_entity`, with
//! EEVDF's `min_deadline` augmentation of `rbtree_augmented.h`): an ordered set of entities
//! keyed by (key, insertion sequence), O(log n) insert and remove, O(1) leftmost, successor
//! and predecessor.
//!
//! A treap whose nodes live in an arena indexed by entity id (`Nodes`, one row per entity,
//! grown with the entity arena), so inserting and removing allocate nothing. Priorities are a
//! fixed hash of the entity id: the shape is deterministic, and the order (all a caller sees)
//! depends only on the keys. Every node also carries an auxiliary key (EEVDF's (deadline,
//! sequence)) and, in an augmented arena, the minimum of it over its subtree, which finds
//! the entity with the smallest auxiliary key among a prefix of the timeline in O(log n).
//! The nodes are also threaded in key order (`prev`, `next`): taking out the leftmost, which
//! every pick does, then finds the new one without walking the tree, whose nodes away from
//! the spines have left the host's caches when there are many entities.
//!
//! Debug builds check a timeline after every event where it changed: the arena marks the
//! nodes an insert or a remove relinked ([`Nodes::check_touched`] checks each against its
//! parent, children and in-order neighbours, and the subtree minima up to the root), and
//! [`Timeline::check`] walks a whole timeline for the periodic full check.

use crate::kernel::touched::Touched;

const NIL: u32 = u32::MAX;

/// A key of the timeline: (vruntime or deadline, insertion sequence); unique per entry.
pub type Key = (u64, u64);

#[derive(Debug, Clone, Copy)]
struct Node {
    key: Key,
    aux: Key,
    /// The smallest `aux` in this subtree and the node holding it.
    min_aux: Key,
    min_id: u32,
    left: u32,
    right: u32,
    parent: u32,
    prio: u32,
    /// The neighbours in key order.
    prev: u32,
    next: u32,
}

/// The node arena of one kind of timeline: row `id` is entity `id`'s node. An augmented
/// arena keeps the subtree minima of the auxiliary key, as EEVDF's tree does
/// (`rb_add_augmented_cached()` with `min_deadline_cb`); a plain one does not, as v6.1's
/// CFS tree does not (`rb_add_cached()`), and so never reads the siblings on the way up.
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    rows: Vec<Node>,
    augmented: bool,
    /// Nodes relinked since the last check (debug builds).
    touched: Touched,
}

impl Nodes {
    /// An arena whose timelines keep the subtree minima ([`Timeline::min_aux_in_prefix`]).
    pub fn augmented() -> Nodes {
        Nodes {
            rows: Vec::new(),
            augmented: true,
            touched: Touched::default(),
        }
    }

    /// Make room for the node of entity `id`.
    pub fn ensure(&mut self, id: usize) {
        while self.rows.len() <= id {
            let i = self.rows.len() as u64;
            self.rows.push(Node {
                key: (0, 0),
                aux: (0, 0),
                min_aux: (0, 0),
                min_id: NIL,
                left: NIL,
                right: NIL,
                parent: NIL,
                prio: prio_of(i),
                prev: NIL,
                next: NIL,
            });
        }
    }

    /// Recompute the subtree minimum of `n` from its children; whether it changed (the
    /// `RBCOMPUTE(node, true)` of `rbtree_augmented.h`, which ends the walk up when not).
    fn pull(&mut self, n: u32) -> bool {
        let node = self.rows[n as usize];
        let (mut m, mut id) = (node.aux, n);
        for c in [node.left, node.right] {
            if c != NIL {
                let cn = &self.rows[c as usize];
                if cn.min_aux < m {
                    (m, id) = (cn.min_aux, cn.min_id);
                }
            }
        }
        let node = &mut self.rows[n as usize];
        let changed = (node.min_aux, node.min_id) != (m, id);
        node.min_aux = m;
        node.min_id = id;
        changed
    }

    /// Recompute the subtree minima from `n` up to the root, stopping at the first that
    /// did not change (the augmented callbacks' `propagate`).
    fn propagate(&mut self, mut n: u32) {
        if !self.augmented {
            return;
        }
        while n != NIL && self.pull(n) {
            n = self.rows[n as usize].parent;
        }
    }
}

/// splitmix64 of the entity id: the treap priority.
fn prio_of(id: u64) -> u32 {
    let mut z = id.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

/// One timeline: root, leftmost (`rb_leftmost`) and size.
#[derive(Debug, Clone)]
pub struct Timeline {
    root: u32,
    first: u32,
    len: u32,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            root: NIL,
            first: NIL,
            len: 0,
        }
    }
}

fn opt(n: u32) -> Option<usize> {
    (n != NIL).then_some(n as usize)
}

impl Timeline {
    #[cfg(any(debug_assertions, test))]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[cfg(any(debug_assertions, test))]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The leftmost entity.
    pub fn first(&self) -> Option<usize> {
        opt(self.first)
    }

    /// Insert entity `id` (not in this timeline) under `key`, with auxiliary key `aux`.
    pub fn insert(&mut self, nodes: &mut Nodes, id: usize, key: Key, aux: Key) {
        let x = id as u32;
        {
            let n = &mut nodes.rows[id];
            n.key = key;
            n.aux = aux;
            n.min_aux = aux;
            n.min_id = x;
            n.left = NIL;
            n.right = NIL;
            n.parent = NIL;
        }
        let mut parent = NIL;
        let mut cur = self.root;
        let mut leftmost = true;
        while cur != NIL {
            parent = cur;
            if key < nodes.rows[cur as usize].key {
                cur = nodes.rows[cur as usize].left;
            } else {
                cur = nodes.rows[cur as usize].right;
                leftmost = false;
            }
        }
        nodes.rows[id].parent = parent;
        // A new leaf sits next to its parent in key order: just before it as its left
        // child, just after it as its right one.
        let (prev, next) = if parent == NIL {
            self.root = x;
            (NIL, NIL)
        } else if key < nodes.rows[parent as usize].key {
            nodes.rows[parent as usize].left = x;
            (nodes.rows[parent as usize].prev, parent)
        } else {
            nodes.rows[parent as usize].right = x;
            (parent, nodes.rows[parent as usize].next)
        };
        self.link(nodes, prev, x);
        self.link(nodes, x, next);
        nodes.touched.mark(id);
        if leftmost {
            self.first = x;
        }
        self.len += 1;
        // Restore the heap order of priorities, then the subtree minima above.
        loop {
            let p = nodes.rows[id].parent;
            if p == NIL || nodes.rows[p as usize].prio >= nodes.rows[id].prio {
                break;
            }
            self.rotate_up(nodes, x);
        }
        nodes.propagate(nodes.rows[id].parent);
    }

    /// Remove entity `id`, which is in this timeline.
    pub fn remove(&mut self, nodes: &mut Nodes, id: usize) {
        let x = id as u32;
        if self.first == x {
            self.first = self.next_raw(nodes, x);
        }
        // Rotate it down until it has at most one child, then splice it out.
        loop {
            let (l, r) = (nodes.rows[id].left, nodes.rows[id].right);
            let c = match (l, r) {
                (NIL, _) | (_, NIL) => break,
                _ if nodes.rows[l as usize].prio > nodes.rows[r as usize].prio => l,
                _ => r,
            };
            self.rotate_up(nodes, c);
        }
        let n = nodes.rows[id];
        let child = if n.left != NIL { n.left } else { n.right };
        if child != NIL {
            nodes.rows[child as usize].parent = n.parent;
        }
        self.replace_child(nodes, n.parent, x, child);
        self.link(nodes, n.prev, n.next);
        for m in [n.prev, n.next, n.parent, child] {
            if m != NIL {
                nodes.touched.mark(m as usize);
            }
        }
        self.len -= 1;
        nodes.propagate(n.parent);
        let n = &mut nodes.rows[id];
        n.left = NIL;
        n.right = NIL;
        n.parent = NIL;
        n.prev = NIL;
        n.next = NIL;
    }

    fn replace_child(&mut self, nodes: &mut Nodes, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else if nodes.rows[parent as usize].left == old {
            nodes.rows[parent as usize].left = new;
        } else {
            nodes.rows[parent as usize].right = new;
        }
    }

    /// Rotate `x` above its parent, keeping the order (and, augmented, the subtree minima).
    fn rotate_up(&mut self, nodes: &mut Nodes, x: u32) {
        let p = nodes.rows[x as usize].parent;
        let g = nodes.rows[p as usize].parent;
        if nodes.rows[p as usize].left == x {
            let b = nodes.rows[x as usize].right;
            nodes.rows[p as usize].left = b;
            if b != NIL {
                nodes.rows[b as usize].parent = p;
            }
            nodes.rows[x as usize].right = p;
        } else {
            let b = nodes.rows[x as usize].left;
            nodes.rows[p as usize].right = b;
            if b != NIL {
                nodes.rows[b as usize].parent = p;
            }
            nodes.rows[x as usize].left = p;
        }
        nodes.rows[p as usize].parent = x;
        nodes.rows[x as usize].parent = g;
        self.replace_child(nodes, g, p, x);
        nodes.touched.mark(x as usize);
        nodes.touched.mark(p as usize);
        if nodes.augmented {
            nodes.pull(p);
            nodes.pull(x);
        }
    }

    /// Make `b` follow `a` in key order (either may be NIL: an end of the timeline).
    fn link(&mut self, nodes: &mut Nodes, a: u32, b: u32) {
        if a != NIL {
            nodes.rows[a as usize].next = b;
        }
        if b != NIL {
            nodes.rows[b as usize].prev = a;
        }
    }

    fn next_raw(&self, nodes: &Nodes, x: u32) -> u32 {
        nodes.rows[x as usize].next
    }

    fn prev_raw(&self, nodes: &Nodes, x: u32) -> u32 {
        nodes.rows[x as usize].prev
    }

    /// The entity after `id` (in this timeline) in key order (`__pick_next_entity`).
    pub fn next(&self, nodes: &Nodes, id: usize) -> Option<usize> {
        opt(self.next_raw(nodes, id as u32))
    }

    /// The entity after `id`, with its node asked into the host's caches
    /// ([`schedlab_base::sim::prefetch`]): the pick after next reads it.
    pub fn next_prefetched(&self, nodes: &Nodes, id: usize) -> Option<usize> {
        let c = opt(self.next_raw(nodes, id as u32))?;
        schedlab_base::sim::prefetch(&nodes.rows[c]);
        Some(c)
    }

    fn last_raw(&self, nodes: &Nodes) -> u32 {
        let mut c = self.root;
        if c == NIL {
            return NIL;
        }
        while nodes.rows[c as usize].right != NIL {
            c = nodes.rows[c as usize].right;
        }
        c
    }

    /// The entities in key order.
    pub fn iter<'a>(&'a self, nodes: &'a Nodes) -> Iter<'a> {
        Iter {
            tl: self,
            nodes,
            front: self.first,
            back: self.last_raw(nodes),
            left: self.len,
        }
    }

    /// Among the entities of the prefix of the timeline that `in_prefix` accepts (it must
    /// accept a prefix: if it accepts an entity it accepts every one before it), the one with
    /// the smallest auxiliary key: EEVDF's earliest eligible deadline (`pick_eevdf()`'s walk
    /// of the min_deadline-augmented tree).
    pub fn min_aux_in_prefix(
        &self,
        nodes: &Nodes,
        mut in_prefix: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        debug_assert!(nodes.augmented, "a prefix minimum of a plain timeline");
        let mut best: Option<(Key, u32)> = None;
        let mut take = |m: Key, id: u32| {
            if best.map_or(true, |(b, _)| m < b) {
                best = Some((m, id));
            }
        };
        let mut n = self.root;
        while n != NIL {
            let node = &nodes.rows[n as usize];
            if in_prefix(n as usize) {
                if node.left != NIL {
                    let l = &nodes.rows[node.left as usize];
                    take(l.min_aux, l.min_id);
                }
                take(node.aux, n);
                n = node.right;
            } else {
                n = node.left;
            }
        }
        best.map(|(_, id)| id as usize)
    }

    /// The key entity `id` was inserted under.
    pub fn key_of(nodes: &Nodes, id: usize) -> Key {
        nodes.rows[id].key
    }

    /// The auxiliary key entity `id` was inserted with.
    #[cfg(debug_assertions)]
    pub fn aux_of(nodes: &Nodes, id: usize) -> Key {
        nodes.rows[id].aux
    }

    /// Debug check of the whole structure: parent links, priorities, key order, subtree
    /// minima, size, leftmost, and the threads as the tree's in-order sequence both ways.
    /// One walk of the tree, nothing allocated.
    #[cfg(debug_assertions)]
    pub fn check(&self, nodes: &Nodes) {
        /// The walk's state: nodes seen, and the last one in key order.
        struct Walk<'a> {
            nodes: &'a Nodes,
            first: u32,
            count: u32,
            last: u32,
        }
        fn walk(w: &mut Walk<'_>, n: u32, parent: u32) -> Key {
            let node = &w.nodes.rows[n as usize];
            assert_eq!(node.parent, parent, "timeline: parent link");
            w.count += 1;
            let mut m = (node.aux, n);
            for (c, left) in [(node.left, true), (node.right, false)] {
                if c == NIL {
                    if left {
                        w.visit(n);
                    }
                    continue;
                }
                let cn = &w.nodes.rows[c as usize];
                assert!(cn.prio <= node.prio, "timeline: heap order");
                assert!((cn.key < node.key) == left, "timeline: key order");
                let cm = walk(w, c, n);
                if cm < m.0 {
                    m = (cm, cn.min_id);
                }
                if left {
                    w.visit(n);
                }
            }
            if w.nodes.augmented {
                assert_eq!((node.min_aux, node.min_id), m, "timeline: subtree minimum");
            }
            node.min_aux
        }
        impl Walk<'_> {
            /// `n` comes next in key order: the threads must agree.
            fn visit(&mut self, n: u32) {
                let rows = &self.nodes.rows;
                assert_eq!(rows[n as usize].prev, self.last, "timeline: prev links");
                if self.last == NIL {
                    assert_eq!(n, self.first, "timeline: leftmost");
                } else {
                    let last = &rows[self.last as usize];
                    assert_eq!(last.next, n, "timeline: next links");
                    assert!(last.key < rows[n as usize].key, "timeline: iteration order");
                }
                self.last = n;
            }
        }
        let mut w = Walk {
            nodes,
            first: self.first,
            count: 0,
            last: NIL,
        };
        if self.root != NIL {
            walk(&mut w, self.root, NIL);
        }
        assert_eq!(w.count, self.len, "timeline: size");
        if w.last == NIL {
            assert_eq!(self.first, NIL, "timeline: leftmost");
        } else {
            assert_eq!(
                nodes.rows[w.last as usize].next, NIL,
                "timeline: next links"
            );
        }
    }

    /// Debug check of what a change of the timeline can break at its ends, in O(depth):
    /// root, leftmost and size agree, and the root's subtree minimum (its nodes are checked
    /// where they changed: [`Nodes::check_touched`]).
    #[cfg(debug_assertions)]
    pub fn check_ends(&self, nodes: &Nodes) {
        assert_eq!(self.root == NIL, self.len == 0, "timeline: size");
        assert_eq!(self.first == NIL, self.len == 0, "timeline: leftmost");
        if self.root == NIL {
            return;
        }
        let root = &nodes.rows[self.root as usize];
        assert_eq!(root.parent, NIL, "timeline: parent link");
        if nodes.augmented {
            assert_eq!(
                (root.min_aux, root.min_id),
                nodes.subtree_min(self.root),
                "timeline: subtree minimum"
            );
        }
        let mut c = self.root;
        while nodes.rows[c as usize].left != NIL {
            c = nodes.rows[c as usize].left;
        }
        assert_eq!(c, self.first, "timeline: leftmost");
        assert_eq!(nodes.rows[c as usize].prev, NIL, "timeline: prev links");
    }

    /// Whether entity `id` is in this timeline: its node leads up to this root, O(depth).
    /// A node in no timeline has no links ([`Nodes::is_linked`]).
    #[cfg(debug_assertions)]
    pub fn contains(&self, nodes: &Nodes, id: usize) -> bool {
        let mut n = id as u32;
        loop {
            let p = nodes.rows[n as usize].parent;
            if p == NIL {
                return n == self.root;
            }
            n = p;
        }
    }
}

#[cfg(debug_assertions)]
impl Nodes {
    /// Check the nodes relinked since the last call (an insert's node and the nodes its
    /// rotations moved; a remove's neighbours, parent and child) where they stand now:
    /// O(depth) each.
    pub fn check_touched(&mut self) {
        while let Some(n) = self.touched.pop() {
            self.check_node(n as u32);
        }
    }

    /// Whether node `id` has any link (a node in a timeline of more than one has one).
    pub fn is_linked(&self, id: usize) -> bool {
        let n = &self.rows[id];
        [n.parent, n.left, n.right, n.prev, n.next] != [NIL; 5]
    }

    /// Node `n` against its surroundings: links with its parent and children, heap and key
    /// order with its children, its threads to its in-order neighbours (which it sorts
    /// between), and, augmented, the subtree minima from it up to the root.
    fn check_node(&self, n: u32) {
        if !self.is_linked(n as usize) {
            // Out of every timeline, or alone in one (whose ends are checked there).
            return;
        }
        let node = &self.rows[n as usize];
        if node.parent != NIL {
            let p = &self.rows[node.parent as usize];
            assert!(p.left == n || p.right == n, "timeline: parent link");
        }
        for (c, left) in [(node.left, true), (node.right, false)] {
            if c != NIL {
                let cn = &self.rows[c as usize];
                assert_eq!(cn.parent, n, "timeline: parent link");
                assert!(cn.prio <= node.prio, "timeline: heap order");
                assert!((cn.key < node.key) == left, "timeline: key order");
            }
        }
        assert_eq!(node.prev, self.in_order(n, true), "timeline: prev links");
        assert_eq!(node.next, self.in_order(n, false), "timeline: next links");
        if node.prev != NIL {
            assert!(
                self.rows[node.prev as usize].key < node.key,
                "timeline: order"
            );
        }
        if node.next != NIL {
            assert!(
                node.key < self.rows[node.next as usize].key,
                "timeline: order"
            );
        }
        if self.augmented {
            let mut a = n;
            while a != NIL {
                let an = &self.rows[a as usize];
                assert_eq!(
                    (an.min_aux, an.min_id),
                    self.subtree_min(a),
                    "timeline: subtree minimum"
                );
                a = an.parent;
            }
        }
    }

    /// The in-order predecessor (`before`) or successor of `n` found through the tree: the
    /// extreme node of the child subtree on that side, else the nearest ancestor on it.
    fn in_order(&self, n: u32, before: bool) -> u32 {
        let side = |x: u32, before: bool| {
            let r = &self.rows[x as usize];
            if before {
                r.left
            } else {
                r.right
            }
        };
        let c = side(n, before);
        if c != NIL {
            let mut c = c;
            while side(c, !before) != NIL {
                c = side(c, !before);
            }
            return c;
        }
        let mut c = n;
        loop {
            let p = self.rows[c as usize].parent;
            if p == NIL || side(p, !before) == c {
                return p;
            }
            c = p;
        }
    }

    /// The subtree minimum of `n` recomputed from its own key and its children's minima
    /// (what [`Nodes::pull`] would store).
    fn subtree_min(&self, n: u32) -> (Key, u32) {
        let node = &self.rows[n as usize];
        let mut m = (node.aux, n);
        for c in [node.left, node.right] {
            if c != NIL {
                let cn = &self.rows[c as usize];
                if cn.min_aux < m.0 {
                    m = (cn.min_aux, cn.min_id);
                }
            }
        }
        m
    }
}

/// In-order iterator over a timeline, from both ends.
pub struct Iter<'a> {
    tl: &'a Timeline,
    nodes: &'a Nodes,
    front: u32,
    back: u32,
    left: u32,
}

impl Iterator for Iter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let x = self.front;
        self.front = self.tl.next_raw(self.nodes, x);
        Some(x as usize)
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let x = self.back;
        self.back = self.tl.prev_raw(self.nodes, x);
        Some(x as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_base::sim::SimRng;

    /// Random inserts and removes against a sorted Vec (the old timeline) as the oracle:
    /// same order, same leftmost, same successor, and in an augmented arena the same
    /// prefix minimum.
    #[test]
    fn matches_a_sorted_vec_under_random_operations() {
        for augmented in [true, false] {
            random_operations(if augmented {
                Nodes::augmented()
            } else {
                Nodes::default()
            });
        }
    }

    fn random_operations(mut nodes: Nodes) {
        let mut rng = SimRng::new(7);
        let n = 300;
        nodes.ensure(n - 1);
        let mut tl = Timeline::default();
        let mut oracle: Vec<(Key, Key, usize)> = Vec::new();
        let mut seq = 0;
        for step in 0..20_000 {
            let id = rng.below(n as u64) as usize;
            if let Some(i) = oracle.iter().position(|e| e.2 == id) {
                oracle.remove(i);
                tl.remove(&mut nodes, id);
            } else {
                seq += 1;
                // Few distinct keys, so the sequence breaks many ties.
                let key = (rng.below(50), seq);
                let aux = (rng.below(50), seq);
                let i = oracle.partition_point(|e| e.0 < key);
                oracle.insert(i, (key, aux, id));
                tl.insert(&mut nodes, id, key, aux);
            }
            // Every step where it changed, and now and then all of it (the invariant checks
            // are debug builds'; the oracle's below run in both).
            #[cfg(debug_assertions)]
            {
                nodes.check_touched();
                tl.check_ends(&nodes);
                if step % 97 == 0 {
                    tl.check(&nodes);
                }
            }
            assert_eq!(tl.len(), oracle.len());
            assert_eq!(tl.first(), oracle.first().map(|e| e.2));
            let got: Vec<usize> = tl.iter(&nodes).collect();
            let want: Vec<usize> = oracle.iter().map(|e| e.2).collect();
            assert_eq!(got, want);
            let back: Vec<usize> = tl.iter(&nodes).rev().collect();
            assert!(back.iter().eq(want.iter().rev()));
            if let Some(f) = tl.first() {
                assert_eq!(tl.next(&nodes, f), oracle.get(1).map(|e| e.2));
            }
            if !nodes.augmented {
                continue;
            }
            // The prefix of keys below a random bound: the smallest aux among it, as the
            // old EEVDF pick found it (scan in aux order for the first in the prefix).
            let bound = (rng.below(55), u64::MAX);
            let in_prefix = |id: usize| Timeline::key_of(&nodes, id) <= bound;
            let mut by_aux = oracle.clone();
            by_aux.sort_by_key(|e| e.1);
            let want = by_aux.iter().find(|e| e.0 <= bound).map(|e| e.2);
            assert_eq!(tl.min_aux_in_prefix(&nodes, in_prefix), want);
        }
    }
}
