//! Exactly-once under crashes (issue 13) with librdkafka: a consume–transform–produce
//! application (`tests/clients/python/eos_pipeline.py`, written as librdkafka's transactions
//! guide tells applications to handle errors) runs to completion while (a) the single node is
//! SIGKILLed and restarted twice, and (b) the Raft leader of a three-node cluster — the
//! transaction and group coordinator — is SIGKILLed and restarted, then a follower. The ledger
//! checks are in `tests/eos_support/`; kafkajs's run is `tests/transactions_crash_kafkajs.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::eos_support;

use eos_support::Client;

#[test]
fn an_exactly_once_pipeline_survives_sigkill_of_the_single_node() {
    eos_support::survives_sigkill_of_the_single_node(Client::Librdkafka);
}

#[test]
fn an_exactly_once_pipeline_survives_sigkill_of_the_cluster_leader_then_a_follower() {
    eos_support::survives_sigkill_of_cluster_nodes(Client::Librdkafka, true);
}
