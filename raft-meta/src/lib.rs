//! The Raft meta service: openraft type config, log stores, state machine, transport.
