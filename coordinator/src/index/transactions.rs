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
    /// Keyed by group first, so a group's pending offsets are one range.
    pending: BTreeMap<(GroupId, ProducerId), TxnOffsetsValue>,
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
        self.pending.get(&(group_id.clone(), producer_id))
    }

    /// Every producer's pending offsets for `group_id`.
    pub(crate) fn group_pending<'a>(
        &'a self,
        group_id: &'a GroupId,
    ) -> impl Iterator<Item = (ProducerId, &'a TxnOffsetsValue)> + 'a {
        self.pending
            .range((group_id.clone(), ProducerId(i64::MIN))..)
            .take_while(move |((g, _), _)| g == group_id)
            .map(|((_, p), v)| (*p, v))
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
        self.group_pending(group_id).next().is_some()
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
        let key = (group_id.clone(), producer_id);
        match value {
            Some(v) => {
                self.pending.insert(key, v.clone());
            }
            None => {
                self.pending.remove(&key);
            }
        }
    }

    /// The live records, for snapshots.
    pub(crate) fn records(&self) -> impl Iterator<Item = Record> + '_ {
        let txns = self.transactions.iter().map(|(id, v)| Record::Transaction {
            transactional_id: id.clone(),
            value: Some(Box::new(v.clone())),
        });
        let pending = self.pending.iter().map(|((g, p), v)| Record::TxnOffsets {
            group_id: g.clone(),
            producer_id: *p,
            value: Some(Box::new(v.clone())),
        });
        txns.chain(pending)
    }
}
