//! Iteration order of Java's `HashMap`/`HashSet`, reproduced. Kafka 4.0's
//! `kafka-consumer-groups.sh` prints several listings straight out of hash maps (group lists,
//! reset plans, the rows of one member in `--describe`), so matching its output row for row
//! means iterating in the order those maps would.
//!
//! A `HashMap` iterates bucket by bucket (`spread(hash) & (capacity - 1)`), and within a bucket
//! in insertion order (a resize splits buckets but keeps their relative order). So the order is
//! a stable sort of the insertion sequence by final bucket; what varies is the capacity, which
//! depends on how the map was built. (Buckets that turn into trees, 8+ colliding keys in a map of
//! 64+ buckets, are not modelled.)

use std::collections::HashSet;
use std::hash::Hash;

use crate::client::TopicPartition;

/// Java's `String.hashCode()` over UTF-16 code units.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`.
pub fn topic_partition_hash(tp: &TopicPartition) -> i32 {
    31i32
        .wrapping_add(tp.partition)
        .wrapping_mul(31)
        .wrapping_add(string_hash(&tp.topic))
}

/// `HashMap.hash()`: the high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the next power of two, at least 1.
fn table_size_for(cap: usize) -> usize {
    cap.max(1).next_power_of_two()
}

/// How the Java map was created; decides its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construction {
    /// `new HashMap<>()`, `new HashSet<>()`, `Collectors.toMap`, `Collectors.toSet`.
    Default,
    /// `new HashMap<>(n)`.
    WithCapacity(usize),
    /// `new HashMap<>(otherMap)` of `n` entries (`putMapEntries` sizing).
    CopyOf(usize),
    /// `new HashSet<>(collection)` of `n` elements.
    HashSetOf(usize),
}

/// A model of one Java hash map: only which keys it holds, in which order they were first put,
/// and its table size.
#[derive(Debug, Clone)]
pub struct JavaHashMap<K> {
    keys: Vec<(K, i32)>,
    seen: HashSet<K>,
    capacity: usize,
    threshold: usize,
}

impl<K: Clone + Eq + Hash> JavaHashMap<K> {
    /// An empty map built the way `construction` says.
    pub fn new(construction: Construction) -> Self {
        let threshold = match construction {
            Construction::Default => 0,
            Construction::WithCapacity(n) => table_size_for(n),
            Construction::CopyOf(n) => {
                if n == 0 {
                    0
                } else {
                    // (int) (n / 0.75f + 1.0f), as Java computes it in float.
                    let t = (n as f32 / 0.75f32 + 1.0f32) as usize;
                    table_size_for(t)
                }
            }
            Construction::HashSetOf(n) => {
                table_size_for(((n as f32 / 0.75f32) as usize + 1).max(16))
            }
        };
        JavaHashMap {
            keys: Vec::new(),
            seen: HashSet::new(),
            capacity: 0,
            threshold,
        }
    }

    /// `put(key, _)`: a new key is appended; an existing key keeps its place.
    pub fn put(&mut self, key: K, hash: i32) {
        if !self.seen.insert(key.clone()) {
            return;
        }
        if self.capacity == 0 {
            self.capacity = if self.threshold > 0 {
                self.threshold
            } else {
                16
            };
            self.threshold = self.capacity * 3 / 4;
        }
        self.keys.push((key, hash));
        if self.keys.len() > self.threshold {
            self.capacity *= 2;
            self.threshold = self.capacity * 3 / 4;
        }
    }

    /// The table size after the puts so far.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Keys in Java's iteration order.
    pub fn iteration_order(&self) -> Vec<K> {
        let mask = self.capacity.max(1) - 1;
        let mut indexed: Vec<(usize, usize, &K)> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, (k, h))| ((spread(*h) as usize) & mask, i, k))
            .collect();
        indexed.sort_by_key(|(bucket, i, _)| (*bucket, *i));
        indexed.into_iter().map(|(_, _, k)| k.clone()).collect()
    }
}

/// The iteration order of a Java map built by putting `keys` in order.
pub fn order_by<K: Clone + Eq + Hash>(
    construction: Construction,
    keys: impl IntoIterator<Item = K>,
    hash: impl Fn(&K) -> i32,
) -> Vec<K> {
    let mut map = JavaHashMap::new(construction);
    for k in keys {
        let h = hash(&k);
        map.put(k, h);
    }
    map.iteration_order()
}

/// Iteration order of a `HashMap<String, _>` filled with `keys` in order.
pub fn strings(construction: Construction, keys: impl IntoIterator<Item = String>) -> Vec<String> {
    order_by(construction, keys, |k| string_hash(k))
}

/// Iteration order of a `HashMap<TopicPartition, _>` filled with `keys` in order.
pub fn topic_partitions(
    construction: Construction,
    keys: impl IntoIterator<Item = TopicPartition>,
) -> Vec<TopicPartition> {
    order_by(construction, keys, topic_partition_hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("Aa"), string_hash("BB"));
        // "hello".hashCode() == 99162322 in Java.
        assert_eq!(string_hash("hello"), 99_162_322);
        // Overflow wraps as in Java: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
        assert_eq!(string_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn topic_partition_hash_matches_kafka() {
        let tp = TopicPartition::new("a", 0);
        assert_eq!(topic_partition_hash(&tp), 31 * 31 + 97);
    }

    #[test]
    fn small_maps_iterate_by_bucket_then_insertion() {
        let order = strings(
            Construction::Default,
            ["c", "a", "b"].iter().map(|s| s.to_string()),
        );
        assert_eq!(order, vec!["a", "b", "c"]);
        // "q" (113) lands in bucket 1 of 16, with "a" (97): insertion order decides.
        let order = strings(
            Construction::Default,
            ["q", "b", "a"].iter().map(|s| s.to_string()),
        );
        assert_eq!(order, vec!["q", "a", "b"]);
    }

    #[test]
    fn capacity_follows_java_resizing() {
        let mut m = JavaHashMap::new(Construction::Default);
        for i in 0..12 {
            m.put(i, i);
        }
        assert_eq!(m.capacity(), 16);
        m.put(12, 12);
        assert_eq!(m.capacity(), 32);
        let mut c = JavaHashMap::new(Construction::CopyOf(12));
        c.put(0, 0);
        assert_eq!(c.capacity(), 32);
        let mut w = JavaHashMap::new(Construction::WithCapacity(3));
        for i in 0..3 {
            w.put(i, i);
        }
        assert_eq!(w.capacity(), 4);
        w.put(3, 3);
        assert_eq!(w.capacity(), 8);
        let mut s = JavaHashMap::new(Construction::HashSetOf(2));
        s.put(0, 0);
        assert_eq!(s.capacity(), 16);
    }

    #[test]
    fn partitions_of_one_topic_come_out_as_java_iterates_them() {
        // "t".hashCode() = 116, so partition p hashes to 1077 + 31p: buckets 5, 4, 3, 2 of 16.
        let keys: Vec<TopicPartition> = (0..4).map(|p| TopicPartition::new("t", p)).collect();
        let order: Vec<i32> = topic_partitions(Construction::Default, keys)
            .into_iter()
            .map(|tp| tp.partition)
            .collect();
        assert_eq!(order, vec![3, 2, 1, 0]);
    }
}
