//! Exactly-once under crashes (issue 13) with kafkajs: the consume–transform–produce
//! application `tests/clients/node/eos_pipeline_kafkajs.js` (kafkajs's documented pattern:
//! `transaction()`, `send`, `sendOffsets`, `commit`/`abort`, a read_committed consumer) runs to
//! completion while (a) the single node is SIGKILLed and restarted twice, and (b) the Raft leader
//! of a three-node cluster is SIGKILLed and restarted, then a follower. A librdkafka
//! read_committed reader checks the ledger (`tests/eos_support/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::eos_support;

use eos_support::Client;

#[test]
fn a_kafkajs_exactly_once_pipeline_survives_sigkill_of_the_single_node() {
    eos_support::survives_sigkill_of_the_single_node(Client::Kafkajs);
}

#[test]
fn a_kafkajs_exactly_once_pipeline_survives_sigkill_of_the_cluster_leader_then_a_follower() {
    eos_support::survives_sigkill_of_cluster_nodes(Client::Kafkajs, true);
}
