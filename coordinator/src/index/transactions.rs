//! The transaction coordinator's state: every transactional id's `TransactionValue` and the
//! pending transactional offsets by (group, producer). Read through `&TxnIndex` by the
//! transaction and offset concerns; written only by the state's `replay`.

use crate::command::TxnProducer;
use crate::config::Config;
use crate::ids::{GroupId, PartitionIndex, ProducerId, TransactionalId};
use crate::record::transaction::{TransactionValue, TxnOffsetsValue};
use crate::record::Record;
use crate::reply::ErrorKind;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TxnIndex {
    transactions: BTreeMap<TransactionalId, TransactionValue>,
    /// By group, then producer: a commit asks by `&str` whether its group has any, without
    /// building a key.
    pending: BTreeMap<GroupId, BTreeMap<ProducerId, TxnOffsetsValue>>,
}

impl TxnIndex {
    pub(crate) fn get(&self, id: &TransactionalId) -> Option<&TransactionValue> {
        self.transactions.get(id)
    }

    /// The checks every request of a registered producer passes first: an unknown
    /// transactional id or another producer id is INVALID_PRODUCER_ID_MAPPING, another epoch
    /// PRODUCER_FENCED.
    pub(crate) fn producer(
        &self,
        config: &Config,
        p: &TxnProducer,
    ) -> Result<&TransactionValue, ErrorKind> {
        if p.transactional_id.is_empty()
            || p.transactional_id.as_str().len() > config.field_max_bytes
        {
            return Err(ErrorKind::InvalidRequest);
        }
        let t = self
            .get(&p.transactional_id)
            .ok_or(ErrorKind::InvalidProducerIdMapping)?;
        if t.producer_id != p.producer_id {
            return Err(ErrorKind::InvalidProducerIdMapping);
        }
        if t.producer_epoch != p.producer_epoch {
            return Err(ErrorKind::ProducerFenced);
        }
        Ok(t)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&TransactionalId, &TransactionValue)> {
        self.transactions.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.transactions.len()
    }

    pub(crate) fn pending(
        &self,
        group_id: &GroupId,
        producer_id: ProducerId,
    ) -> Option<&TxnOffsetsValue> {
        self.pending.get(group_id.as_str())?.get(&producer_id)
    }

    /// Every producer's pending offsets for `group_id`.
    pub(crate) fn group_pending<'a>(
        &'a self,
        group_id: &GroupId,
    ) -> impl Iterator<Item = (ProducerId, &'a TxnOffsetsValue)> + 'a {
        self.pending
            .get(group_id.as_str())
            .into_iter()
            .flat_map(|by_producer| by_producer.iter().map(|(p, v)| (*p, v)))
    }

    /// Whether a transaction has an uncompleted offset for the partition (OffsetFetch's
    /// `require_stable`, and offset expiry, which must keep it).
    pub(crate) fn has_pending(
        &self,
        group_id: &GroupId,
        topic: &str,
        partition: PartitionIndex,
    ) -> bool {
        self.group_pending(group_id).any(|(_, v)| {
            v.offsets
                .keys()
                .any(|(t, p)| t.as_str() == topic && *p == partition)
        })
    }

    /// Whether any transaction has uncompleted offsets for the group.
    pub(crate) fn group_has_pending(&self, group_id: &GroupId) -> bool {
        self.pending.contains_key(group_id.as_str())
    }

    pub(crate) fn put_transaction(
        &mut self,
        id: &TransactionalId,
        value: Option<&TransactionValue>,
    ) {
        match value {
            Some(v) => {
                self.transactions.insert(id.clone(), v.clone());
            }
            None => {
                self.transactions.remove(id);
            }
        }
    }

    pub(crate) fn put_pending(
        &mut self,
        group_id: &GroupId,
        producer_id: ProducerId,
        value: Option<&TxnOffsetsValue>,
    ) {
        match value {
            Some(v) => {
                self.pending
                    .entry(group_id.clone())
                    .or_default()
                    .insert(producer_id, v.clone());
            }
            None => {
                if let Some(by_producer) = self.pending.get_mut(group_id.as_str()) {
                    by_producer.remove(&producer_id);
                    if by_producer.is_empty() {
                        self.pending.remove(group_id.as_str());
                    }
                }
            }
        }
    }

    /// The live records, for snapshots.
    pub(crate) fn records(&self) -> impl Iterator<Item = Record> + '_ {
        let txns = self.transactions.iter().map(|(id, v)| Record::Transaction {
            transactional_id: id.clone(),
            value: Some(Box::new(v.clone())),
        });
        let pending = self.pending.iter().flat_map(|(g, by_producer)| {
            by_producer.iter().map(|(p, v)| Record::TxnOffsets {
                group_id: g.clone(),
                producer_id: *p,
                value: Some(Box::new(v.clone())),
            })
        });
        txns.chain(pending)
    }
}
