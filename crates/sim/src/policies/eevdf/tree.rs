//! The run queue's timeline: entities ordered by virtual deadline, first come first served among
//! equal deadlines, each subtree knowing its least vruntime — the kernel's rb-tree
//! `cfs_rq->tasks_timeline` with `min_vruntime_cb` (`__enqueue_entity`, `__dequeue_entity`,
//! `min_vruntime_update`, fair.c). It is a treap here (priorities from a fixed hash of the
//! insertion number, so runs are reproducible), stored in one table indexed by task id.
//!
//! Short timelines are a sorted array instead ([`Timeline`]).
//!
//! [`Tree::pick`] is `pick_eevdf()`'s heap search: go left while the left subtree holds an
//! eligible entity (it has the earlier deadlines), else take this node if eligible, else go
//! right. It returns the earliest virtual deadline among eligible entities in O(depth).

use crate::policy::TaskId;
use std::cell::Cell;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    left: u32,
    right: u32,
    prio: u32,
    deadline: i64,
    seq: u64,
    vruntime: i64,
    /// Least vruntime in this subtree.
    min_v: i64,
    linked: bool,
}

impl Default for Node {
    fn default() -> Self {
        Node { left: NIL, right: NIL, prio: 0, deadline: 0, seq: 0, vruntime: 0, min_v: 0, linked: false }
    }
}

/// Entities keyed by (deadline, insertion order), augmented with the least vruntime per subtree.
#[derive(Debug, Clone)]
pub struct Tree {
    nodes: Vec<Node>,
    root: u32,
    len: usize,
    seq: u64,
    /// A deliberately broken tree for the negative control: removal leaves the subtree
    /// minima above the removed node stale.
    #[cfg(test)]
    stale_on_remove: bool,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            nodes: Vec::new(),
            root: NIL,
            len: 0,
            seq: 0,
            #[cfg(test)]
            stale_on_remove: false,
        }
    }
}

/// A fixed mix of the insertion number (splitmix64's finaliser): treap priorities.
fn mix(x: u64) -> u32 {
    let mut z = x.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    (z ^ (z >> 31)) as u32
}

impl Tree {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, t: TaskId) -> bool {
        self.nodes.get(t).is_some_and(|n| n.linked)
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        (x.deadline, x.seq) < (y.deadline, y.seq)
    }

    #[inline]
    fn pull(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let mut m = n.vruntime;
        if n.left != NIL {
            m = m.min(self.nodes[n.left as usize].min_v);
        }
        if n.right != NIL {
            m = m.min(self.nodes[n.right as usize].min_v);
        }
        self.nodes[i as usize].min_v = m;
    }

    /// Insert `t` behind every entity with the same deadline.
    pub fn insert(&mut self, t: TaskId, deadline: i64, vruntime: i64) {
        debug_assert!(!self.contains(t), "task {t} is already in the tree");
        if t >= self.nodes.len() {
            let len = (t + 1).max(2 * self.nodes.len()).max(16);
            self.nodes.resize(len, Node::default());
        }
        self.seq += 1;
        self.nodes[t] = Node {
            left: NIL,
            right: NIL,
            prio: mix(self.seq),
            deadline,
            seq: self.seq,
            vruntime,
            min_v: vruntime,
            linked: true,
        };
        self.root = self.insert_at(self.root, t as u32);
        self.len += 1;
    }

    fn insert_at(&mut self, at: u32, x: u32) -> u32 {
        if at == NIL {
            return x;
        }
        if self.nodes[x as usize].prio > self.nodes[at as usize].prio {
            let (l, r) = self.split(at, x);
            self.nodes[x as usize].left = l;
            self.nodes[x as usize].right = r;
            self.pull(x);
            return x;
        }
        if self.less(x, at) {
            let l = self.insert_at(self.nodes[at as usize].left, x);
            self.nodes[at as usize].left = l;
        } else {
            let r = self.insert_at(self.nodes[at as usize].right, x);
            self.nodes[at as usize].right = r;
        }
        #[cfg(test)]
        if self.stale_on_remove {
            return at;
        }
        self.pull(at);
        at
    }

    /// Split the subtree at `at` into the nodes before `x` and the nodes after it.
    fn split(&mut self, at: u32, x: u32) -> (u32, u32) {
        if at == NIL {
            return (NIL, NIL);
        }
        if self.less(at, x) {
            let (l, r) = self.split(self.nodes[at as usize].right, x);
            self.nodes[at as usize].right = l;
            self.pull(at);
            (at, r)
        } else {
            let (l, r) = self.split(self.nodes[at as usize].left, x);
            self.nodes[at as usize].left = r;
            self.pull(at);
            (l, at)
        }
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio > self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.pull(b);
            b
        }
    }

    /// Take `t` out; false if it was not in the tree.
    pub fn remove(&mut self, t: TaskId) -> bool {
        if !self.contains(t) {
            return false;
        }
        self.root = self.remove_at(self.root, t as u32);
        self.nodes[t].linked = false;
        self.len -= 1;
        true
    }

    fn remove_at(&mut self, at: u32, x: u32) -> u32 {
        debug_assert!(at != NIL, "a linked node is reachable");
        if at == x {
            let n = self.nodes[x as usize];
            return self.merge(n.left, n.right);
        }
        if self.less(x, at) {
            let l = self.remove_at(self.nodes[at as usize].left, x);
            self.nodes[at as usize].left = l;
        } else {
            let r = self.remove_at(self.nodes[at as usize].right, x);
            self.nodes[at as usize].right = r;
        }
        #[cfg(test)]
        if self.stale_on_remove {
            return at;
        }
        self.pull(at);
        at
    }

    /// The earliest virtual deadline among entities whose vruntime `eligible` accepts
    /// (`pick_eevdf()`'s search; the kernel first tries the leftmost entity, which this search
    /// reaches anyway when it is eligible).
    #[inline]
    pub fn pick(&self, eligible: impl Fn(i64) -> bool) -> Option<TaskId> {
        let mut node = self.root;
        while node != NIL {
            let n = &self.nodes[node as usize];
            if n.left != NIL && eligible(self.nodes[n.left as usize].min_v) {
                node = n.left;
                continue;
            }
            if eligible(n.vruntime) {
                return Some(node as TaskId);
            }
            node = n.right;
        }
        None
    }

    /// Every entity in deadline order (for picks that must also honour CPU affinity, and tests).
    pub fn in_order(&self) -> Vec<TaskId> {
        let mut out = Vec::with_capacity(self.len);
        let mut stack = Vec::new();
        let mut node = self.root;
        while node != NIL || !stack.is_empty() {
            while node != NIL {
                stack.push(node);
                node = self.nodes[node as usize].left;
            }
            let n = stack.pop().expect("non-empty");
            out.push(n as TaskId);
            node = self.nodes[n as usize].right;
        }
        out
    }

    /// The deadline and vruntime `t` was inserted with.
    pub fn key_of(&self, t: TaskId) -> (i64, i64) {
        let n = &self.nodes[t];
        (n.deadline, n.vruntime)
    }

    /// The least vruntime in the tree.
    pub fn min_vruntime(&self) -> Option<i64> {
        (self.root != NIL).then(|| self.nodes[self.root as usize].min_v)
    }
}

/// One entity of the short form of the timeline (its place in the array is its order).
#[derive(Debug, Clone, Copy)]
struct Entry {
    deadline: i64,
    vruntime: i64,
    task: u32,
}

/// Run queues are mostly short: up to [`Timeline::BIG`] entities the timeline is a sorted
/// array (a pick scans it from the earliest deadline to the first eligible entity; an entry is
/// placed by moving its neighbours one step at a time until it fits, as insertion sort does),
/// which costs a few dozen instructions; beyond that it
/// becomes the [`Tree`] (O(log n) for everything), and back to the array below
/// [`Timeline::SMALL`]. Both keep the same order, so a pick does not depend on the form.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    small: Vec<Entry>,
    tree: Option<Tree>,
    /// Per task: in the array form?
    in_small: Vec<bool>,
    /// Where the last pick found its entry in the array: the entry a removal most often wants.
    hint: Cell<usize>,
}

impl Timeline {
    /// Above this many entities the array becomes a tree.
    pub const BIG: usize = 96;
    /// Below this many the tree becomes an array again.
    pub const SMALL: usize = 32;

    pub fn len(&self) -> usize {
        self.tree.as_ref().map_or(self.small.len(), Tree::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, t: TaskId) -> bool {
        match &self.tree {
            Some(tree) => tree.contains(t),
            None => self.in_small.get(t).copied().unwrap_or(false),
        }
    }

    /// Put `e` at index `at` of the array, whose entry there is free (a copy of a neighbour or
    /// the one going out), then move it past its neighbours until it stands behind every entry
    /// with a deadline not later than its own and before every later one. On these short arrays
    /// this one pass beats a binary search followed by a block move: most entries go near
    /// where they start (a new deadline is mostly the latest, so it starts at the back).
    #[inline]
    fn settle(&mut self, mut at: usize, e: Entry) {
        let a = &mut self.small[..];
        while at + 1 < a.len() && a[at + 1].deadline <= e.deadline {
            a[at] = a[at + 1];
            at += 1;
        }
        while at > 0 && a[at - 1].deadline > e.deadline {
            a[at] = a[at - 1];
            at -= 1;
        }
        a[at] = e;
    }

    #[inline]
    fn mark(&mut self, t: TaskId, on: bool) {
        if t >= self.in_small.len() {
            let len = (t + 1).max(2 * self.in_small.len()).max(16);
            self.in_small.resize(len, false);
        }
        self.in_small[t] = on;
    }

    /// Insert `t` behind every entity with the same deadline.
    pub fn insert(&mut self, t: TaskId, deadline: i64, vruntime: i64) {
        if let Some(tree) = &mut self.tree {
            tree.insert(t, deadline, vruntime);
            return;
        }
        debug_assert!(!self.contains(t), "task {t} is already in the timeline");
        let e = Entry { deadline, vruntime, task: t as u32 };
        self.small.push(e);
        self.settle(self.small.len() - 1, e);
        self.mark(t, true);
        if self.small.len() > Self::BIG {
            self.grow();
        }
    }

    #[cold]
    fn grow(&mut self) {
        let mut tree = Tree::default();
        for e in std::mem::take(&mut self.small) {
            tree.insert(e.task as TaskId, e.deadline, e.vruntime);
            self.in_small[e.task as usize] = false;
        }
        self.tree = Some(tree);
    }

    #[cold]
    fn shrink(&mut self) {
        let tree = self.tree.take().expect("a tree");
        for t in tree.in_order() {
            let (deadline, vruntime) = tree.key_of(t);
            self.small.push(Entry { deadline, vruntime, task: t as u32 });
            self.mark(t, true);
        }
    }

    /// Where `t` is in the array: where the last pick found it, or else found by a scan from
    /// the front (picks take entries near the front).
    #[inline]
    fn index(&self, t: TaskId) -> usize {
        let h = self.hint.get();
        if self.small.get(h).is_some_and(|e| e.task as TaskId == t) {
            return h;
        }
        self.small.iter().position(|e| e.task as TaskId == t).expect("a marked task is in the array")
    }

    /// Take `t` out; false if it was not there.
    pub fn remove(&mut self, t: TaskId) -> bool {
        if let Some(tree) = &mut self.tree {
            let removed = tree.remove(t);
            if tree.len() < Self::SMALL {
                self.shrink();
            }
            return removed;
        }
        if !self.contains(t) {
            return false;
        }
        let at = self.index(t);
        self.small.remove(at);
        self.in_small[t] = false;
        true
    }

    /// Take `out` out and put `t` in: a switch of current entity, `put_prev_entity()` then
    /// `set_next_entity()`. In the array form the entries between the two places move once.
    pub fn replace(&mut self, out: TaskId, t: TaskId, deadline: i64, vruntime: i64) {
        if self.tree.is_some() || !self.contains(out) {
            self.insert(t, deadline, vruntime);
            self.remove(out);
            return;
        }
        debug_assert!(!self.contains(t), "task {t} is already in the timeline");
        let i = self.index(out);
        self.settle(i, Entry { deadline, vruntime, task: t as u32 });
        self.in_small[out] = false;
        self.mark(t, true);
    }

    /// The earliest virtual deadline among entities whose vruntime `eligible` accepts.
    #[inline]
    pub fn pick(&self, eligible: impl Fn(i64) -> bool) -> Option<TaskId> {
        match &self.tree {
            Some(tree) => tree.pick(eligible),
            None => {
                let i = self.small.iter().position(|e| eligible(e.vruntime))?;
                self.hint.set(i);
                Some(self.small[i].task as TaskId)
            }
        }
    }

    /// The entity with the earliest deadline.
    #[inline]
    pub fn first(&self) -> Option<TaskId> {
        self.pick(|_| true)
    }

    /// Every entity in deadline order.
    pub fn in_order(&self) -> Vec<TaskId> {
        match &self.tree {
            Some(tree) => tree.in_order(),
            None => self.small.iter().map(|e| e.task as TaskId).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_deadlines_keep_insertion_order_and_pick_skips_ineligible() {
        let mut t = Tree::default();
        t.insert(3, 10, 5);
        t.insert(1, 10, 1);
        t.insert(2, 5, 9);
        t.insert(7, 20, 0);
        assert_eq!(t.in_order(), vec![2, 3, 1, 7]);
        // Eligible = vruntime <= 5: 3 (deadline 10, first of the two) beats 1 and 7.
        assert_eq!(t.pick(|v| v <= 5), Some(3));
        assert_eq!(t.pick(|v| v <= 0), Some(7));
        assert_eq!(t.pick(|v| v < 0), None);
        assert_eq!(t.min_vruntime(), Some(0));
        assert!(t.remove(3) && !t.remove(3));
        assert_eq!(t.pick(|v| v <= 5), Some(1));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn the_timeline_becomes_a_tree_and_back_keeping_its_order() {
        let mut t = Timeline::default();
        // Deadlines 0, 1, 2, 0, 1, 2, ...: ties keep insertion order across both forms.
        for id in 0..200 {
            t.insert(id, (id % 3) as i64, id as i64);
            assert_eq!(t.tree.is_some(), id >= Timeline::BIG);
        }
        let order = t.in_order();
        assert_eq!(&order[..3], &[0, 3, 6]);
        for id in (0..200).filter(|id| id % 2 == 1) {
            assert!(t.remove(id));
        }
        assert!(t.tree.is_some(), "100 left");
        for id in (0..200).filter(|id| id % 2 == 0 && *id >= 60) {
            assert!(t.remove(id));
        }
        assert!(t.tree.is_none(), "30 left: an array again");
        let expect: Vec<usize> = order.into_iter().filter(|id| id % 2 == 0 && *id < 60).collect();
        assert_eq!(t.in_order(), expect);
        t.insert(500, 0, -1);
        assert_eq!(t.in_order().iter().position(|&x| x == 500), Some(10), "behind the ten with deadline 0");
        assert_eq!(t.pick(|v| v < 0), Some(500));
    }

    proptest! {
        /// The timeline (array, tree, and the switches between them) against a sorted list.
        #[test]
        fn timeline_matches_a_sorted_list(ops in prop::collection::vec((0usize..300, -50i64..50, -50i64..50, 0u8..3), 1..1500),
                                          limit in -50i64..50) {
            let mut t = Timeline::default();
            let mut list: Vec<(i64, u64, usize, i64)> = Vec::new();
            let mut seq = 0;
            for (id, d, v, op) in ops {
                if op > 0 && !t.contains(id) {
                    seq += 1;
                    t.insert(id, d, v);
                    list.push((d, seq, id, v));
                } else if op == 0 {
                    let was = list.iter().position(|e| e.2 == id);
                    prop_assert_eq!(t.remove(id), was.is_some());
                    if let Some(p) = was {
                        list.remove(p);
                    }
                }
                list.sort();
                prop_assert_eq!(t.len(), list.len());
                prop_assert_eq!(t.in_order(), list.iter().map(|e| e.2).collect::<Vec<_>>());
                prop_assert_eq!(t.pick(|x| x <= limit), list.iter().find(|e| e.3 <= limit).map(|e| e.2));
            }
        }

        /// Against a sorted list: same order, same pick, same least vruntime after any sequence.
        #[test]
        fn matches_a_sorted_list((ops, limit) in tree_ops()) {
            tree_matches_a_sorted_list(Tree::default(), &ops, limit)?;
        }
    }

    type TreeOp = (usize, i64, i64, bool);

    fn tree_ops() -> impl Strategy<Value = (Vec<TreeOp>, i64)> {
        (prop::collection::vec((0usize..40, -50i64..50, -50i64..50, any::<bool>()), 1..300), -50i64..50)
    }

    fn tree_matches_a_sorted_list(mut t: Tree, ops: &[TreeOp], limit: i64) -> Result<(), TestCaseError> {
        let mut list: Vec<(i64, u64, usize, i64)> = Vec::new();
        let mut seq = 0;
        for &(id, d, v, ins) in ops {
            if ins && !t.contains(id) {
                seq += 1;
                t.insert(id, d, v);
                list.push((d, seq, id, v));
            } else if !ins {
                let was = list.iter().position(|e| e.2 == id);
                prop_assert_eq!(t.remove(id), was.is_some());
                if let Some(p) = was {
                    list.remove(p);
                }
            }
            list.sort();
            prop_assert_eq!(t.in_order(), list.iter().map(|e| e.2).collect::<Vec<_>>());
            prop_assert_eq!(t.pick(|x| x <= limit), list.iter().find(|e| e.3 <= limit).map(|e| e.2));
            prop_assert_eq!(t.min_vruntime(), list.iter().map(|e| e.3).min());
        }
        Ok(())
    }

    #[test]
    fn the_sorted_list_check_catches_stale_subtree_minima() {
        // The negative control: a tree that does not refresh the minima after a removal (what
        // the kernel's min_vruntime_cb is for) picks or reports wrongly, and the check sees it.
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let broken = runner.run(&tree_ops(), |(ops, limit)| {
            tree_matches_a_sorted_list(Tree { stale_on_remove: true, ..Tree::default() }, &ops, limit)
        });
        assert!(broken.is_err(), "the check passed a tree with stale minima");
    }
}
