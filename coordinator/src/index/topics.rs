//! The topics as the coordinator knows them: name, id and partition count, from `Topic`
//! records. The replicated topic table lives beside the coordinator (raft-meta's app); every
//! topic change reaches the coordinator as a `TopicsChanged` command applied in the same log
//! position on every replica, so consumer groups are assigned from the same image everywhere.

use crate::ids::{TopicId, TopicName};
use crate::record::consumer_group::TopicValue;
use crate::record::Record;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TopicImage {
    by_name: BTreeMap<TopicName, TopicValue>,
    /// Derived from `by_name`. The replicated table gives every topic its own id; should a
    /// corrupt or hostile command give two names one id, the id resolves to the smallest name,
    /// whatever order the records replay in.
    by_id: BTreeMap<TopicId, BTreeSet<TopicName>>,
}

impl TopicImage {
    pub(crate) fn get(&self, name: &str) -> Option<&TopicValue> {
        self.by_name.get(name)
    }

    pub(crate) fn name_of(&self, id: TopicId) -> Option<&TopicName> {
        self.by_id.get(&id).and_then(|names| names.first())
    }

    /// Partition count of topic `id`, if it exists.
    pub(crate) fn partitions_of(&self, id: TopicId) -> Option<i32> {
        let name = self.name_of(id)?;
        self.by_name.get(name).map(|t| t.partitions)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&TopicName, &TopicValue)> + '_ {
        self.by_name.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    pub(crate) fn put(&mut self, name: &TopicName, value: Option<&TopicValue>) {
        if let Some(old) = self.by_name.remove(name) {
            if let Some(names) = self.by_id.get_mut(&old.id) {
                names.remove(name);
                if names.is_empty() {
                    self.by_id.remove(&old.id);
                }
            }
        }
        if let Some(v) = value {
            self.by_name.insert(name.clone(), *v);
            self.by_id.entry(v.id).or_default().insert(name.clone());
        }
    }

    pub(crate) fn records(&self) -> impl Iterator<Item = Record> + '_ {
        self.by_name.iter().map(|(name, v)| Record::Topic {
            name: name.clone(),
            value: Some(*v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_names_with_one_id_resolve_the_same_in_any_order() {
        let v = |partitions| TopicValue {
            id: TopicId(42),
            partitions,
        };
        let (t, u) = (TopicName::new("t"), TopicName::new("u"));
        let mut a = TopicImage::default();
        a.put(&t, Some(&v(2)));
        a.put(&u, Some(&v(1)));
        let mut b = TopicImage::default();
        b.put(&u, Some(&v(1)));
        b.put(&t, Some(&v(2)));
        assert_eq!(a, b);
        assert_eq!(a.name_of(TopicId(42)).map(TopicName::as_str), Some("t"));
        a.put(&t, None);
        assert_eq!(a.name_of(TopicId(42)).map(TopicName::as_str), Some("u"));
        assert_eq!(a.partitions_of(TopicId(42)), Some(1));
    }
}
