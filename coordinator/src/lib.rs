//! The group and offset domain: a deterministic state machine with no IO and no clock.
