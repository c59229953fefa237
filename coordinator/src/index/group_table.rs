//! The groups of a shard, in group-id order, packed for millions of small groups.
//!
//! ```text
//!   GroupTable { skip }                  every id shares its first `skip` bytes
//!     .chunks: Vec<Chunk>                in id order: every id of a chunk sorts below the next's
//!        Chunk.first_key: u64            8 bytes of the chunk's first id past the table's `skip`
//!        Chunk.names: String             the chunk's ids, concatenated in id order
//!        Chunk.index: Vec<IdIndex>       per group, in id order:
//!             IdIndex { key, end }       4 bytes of its id past the chunk's shared prefix;
//!                                        its id is names[previous end .. end]
//!        Chunk.values: Vec<V>            one per group, in id order, at most CHUNK_MAX
//! ```
//!
//! Why not `BTreeMap<GroupId, V>`: with one offset per group the map itself was the cost
//! (205 bytes a group, measured): a `String` key is 24 bytes plus a heap block of its own
//! (32 bytes for a 21-byte id), and B-tree leaves filled in key order, as a snapshot restore
//! fills them, stay about half empty. Here an id costs its bytes plus 8 (its 4-byte key and
//! 4-byte end, kept apart from the values so that an 8-aligned value gets no padding); a chunk filled in
//! key order is closed full (see `make_room`) and buffers grow by an eighth, so slack stays
//! small whatever the order.
//!
//! A lookup is a binary search over the chunks' first keys, then over one chunk's keys: ids
//! such as `consumer-group-000123` share long prefixes, so comparing the bytes right after
//! the shared prefix as one integer settles almost every step without touching the ids; only
//! equal keys compare the ids themselves. An insertion or removal moves at most one chunk.

use std::cmp::Ordering;
use std::fmt;

/// Most groups in one chunk: bounds the bytes an insertion or removal moves.
const CHUNK_MAX: usize = 64;
/// A chunk this small is merged into a neighbour, so deletions cannot leave the table as
/// many nearly-empty chunks.
const CHUNK_MERGE_BELOW: usize = CHUNK_MAX / 4;
/// Longest id the table stores: a chunk's ids then always fit the `u32` ends. Decide refuses
/// ids over `Config::group_id_max_bytes` (1 KiB by default) long before this.
pub(crate) const ID_MAX_BYTES: usize = (u32::MAX as usize) / (CHUNK_MAX + 1);

#[derive(Clone)]
struct Chunk<V> {
    /// `key8` of the first id past the table's shared prefix (`GroupTable::skip`): most
    /// chunk-level comparisons of a lookup end here, without reaching into `names`.
    first_key: u64,
    /// Length of a prefix all of this chunk's ids share (the longest when last computed).
    skip: usize,
    /// One per group, in id order.
    index: Vec<IdIndex>,
    names: String,
    values: Vec<V>,
}

/// Where a group's id is, and its search key. Kept apart from the values: in one array of 8
/// bytes a group, and an 8-aligned value next to a `u32` would be padded by 4.
#[derive(Clone, Copy)]
struct IdIndex {
    /// `key4` of the id past the chunk's `skip`: most comparisons of a search within the
    /// chunk end on these 4 bytes, in one small contiguous array.
    key: u32,
    /// End of the id in `names`; it starts where the previous one ends.
    end: u32,
}

/// The first bytes of `suffix`, zero-padded, as a big-endian number. When two ids share a
/// prefix and the keys of what follows differ, the keys order the ids as their bytes do (a
/// zero pad sorts an id before its extensions); only equal keys need the full comparison.
fn key8(suffix: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    for (to, from) in bytes.iter_mut().zip(suffix) {
        *to = *from;
    }
    u64::from_be_bytes(bytes)
}

fn key4(suffix: &[u8]) -> u32 {
    let mut bytes = [0u8; 4];
    for (to, from) in bytes.iter_mut().zip(suffix) {
        *to = *from;
    }
    u32::from_be_bytes(bytes)
}

fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Bytes past `skip`, or nothing.
fn past(name: &[u8], skip: usize) -> &[u8] {
    name.get(skip..).unwrap_or_default()
}

/// Grows a buffer that is full by an eighth (at least `min`), not by doubling: chunks are
/// small and many, and doubling would leave a quarter of them empty on average.
fn grow_gently(len: usize, capacity: usize, needed: usize, min: usize) -> Option<usize> {
    (capacity - len < needed).then(|| needed.max(len / 8).max(min))
}

impl<V> Chunk<V> {
    fn new() -> Chunk<V> {
        Chunk {
            first_key: 0,
            skip: 0,
            index: Vec::new(),
            names: String::new(),
            values: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn name_end(&self, at: usize) -> usize {
        self.index.get(at).map_or(0, |i| i.end as usize)
    }

    fn name_start(&self, at: usize) -> usize {
        match at.checked_sub(1) {
            None => 0,
            Some(previous) => self.name_end(previous),
        }
    }

    /// The id at `at` as bytes, for comparisons: `str` orders by bytes, and this skips the
    /// char-boundary checks of slicing a `str`.
    fn name_bytes(&self, at: usize) -> &[u8] {
        let end = self.name_end(at);
        self.names
            .as_bytes()
            .get(self.name_start(at)..end)
            .unwrap_or_default()
    }

    fn first_name(&self) -> &[u8] {
        self.names
            .as_bytes()
            .get(..self.name_end(0))
            .unwrap_or_default()
    }

    fn last_name(&self) -> &[u8] {
        self.name_bytes(self.len().saturating_sub(1))
    }

    /// `first_name() <= name`; `key` is `Some(key8(name past the table's prefix))` when
    /// `name` has that prefix.
    fn starts_at_or_before(&self, name: &[u8], key: Option<u64>) -> bool {
        match key.map(|key| self.first_key.cmp(&key)) {
            Some(Ordering::Less) => true,
            Some(Ordering::Greater) => false,
            Some(Ordering::Equal) | None => self.first_name() <= name,
        }
    }

    fn refresh_first_key(&mut self, table_skip: usize) {
        self.first_key = key8(past(self.first_name(), table_skip));
    }

    /// Recomputes `skip` as the longest shared prefix (that of the first and last ids, the
    /// ids being sorted) and every key.
    fn refresh_keys(&mut self) {
        self.skip = common_prefix_len(self.first_name(), self.last_name());
        for at in 0..self.len() {
            let key = key4(past(self.name_bytes(at), self.skip));
            if let Some(i) = self.index.get_mut(at) {
                i.key = key;
            }
        }
    }

    /// Where `name` is (`Ok`) or would be inserted (`Err`).
    fn search(&self, name: &[u8]) -> Result<usize, usize> {
        let shares_prefix = match (name.get(..self.skip), self.first_name().get(..self.skip)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        let key = shares_prefix.then(|| key4(past(name, self.skip)));
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let order = match (key, self.index.get(mid)) {
                (Some(key), Some(i)) => i.key.cmp(&key),
                _ => Ordering::Equal,
            }
            .then_with(|| self.name_bytes(mid).cmp(name));
            match order {
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }

    /// `name` is at most `ID_MAX_BYTES` long and the chunk holds fewer than `CHUNK_MAX` ids,
    /// so every end fits a `u32`.
    fn insert(&mut self, at: usize, name: &str, value: V) {
        if let Some(more) = grow_gently(self.len(), self.values.capacity(), 1, 4) {
            self.values.reserve_exact(more);
            self.index.reserve_exact(more);
        }
        if let Some(more) = grow_gently(self.names.len(), self.names.capacity(), name.len(), 32) {
            self.names.reserve_exact(more);
        }
        let start = self.name_start(at);
        let len = u32::try_from(name.len()).unwrap_or(u32::MAX);
        self.names.insert_str(start, name);
        for later in self.index.get_mut(at..).unwrap_or_default() {
            later.end += len;
        }
        let end = u32::try_from(start + name.len()).unwrap_or(u32::MAX);
        let key = key4(past(name.as_bytes(), self.skip));
        self.index.insert(at, IdIndex { key, end });
        self.values.insert(at, value);
        let at_an_end = at == 0 || at + 1 == self.len();
        let shared = common_prefix_len(self.first_name(), self.last_name());
        if self.len() == 1 || (at_an_end && shared < self.skip) {
            self.refresh_keys();
        }
    }

    fn remove(&mut self, at: usize) -> Option<V> {
        if at >= self.len() {
            return None;
        }
        let start = self.name_start(at);
        let end = self.index.remove(at).end;
        let value = self.values.remove(at);
        let len = end - u32::try_from(start).unwrap_or(end);
        self.names.replace_range(start..end as usize, "");
        for later in self.index.get_mut(at..).unwrap_or_default() {
            later.end -= len;
        }
        Some(value)
    }

    /// Moves the groups from `at` on into a new chunk.
    fn split_off(&mut self, at: usize, table_skip: usize) -> Chunk<V> {
        let start = self.name_start(at);
        let names = self.names.split_off(start);
        let values = self.values.split_off(at);
        let mut index = self.index.split_off(at);
        let start = u32::try_from(start).unwrap_or(0);
        for i in &mut index {
            i.end -= start;
        }
        self.refresh_keys();
        self.shrink();
        let mut right = Chunk {
            first_key: 0,
            skip: 0,
            index,
            names,
            values,
        };
        right.refresh_keys();
        right.refresh_first_key(table_skip);
        right
    }

    /// Appends `other`, whose ids all sort after this chunk's.
    fn append(&mut self, other: Chunk<V>) {
        let base = u32::try_from(self.names.len()).unwrap_or(0);
        self.names.push_str(&other.names);
        self.index.extend(other.index.iter().map(|i| IdIndex {
            key: i.key,
            end: i.end + base,
        }));
        self.values.extend(other.values);
        self.refresh_keys();
    }

    fn shrink(&mut self) {
        self.names.shrink_to_fit();
        self.index.shrink_to_fit();
        self.values.shrink_to_fit();
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        self.index
            .iter()
            .zip(&self.values)
            .scan(0, move |start, (i, value)| {
                let end = i.end as usize;
                let name = self.names.get(*start..end).unwrap_or_default();
                *start = end;
                Some((name, value))
            })
    }
}

/// An ordered map from group id to `V` (see the module docs for the layout).
#[derive(Clone)]
pub(crate) struct GroupTable<V> {
    chunks: Vec<Chunk<V>>,
    len: usize,
    /// Length of a prefix every id in the table shares: chunk keys start past it.
    skip: usize,
}

impl<V> Default for GroupTable<V> {
    fn default() -> Self {
        GroupTable {
            chunks: Vec::new(),
            len: 0,
            skip: 0,
        }
    }
}

impl<V> GroupTable<V> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The prefix every id shares.
    fn prefix(&self) -> &[u8] {
        self.chunks
            .first()
            .and_then(|c| c.first_name().get(..self.skip))
            .unwrap_or_default()
    }

    /// The chunk that holds `name` or would receive it, and the position in it.
    fn locate(&self, name: &str) -> Option<(usize, Result<usize, usize>)> {
        let name = name.as_bytes();
        let key =
            (name.get(..self.skip) == Some(self.prefix())).then(|| key8(past(name, self.skip)));
        let after = self
            .chunks
            .partition_point(|c| c.starts_at_or_before(name, key));
        let index = after.saturating_sub(1);
        let chunk = self.chunks.get(index)?;
        Some((index, chunk.search(name)))
    }

    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        let (chunk, Ok(at)) = self.locate(name)? else {
            return None;
        };
        self.chunks.get(chunk)?.values.get(at)
    }

    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut V> {
        let (chunk, Ok(at)) = self.locate(name)? else {
            return None;
        };
        self.chunks.get_mut(chunk)?.values.get_mut(at)
    }

    /// The value under `name`, inserted with `make` if absent. `None` only for an id over
    /// `ID_MAX_BYTES`, which is never stored.
    pub(crate) fn get_or_insert_with(
        &mut self,
        name: &str,
        make: impl FnOnce() -> V,
    ) -> Option<&mut V> {
        if name.len() > ID_MAX_BYTES {
            return None;
        }
        let located = self.locate(name);
        let skip = if self.len == 0 {
            name.len()
        } else {
            common_prefix_len(self.prefix(), name.as_bytes())
        };
        let (chunk, at) = match located {
            Some((chunk, Ok(at))) => return self.chunks.get_mut(chunk)?.values.get_mut(at),
            Some((chunk, Err(at))) => self.make_room(chunk, at),
            None => {
                self.chunks.push(Chunk::new());
                (0, 0)
            }
        };
        if skip != self.skip {
            self.skip = skip;
            for c in &mut self.chunks {
                c.refresh_first_key(skip);
            }
        }
        let c = self.chunks.get_mut(chunk)?;
        c.insert(at, name, make());
        c.refresh_first_key(skip);
        self.len += 1;
        if c.len() == CHUNK_MAX {
            // Full: give back the growth slack. A chunk filled in key order is then left
            // exactly full, and the next id starts a chunk of its own (`make_room`).
            c.shrink();
        }
        c.values.get_mut(at)
    }

    /// Where a new group goes that `locate` placed at position `at` of chunk `chunk`: there,
    /// unless that chunk is full, in which case a chunk is added or split.
    fn make_room(&mut self, chunk: usize, at: usize) -> (usize, usize) {
        let is_last = chunk + 1 == self.chunks.len();
        let Some(c) = self.chunks.get_mut(chunk) else {
            return (chunk, at);
        };
        if c.len() < CHUNK_MAX {
            return (chunk, at);
        }
        if at == CHUNK_MAX && is_last {
            // Past the largest id (a restore in key order): a new chunk, so the full one
            // stays full.
            self.chunks.push(Chunk::new());
            return (chunk + 1, 0);
        }
        if at == 0 && chunk == 0 {
            self.chunks.insert(0, Chunk::new());
            return (0, 0);
        }
        let half = CHUNK_MAX / 2;
        let right = c.split_off(half, self.skip);
        self.chunks.insert(chunk + 1, right);
        if at <= half {
            (chunk, at)
        } else {
            (chunk + 1, at - half)
        }
    }

    pub(crate) fn remove(&mut self, name: &str) -> Option<V> {
        let (chunk, Ok(at)) = self.locate(name)? else {
            return None;
        };
        let c = self.chunks.get_mut(chunk)?;
        let value = c.remove(at)?;
        c.refresh_first_key(self.skip);
        self.len -= 1;
        if self.len == 0 {
            self.skip = 0;
        }
        if c.len() == 0 {
            self.chunks.remove(chunk);
        } else if c.len() < CHUNK_MERGE_BELOW {
            self.merge_with_neighbour(chunk);
        } else if c.values.capacity() >= 2 * c.len() {
            c.shrink();
        }
        Some(value)
    }

    /// Merges a small chunk into a neighbour it fits with, the left one first.
    fn merge_with_neighbour(&mut self, chunk: usize) {
        let len = |i: usize| self.chunks.get(i).map(Chunk::len);
        let Some(small) = len(chunk) else { return };
        let fits = |other: Option<usize>| other.is_some_and(|n| n + small <= CHUNK_MAX);
        let left = if chunk > 0 && fits(len(chunk - 1)) {
            chunk - 1
        } else if fits(len(chunk + 1)) {
            chunk
        } else {
            return;
        };
        let right = self.chunks.remove(left + 1);
        if let Some(c) = self.chunks.get_mut(left) {
            c.append(right);
            c.shrink();
        }
    }

    /// Every (group id, value) in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        self.chunks.iter().flat_map(Chunk::iter)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.chunks.iter().flat_map(|c| c.values.iter())
    }
}

impl<V: fmt::Debug> fmt::Debug for GroupTable<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A small deterministic generator: the test prints its seed.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
    }

    fn check(table: &GroupTable<u64>, model: &BTreeMap<String, u64>) {
        assert_eq!(table.len(), model.len());
        let seen: Vec<(&str, u64)> = table.iter().map(|(k, v)| (k, *v)).collect();
        let expected: Vec<(&str, u64)> = model.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(seen, expected);
        let prefix = table.prefix().to_vec();
        for chunk in &table.chunks {
            assert!(chunk.len() > 0 && chunk.len() <= CHUNK_MAX);
            assert_eq!(chunk.first_key, key8(past(chunk.first_name(), table.skip)));
            assert_eq!(chunk.index.len(), chunk.len());
            let chunk_prefix = chunk.first_name().get(..chunk.skip).unwrap();
            for at in 0..chunk.len() {
                let name = chunk.name_bytes(at);
                assert!(name.starts_with(&prefix));
                assert!(name.starts_with(chunk_prefix));
                assert_eq!(chunk.index[at].key, key4(past(name, chunk.skip)));
            }
        }
    }

    #[test]
    fn behaves_as_an_ordered_map_under_random_operations() {
        for seed in [1u64, 2, 3, 4, 5, 0x5eed] {
            println!("seed {seed}");
            let mut rng = Lcg(seed);
            let mut table = GroupTable::default();
            let mut model = BTreeMap::new();
            for step in 0..20_000u64 {
                // Ids of varied lengths, the empty one and multi-byte characters included.
                let n = rng.next() % 600;
                // Some seeds use ids that all share a long prefix, with ties in the first
                // bytes past it, NULs that look like key padding, and ids that prefix others.
                let name = if seed % 2 == 0 {
                    match n % 5 {
                        0 => format!("g{n}"),
                        1 => format!("consumer-group-{n:06}"),
                        2 => format!("é{n}ü"),
                        3 if n == 3 => String::new(),
                        _ => format!("{n}"),
                    }
                } else {
                    match n % 4 {
                        0 => format!("service-instance-{}", n / 4),
                        1 => format!("service-instance-{}\0", n / 8),
                        2 => format!("service-instance-{}\0\0{}", n / 40, n % 3),
                        _ => format!("service-instance-1234567{n}"),
                    }
                };
                match rng.next() % 4 {
                    0 | 1 => {
                        *table.get_or_insert_with(&name, || 0).unwrap() += step;
                        *model.entry(name.clone()).or_insert(0) += step;
                    }
                    2 => assert_eq!(table.remove(&name), model.remove(&name), "seed {seed}"),
                    _ => {
                        assert_eq!(table.get(&name), model.get(&name), "seed {seed}");
                        if let Some(v) = table.get_mut(&name) {
                            *v += 1;
                            *model.get_mut(&name).unwrap() += 1;
                        }
                    }
                }
                if step % 250 == 0 {
                    check(&table, &model);
                }
            }
            check(&table, &model);
            let names: Vec<String> = model.keys().cloned().collect();
            for name in names {
                assert_eq!(table.remove(&name), model.remove(&name));
            }
            check(&table, &model);
            assert!(table.chunks.is_empty());
        }
    }

    #[test]
    fn ids_inserted_in_order_fill_chunks_completely() {
        let mut table = GroupTable::default();
        for i in 0..(CHUNK_MAX * 10) {
            table.get_or_insert_with(&format!("group-{i:06}"), || i);
        }
        assert_eq!(table.chunks.len(), 10);
        for chunk in &table.chunks {
            assert_eq!(chunk.len(), CHUNK_MAX);
            assert_eq!(chunk.values.capacity(), CHUNK_MAX);
            assert_eq!(chunk.index.capacity(), CHUNK_MAX);
            assert_eq!(chunk.names.capacity(), chunk.names.len());
        }
        // In reverse order too.
        let mut table = GroupTable::default();
        for i in (0..(CHUNK_MAX * 10)).rev() {
            table.get_or_insert_with(&format!("group-{i:06}"), || i);
        }
        assert_eq!(table.chunks.len(), 10);
        assert_eq!(table.get("group-000005"), Some(&5));
        // Ids outside the shared prefix "group-" are looked up and placed correctly too.
        for absent in ["", "a", "group", "group-", "group-0000050", "zzz"] {
            assert_eq!(table.get(absent), None, "{absent:?}");
        }
        *table.get_or_insert_with("a", || 0).unwrap() = 1_000_000;
        *table.get_or_insert_with("zzz", || 0).unwrap() = 2_000_000;
        assert_eq!(table.get("a"), Some(&1_000_000));
        assert_eq!(table.get("zzz"), Some(&2_000_000));
        assert_eq!(table.get("group-000639"), Some(&639));
        assert_eq!(table.iter().next().map(|(k, _)| k), Some("a"));
        assert_eq!(table.iter().last().map(|(k, _)| k), Some("zzz"));
    }

    #[test]
    fn removals_merge_small_chunks() {
        let mut table = GroupTable::default();
        let count = CHUNK_MAX * 20;
        for i in 0..count {
            table.get_or_insert_with(&format!("{i:05}"), || i);
        }
        for i in (0..count).filter(|i| i % 8 != 0) {
            assert_eq!(table.remove(&format!("{i:05}")), Some(i));
        }
        assert_eq!(table.len(), count / 8);
        // 160 groups left: without merging they would sit in 20 chunks of 8.
        assert!(table.chunks.len() <= 6, "{} chunks", table.chunks.len());
        for (name, value) in table.iter() {
            assert_eq!(name, format!("{value:05}"));
        }
    }
}
