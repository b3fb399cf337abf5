//! Sorting and top-k selection for the code the browser runs, with one copy of each algorithm.
//!
//! Each `sort_by` with its own closure or item type compiles its own copy of the standard
//! library's sorts (driftsort, ipnsort and their small-sort networks, several kB of wasm each;
//! the module held 26 of them). Here the sorting happens once, on `u32` positions under a
//! comparator behind `dyn`, and the items are then moved into that order: the wasm holds one
//! stable sort and one selection, whatever is sorted. The order is the standard stable sort's.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` by `cmp`, stable: equal items keep their order.
pub fn sort_by<T>(items: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = positions(items.len(), usize::MAX, &mut |a, b| {
        cmp(&items[a], &items[b])
    });
    arrange(items, order);
}

/// Sorts `items` ascending, stable.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Keeps the `k` first items under `cmp`, in that order. `cmp` should be a total order (break
/// ties by id), or which of equal items stay is not defined.
pub fn top_by<T>(items: &mut Vec<T>, k: usize, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = positions(items.len(), k, &mut |a, b| cmp(&items[a], &items[b]));
    arrange(items, order);
    items.truncate(k);
}

/// A set of `items`, built by insertion: collecting into a `BTreeSet` sorts them first, with one
/// more copy of the sort for each item type.
pub fn set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// A map of `entries`, built by insertion (as `set`); a repeated key keeps its last value.
pub fn map<K: Ord, V>(entries: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(entries);
    map
}

/// Every position of `0..n`, the `k` first under `cmp` first and sorted (stable when `k >= n`);
/// the rest after them in no particular order.
fn positions(n: usize, k: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<u32> {
    debug_assert!(n <= u32::MAX as usize);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut by = |a: &u32, b: &u32| cmp(*a as usize, *b as usize);
    if k == 0 {
        return order;
    }
    if k < n {
        order.select_nth_unstable_by(k - 1, &mut by);
    }
    order[..k.min(n)].sort_by(by);
    order
}

/// Moves `items[order[i]]` to `i`, following each cycle of the permutation once.
fn arrange<T>(items: &mut [T], mut order: Vec<u32>) {
    for start in 0..order.len() {
        let mut at = start;
        while order[at] != u32::MAX {
            let from = order[at] as usize;
            order[at] = u32::MAX;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_selects_as_the_standard_library_does() {
        let mut seed = 7u64;
        for n in [0usize, 1, 2, 3, 10, 33, 200] {
            let items: Vec<(u8, u32)> = (0..n as u32)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let by_key = |a: &(u8, u32), b: &(u8, u32)| b.0.cmp(&a.0);
            let mut expected = items.clone();
            expected.sort_by(by_key);
            let mut sorted = items.clone();
            sort_by(&mut sorted, by_key);
            assert_eq!(sorted, expected, "stable sort of {n}");
            let total = |a: &(u8, u32), b: &(u8, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
            for k in [0, 1, 5, n / 2, n, n + 3] {
                let mut top = items.clone();
                top_by(&mut top, k, total);
                assert_eq!(top, expected[..k.min(n)], "top {k} of {n}");
            }
        }
    }
}

/// Keeps the `k` best items, sorted best first; ties go to the lower id, so every target
/// returns the same order.
pub fn top_k<T>(items: &mut Vec<T>, k: usize, score: impl Fn(&T) -> f32, id: impl Fn(&T) -> u32) {
    top_by(items, k, |a, b| {
        score(b)
            .total_cmp(&score(a))
            .then_with(|| id(a).cmp(&id(b)))
    });
}
