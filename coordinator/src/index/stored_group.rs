//! How the state holds group records: a group with no member packed into the 8 bytes of its
//! slot, any other group boxed whole in a side store.
//!
//! ```text
//!   GroupEntry.group: GroupRef (u64)         8 bytes in the group's slot
//!        0                                   no record (a simple, offset-only group)
//!        01 | protocol type | generation | state timestamp
//!                                            Idle: Empty and nothing else, no allocation
//!        10 | index ─────▶ GroupStore.full[index]: Box<ClassicGroup>   ~240 bytes + strings
//! ```
//!
//! Why: a consumer group whose members all left keeps its record (Kafka keeps it for the
//! offsets retention), and that is the common shape of a group once its consumers stop. As
//! a boxed `ClassicGroup` it cost ~270 bytes, 355 bytes a key with one offset per group
//! (measured, `examples/index_memory.rs`). Such a group holds nothing but its state
//! timestamp, its generation and its protocol type, which is nearly always one of a few
//! names (`KnownProtocolType`): 61 bits. Packed, it costs nothing beyond the slot every group
//! has. The slot stays 8 bytes (a `Box` and an inline form in an enum would take 16, paid by
//! every group, simple ones included) because full groups sit in `GroupStore` and the slot
//! holds their index. A group whose timestamp or generation does not fit the packed fields
//! is stored in full: the packing never loses a value.
//!
//! The membership logic still sees a `ClassicGroup`: `GroupStore::group` lends the boxed one
//! or rebuilds the idle one (one small string allocation), so no handler knows about this.

use crate::ids::{Generation, TimestampMs};
use crate::record::consumer_group::ConsumerGroup;
use crate::record::group_metadata::{ClassicGroup, GroupState, CONSUMER_PROTOCOL_TYPE};
use std::borrow::Cow;

/// The protocol types an idle group can hold in 2 bits: the one every consumer client uses
/// (Kafka Streams included), Kafka Connect's and Schema Registry's. A group of any other
/// type is stored in full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KnownProtocolType {
    /// A group no member ever joined.
    Absent,
    Consumer,
    Connect,
    SchemaRegistry,
}

impl KnownProtocolType {
    fn from_name(name: Option<&str>) -> Option<KnownProtocolType> {
        Some(match name {
            None => KnownProtocolType::Absent,
            Some(CONSUMER_PROTOCOL_TYPE) => KnownProtocolType::Consumer,
            Some("connect") => KnownProtocolType::Connect,
            Some("sr") => KnownProtocolType::SchemaRegistry,
            Some(_) => return None,
        })
    }

    fn name(self) -> Option<&'static str> {
        match self {
            KnownProtocolType::Absent => None,
            KnownProtocolType::Consumer => Some(CONSUMER_PROTOCOL_TYPE),
            KnownProtocolType::Connect => Some("connect"),
            KnownProtocolType::SchemaRegistry => Some("sr"),
        }
    }

    fn bits(self) -> u64 {
        match self {
            KnownProtocolType::Absent => 0,
            KnownProtocolType::Consumer => 1,
            KnownProtocolType::Connect => 2,
            KnownProtocolType::SchemaRegistry => 3,
        }
    }

    fn from_bits(bits: u64) -> KnownProtocolType {
        match bits & 3 {
            0 => KnownProtocolType::Absent,
            1 => KnownProtocolType::Consumer,
            2 => KnownProtocolType::Connect,
            _ => KnownProtocolType::SchemaRegistry,
        }
    }
}

/// Bits of an idle group's state timestamp: milliseconds since 1970 up to the year 2248.
const TIMESTAMP_BITS: u32 = 43;
/// Bits of an idle group's generation: a group that rebalanced more often is stored in full.
const GENERATION_BITS: u32 = 16;
const PROTOCOL_SHIFT: u32 = TIMESTAMP_BITS + GENERATION_BITS;
const KIND_SHIFT: u32 = 62;
const KIND_IDLE: u64 = 1;
const KIND_FULL: u64 = 2;
/// A consumer-protocol group, boxed in `GroupStore::consumer`.
const KIND_CONSUMER: u64 = 3;

fn low_bits(value: u64, bits: u32) -> u64 {
    value & ((1u64 << bits) - 1)
}

/// A group's record, as its slot holds it (see the module docs for the encoding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupRef(u64);

/// What a `GroupRef` says.
enum Decoded {
    None,
    Idle {
        state_timestamp: TimestampMs,
        generation: Generation,
        protocol_type: KnownProtocolType,
    },
    Full(usize),
    Consumer(usize),
}

impl GroupRef {
    pub(crate) fn is_some(self) -> bool {
        self.0 != 0
    }

    fn full(index: u32) -> GroupRef {
        GroupRef(KIND_FULL << KIND_SHIFT | u64::from(index))
    }

    fn consumer(index: u32) -> GroupRef {
        GroupRef(KIND_CONSUMER << KIND_SHIFT | u64::from(index))
    }

    /// Whether the slot holds a consumer-protocol group.
    pub(crate) fn is_consumer(self) -> bool {
        self.0 >> KIND_SHIFT == KIND_CONSUMER
    }

    /// The packed form of `group` when it is idle and its fields fit.
    fn idle(group: &ClassicGroup) -> Option<GroupRef> {
        let ClassicGroup {
            state,
            state_timestamp,
            generation,
            protocol_type,
            protocol_name,
            leader,
            members,
            pending_members,
            pending_sync,
            initial_delay,
            new_member_added,
            join_deadline,
            sync_deadline,
        } = group;
        let idle = *state == GroupState::Empty
            && protocol_name.is_none()
            && leader.is_none()
            && members.is_empty()
            && pending_members.is_empty()
            && pending_sync.is_empty()
            && initial_delay.is_none()
            && !new_member_added
            && join_deadline.is_none()
            && sync_deadline.is_none();
        if !idle {
            return None;
        }
        let timestamp = u64::try_from(state_timestamp.0).ok()?;
        let generation = u64::try_from(generation.0).ok()?;
        if timestamp >> TIMESTAMP_BITS != 0 || generation >> GENERATION_BITS != 0 {
            return None;
        }
        let protocol_type = KnownProtocolType::from_name(protocol_type.as_deref())?;
        Some(GroupRef(
            KIND_IDLE << KIND_SHIFT
                | protocol_type.bits() << PROTOCOL_SHIFT
                | generation << TIMESTAMP_BITS
                | timestamp,
        ))
    }

    fn decode(self) -> Decoded {
        match self.0 >> KIND_SHIFT {
            KIND_IDLE => Decoded::Idle {
                // Both fit their types: they were packed from them.
                state_timestamp: TimestampMs(
                    i64::try_from(low_bits(self.0, TIMESTAMP_BITS)).unwrap_or(0),
                ),
                generation: Generation(
                    i32::try_from(low_bits(self.0 >> TIMESTAMP_BITS, GENERATION_BITS)).unwrap_or(0),
                ),
                protocol_type: KnownProtocolType::from_bits(self.0 >> PROTOCOL_SHIFT),
            },
            KIND_FULL => Decoded::Full(low_bits(self.0, 32) as usize),
            KIND_CONSUMER => Decoded::Consumer(low_bits(self.0, 32) as usize),
            _ => Decoded::None,
        }
    }
}

/// The full groups, each boxed, indexed by the `GroupRef`s that point at them. Indexes are
/// reused; which index a group gets depends on the order records were replayed in, and
/// nothing observable depends on it.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupStore {
    full: Vec<Option<Box<ClassicGroup>>>,
    free: Vec<u32>,
    /// Consumer-protocol groups, indexed by `KIND_CONSUMER` refs; indexes are reused too.
    consumer: Vec<Option<Box<ConsumerGroup>>>,
    consumer_free: Vec<u32>,
}

impl GroupStore {
    /// Makes `slot` hold `group`, replacing what it held.
    pub(crate) fn put(&mut self, slot: &mut GroupRef, group: &ClassicGroup) {
        if slot.is_consumer() {
            // A classic record replaces a consumer group (decide tombstones one type before
            // writing the other, so this only happens on a downgrade).
            self.remove(slot);
        }
        if let Some(idle) = GroupRef::idle(group) {
            self.remove(slot);
            *slot = idle;
            return;
        }
        if let Decoded::Full(index) = slot.decode() {
            if let Some(Some(existing)) = self.full.get_mut(index) {
                existing.as_mut().clone_from(group);
                return;
            }
        }
        let boxed = Some(Box::new(group.clone()));
        let index = match self.free.pop() {
            Some(index) => {
                if let Some(free) = self.full.get_mut(index as usize) {
                    *free = boxed;
                }
                index
            }
            None => {
                // More than 4 billion full groups would need terabytes first.
                let index = u32::try_from(self.full.len()).unwrap_or(u32::MAX);
                self.full.push(boxed);
                index
            }
        };
        *slot = GroupRef::full(index);
    }

    /// Empties `slot`, freeing what it pointed at.
    pub(crate) fn remove(&mut self, slot: &mut GroupRef) {
        if let Decoded::Consumer(index) = slot.decode() {
            if let Some(group) = self.consumer.get_mut(index) {
                if group.take().is_some() {
                    self.consumer_free
                        .push(u32::try_from(index).unwrap_or(u32::MAX));
                }
            }
            *slot = GroupRef::default();
            if self.consumer_free.len() == self.consumer.len() {
                self.consumer = Vec::new();
                self.consumer_free = Vec::new();
            }
            return;
        }
        if let Decoded::Full(index) = slot.decode() {
            if let Some(full) = self.full.get_mut(index) {
                if full.take().is_some() {
                    self.free.push(u32::try_from(index).unwrap_or(u32::MAX));
                }
            }
        }
        *slot = GroupRef::default();
        if self.free.len() == self.full.len() {
            // The last full group is gone: give the memory back.
            self.full = Vec::new();
            self.free = Vec::new();
        }
    }

    /// The group `slot` holds, as the membership logic sees it.
    pub(crate) fn group(&self, slot: GroupRef) -> Option<Cow<'_, ClassicGroup>> {
        match slot.decode() {
            Decoded::None => None,
            Decoded::Idle {
                state_timestamp,
                generation,
                protocol_type,
            } => {
                let mut group = ClassicGroup::new(state_timestamp);
                group.generation = generation;
                group.protocol_type = protocol_type.name().map(str::to_owned);
                Some(Cow::Owned(group))
            }
            Decoded::Full(index) => self.full_at(index).map(Cow::Borrowed),
            Decoded::Consumer(_) => None,
        }
    }

    /// The consumer-protocol group `slot` holds, if it holds one.
    pub(crate) fn consumer_group(&self, slot: GroupRef) -> Option<&ConsumerGroup> {
        match slot.decode() {
            Decoded::Consumer(index) => self.consumer.get(index)?.as_deref(),
            _ => None,
        }
    }

    /// The consumer-protocol group `slot` holds, made one first if it holds anything else
    /// (a consumer record replaces a classic group: decide tombstones it first on an upgrade).
    pub(crate) fn consumer_group_mut(&mut self, slot: &mut GroupRef) -> Option<&mut ConsumerGroup> {
        if !slot.is_consumer() {
            self.remove(slot);
            let boxed = Some(Box::default());
            let index = match self.consumer_free.pop() {
                Some(index) => {
                    if let Some(free) = self.consumer.get_mut(index as usize) {
                        *free = boxed;
                    }
                    index
                }
                None => {
                    let index = u32::try_from(self.consumer.len()).unwrap_or(u32::MAX);
                    self.consumer.push(boxed);
                    index
                }
            };
            *slot = GroupRef::consumer(index);
        }
        match slot.decode() {
            Decoded::Consumer(index) => self.consumer.get_mut(index)?.as_deref_mut(),
            _ => None,
        }
    }

    /// The group `slot` holds if it is stored in full: idle groups have no member and no
    /// deadline.
    pub(crate) fn full_group(&self, slot: GroupRef) -> Option<&ClassicGroup> {
        match slot.decode() {
            Decoded::Full(index) => self.full_at(index),
            Decoded::None | Decoded::Idle { .. } | Decoded::Consumer(_) => None,
        }
    }

    fn full_at(&self, index: usize) -> Option<&ClassicGroup> {
        self.full.get(index)?.as_deref()
    }

    /// The state of the group `slot` holds; Empty for none, as a simple group is.
    pub(crate) fn state(&self, slot: GroupRef) -> GroupState {
        match slot.decode() {
            Decoded::None | Decoded::Idle { .. } => GroupState::Empty,
            Decoded::Full(index) => self.full_at(index).map_or(GroupState::Empty, |g| g.state),
            // The closest classic state, for callers that only know classic states: a
            // consumer group is Empty without members and active otherwise.
            Decoded::Consumer(_) => match self.consumer_group(slot) {
                Some(g) if !g.members.is_empty() => GroupState::Stable,
                _ => GroupState::Empty,
            },
        }
    }

    /// The protocol type of the group `slot` holds; "" for none, as a simple group has.
    pub(crate) fn protocol_type(&self, slot: GroupRef) -> &str {
        let name = match slot.decode() {
            Decoded::None => None,
            Decoded::Idle { protocol_type, .. } => protocol_type.name(),
            Decoded::Full(index) => self.full_at(index).and_then(|g| g.protocol_type.as_deref()),
            Decoded::Consumer(_) => Some(CONSUMER_PROTOCOL_TYPE),
        };
        name.unwrap_or_default()
    }

    #[cfg(test)]
    fn full_len(&self) -> usize {
        self.full.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::MemberId;
    use crate::record::group_metadata::{InitialDelay, Member, PendingMember};

    fn empty_consumer_group() -> ClassicGroup {
        let mut group = ClassicGroup::new(TimestampMs(1_700_000_000_000));
        group.generation = Generation(7);
        group.protocol_type = Some(CONSUMER_PROTOCOL_TYPE.to_owned());
        group
    }

    fn round_trip(store: &mut GroupStore, slot: &mut GroupRef, group: &ClassicGroup) {
        store.put(slot, group);
        assert_eq!(store.group(*slot).as_deref(), Some(group));
        assert_eq!(store.state(*slot), group.state);
        assert_eq!(
            store.protocol_type(*slot),
            group.protocol_type.as_deref().unwrap_or_default()
        );
    }

    #[test]
    fn idle_groups_are_packed_exactly_at_the_limits_of_their_fields() {
        let mut store = GroupStore::default();
        let timestamps = [0, 1, 1_700_000_000_000, (1 << TIMESTAMP_BITS) - 1];
        let generations = [0, 1, 7, (1 << GENERATION_BITS) - 1];
        let types = [None, Some("consumer"), Some("connect"), Some("sr")];
        for timestamp in timestamps {
            for generation in generations {
                for protocol_type in types {
                    let mut group = ClassicGroup::new(TimestampMs(timestamp));
                    group.generation = Generation(generation);
                    group.protocol_type = protocol_type.map(str::to_owned);
                    let mut slot = GroupRef::default();
                    round_trip(&mut store, &mut slot, &group);
                    assert_eq!(slot.0 >> KIND_SHIFT, KIND_IDLE, "{group:?}");
                    assert!(store.full_group(slot).is_none());
                }
            }
        }
        assert_eq!(store.full_len(), 0);
    }

    #[test]
    fn groups_that_do_not_fit_the_packed_form_are_stored_in_full() {
        let member = Member {
            group_instance_id: None,
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            rebalance_timeout_ms: 1,
            session_timeout_ms: 1,
            protocol_type: "consumer".into(),
            protocols: Vec::new(),
            assignment: Default::default(),
            awaiting_join: false,
            awaiting_sync: false,
            is_new: false,
        };
        let id = MemberId::from("m");
        type Change = fn(&mut ClassicGroup, &Member, &MemberId);
        let changes: Vec<(&str, Change)> = vec![
            ("unknown protocol type", |g, _, _| {
                g.protocol_type = Some("mine".into())
            }),
            ("empty protocol type", |g, _, _| {
                g.protocol_type = Some(String::new())
            }),
            ("negative timestamp", |g, _, _| {
                g.state_timestamp = TimestampMs(-1)
            }),
            ("timestamp past 43 bits", |g, _, _| {
                g.state_timestamp = TimestampMs(1 << TIMESTAMP_BITS)
            }),
            ("largest timestamp", |g, _, _| {
                g.state_timestamp = TimestampMs(i64::MAX)
            }),
            ("negative generation", |g, _, _| {
                g.generation = Generation(-1)
            }),
            ("generation past 16 bits", |g, _, _| {
                g.generation = Generation(1 << GENERATION_BITS)
            }),
            ("not Empty", |g, _, _| g.state = GroupState::Stable),
            ("protocol name", |g, _, _| {
                g.protocol_name = Some("range".into())
            }),
            ("leader", |g, _, id| g.leader = Some(id.clone())),
            ("member", |g, m, id| {
                g.members.insert(id.clone(), m.clone());
            }),
            ("pending member", |g, _, id| {
                g.pending_members.insert(
                    id.clone(),
                    PendingMember {
                        session_timeout_ms: 1,
                    },
                );
            }),
            ("pending sync", |g, _, id| {
                g.pending_sync.insert(id.clone());
            }),
            ("initial delay", |g, _, _| {
                g.initial_delay = Some(InitialDelay {
                    delay_ms: 1,
                    remaining_ms: 1,
                })
            }),
            ("new member added", |g, _, _| g.new_member_added = true),
            ("join deadline", |g, _, _| {
                g.join_deadline = Some(TimestampMs(1))
            }),
            ("sync deadline", |g, _, _| {
                g.sync_deadline = Some(TimestampMs(1))
            }),
        ];
        let mut store = GroupStore::default();
        let mut slots = Vec::new();
        for (what, change) in &changes {
            let mut group = empty_consumer_group();
            change(&mut group, &member, &id);
            let mut slot = GroupRef::default();
            round_trip(&mut store, &mut slot, &group);
            assert_eq!(slot.0 >> KIND_SHIFT, KIND_FULL, "{what}");
            assert!(
                matches!(store.group(slot), Some(Cow::Borrowed(_))),
                "{what}"
            );
            assert_eq!(store.full_group(slot), Some(&group), "{what}");
            slots.push((slot, group));
        }
        assert_eq!(store.full_len(), changes.len());
        // Each slot still holds its own group once all are stored.
        for (slot, group) in &slots {
            assert_eq!(store.full_group(*slot), Some(group));
        }
    }

    #[test]
    fn a_slot_moves_between_forms_and_frees_what_it_no_longer_uses() {
        let mut store = GroupStore::default();
        let mut a = GroupRef::default();
        let mut b = GroupRef::default();
        let mut stable = empty_consumer_group();
        stable.state = GroupState::Stable;
        stable.generation = Generation(8);
        round_trip(&mut store, &mut a, &stable);
        round_trip(&mut store, &mut b, &stable);
        assert_eq!(store.full_len(), 2);
        // Updated in place.
        stable.generation = Generation(9);
        round_trip(&mut store, &mut a, &stable);
        assert_eq!(store.full_len(), 2);
        // Back to idle: the box is freed and its index reused.
        round_trip(&mut store, &mut a, &empty_consumer_group());
        assert_eq!(store.full_len(), 1);
        round_trip(&mut store, &mut a, &stable);
        assert_eq!(store.full_len(), 2);
        store.remove(&mut a);
        assert!(!a.is_some());
        assert_eq!(store.group(a), None);
        assert_eq!(store.state(a), GroupState::Empty);
        assert_eq!(store.protocol_type(a), "");
        store.remove(&mut b);
        assert_eq!(store.full_len(), 0);
        assert!(store.full.is_empty() && store.free.is_empty());
        // Removing an empty slot changes nothing.
        store.remove(&mut a);
        assert_eq!(store.full_len(), 0);
    }

    #[test]
    fn a_slot_is_8_bytes() {
        assert_eq!(std::mem::size_of::<GroupRef>(), 8);
    }
}
