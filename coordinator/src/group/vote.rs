//! Protocol selection by vote, independent of what the protocols assign: a group runs the
//! protocol (for consumers: the assignor) that every member supports and most members prefer.

use crate::group::{ClassicGroup, GroupState};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};

impl ClassicGroup {
    /// Protocol names every member supports.
    pub(crate) fn candidate_protocols(&self) -> BTreeSet<&str> {
        let mut members = self.members.values();
        let Some(first) = members.next() else {
            return BTreeSet::new();
        };
        let mut candidates: BTreeSet<&str> =
            first.protocols.iter().map(|(n, _)| n.as_str()).collect();
        for member in members {
            candidates.retain(|c| member.protocols.iter().any(|(n, _)| n == c));
        }
        candidates
    }

    /// Kafka's `supportsProtocols`: an Empty group takes any non-empty protocol type with at
    /// least one protocol; otherwise the type must match and one protocol must be supported by
    /// every current member.
    pub fn supports_protocols(&self, protocol_type: &str, protocols: &[(String, Bytes)]) -> bool {
        if self.state == GroupState::Empty {
            return !protocol_type.is_empty() && !protocols.is_empty();
        }
        if self.protocol_type.as_deref() != Some(protocol_type) {
            return false;
        }
        if self.members.is_empty() {
            return !protocols.is_empty();
        }
        let candidates = self.candidate_protocols();
        protocols
            .iter()
            .any(|(name, _)| candidates.contains(name.as_str()))
    }

    /// Protocol selection by vote: among the protocols all members support, each member votes
    /// for its most preferred; most votes wins. Ties go to the smallest name (Kafka leaves the
    /// tie to hash-map order; any fixed rule is as good and this one is deterministic).
    pub fn select_protocol(&self) -> Option<String> {
        let candidates = self.candidate_protocols();
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for member in self.members.values() {
            if let Some((name, _)) = member
                .protocols
                .iter()
                .find(|(n, _)| candidates.contains(n.as_str()))
            {
                *votes.entry(name.as_str()).or_insert(0) += 1;
            }
        }
        let mut best: Option<(&str, usize)> = None;
        for (name, count) in votes {
            if best.is_none_or(|(_, c)| count > c) {
                best = Some((name, count));
            }
        }
        best.map(|(name, _)| name.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use crate::group::{ClassicGroup, GroupState, Member};
    use crate::ids::{MemberId, TimestampMs};
    use bytes::Bytes;

    fn member(protocols: &[&str]) -> Member {
        Member {
            group_instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            rebalance_timeout_ms: 0,
            session_timeout_ms: 0,
            protocol_type: "consumer".into(),
            protocols: protocols
                .iter()
                .map(|p| ((*p).to_owned(), Bytes::new()))
                .collect(),
            assignment: Bytes::new(),
            awaiting_join: false,
            awaiting_sync: false,
            is_new: false,
        }
    }

    fn group(members: &[&[&str]]) -> ClassicGroup {
        let mut g = ClassicGroup::new(TimestampMs(0));
        g.state = GroupState::Stable;
        g.protocol_type = Some("consumer".into());
        for (i, protocols) in members.iter().enumerate() {
            g.members
                .insert(MemberId::new(format!("m{i}")), member(protocols));
        }
        g
    }

    #[test]
    fn the_most_preferred_common_protocol_wins() {
        let g = group(&[
            &["sticky", "range"],
            &["range", "sticky"],
            &["range", "roundrobin", "sticky"],
        ]);
        assert_eq!(g.select_protocol().as_deref(), Some("range"));
    }

    #[test]
    fn protocols_not_supported_by_everyone_get_no_votes() {
        let g = group(&[
            &["cooperative", "range"],
            &["cooperative", "range"],
            &["range"],
        ]);
        assert_eq!(g.select_protocol().as_deref(), Some("range"));
    }

    #[test]
    fn ties_go_to_the_smallest_name() {
        let g = group(&[&["b", "a"], &["a", "b"]]);
        assert_eq!(g.select_protocol().as_deref(), Some("a"));
    }

    #[test]
    fn a_joining_member_must_share_a_protocol_and_the_type() {
        let g = group(&[&["range"], &["range", "sticky"]]);
        let offer = |names: &[&str]| -> Vec<(String, Bytes)> {
            names
                .iter()
                .map(|n| ((*n).to_owned(), Bytes::new()))
                .collect()
        };
        assert!(g.supports_protocols("consumer", &offer(&["sticky", "range"])));
        assert!(!g.supports_protocols("consumer", &offer(&["sticky"])));
        assert!(!g.supports_protocols("connect", &offer(&["range"])));
        let empty = ClassicGroup::new(TimestampMs(0));
        assert!(empty.supports_protocols("anything", &offer(&["x"])));
        assert!(!empty.supports_protocols("", &offer(&["x"])));
        assert!(!empty.supports_protocols("consumer", &offer(&[])));
    }
}
