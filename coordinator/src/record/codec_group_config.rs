//! The byte encoding of the group config record, in the format of `codec.rs`. Golden bytes:
//! `coordinator/tests/record_golden.rs`.
//!
//! | key type | key fields | value (version 0)                                          |
//! |----------|------------|------------------------------------------------------------|
//! | 10       | group      | [name, value] (u32 count, names strictly increasing)       |
//!
//! An empty value is the tombstone: a group without overrides has no record.

use super::codec::{DecodeError, Reader, Writer};
use super::group_config::GroupConfigs;
use super::RecordKey;
use crate::ids::GroupId;

pub(super) const KEY_GROUP_CONFIG: u16 = 10;
const VERSION: u16 = 0;

pub(super) fn encode_key(w: &mut Writer, group_id: &GroupId) {
    w.u16(KEY_GROUP_CONFIG);
    w.str(group_id.as_str());
}

pub(super) fn decode_key(r: &mut Reader<'_>) -> Result<RecordKey, DecodeError> {
    Ok(RecordKey::GroupConfig {
        group_id: GroupId::new(r.string("group id")?),
    })
}

pub(super) fn encode_value(w: &mut Writer, configs: &GroupConfigs) {
    w.u16(VERSION);
    w.len(configs.len());
    for (name, value) in configs {
        w.str(name);
        w.str(value);
    }
}

/// `None` for a tombstone (an empty value).
pub(super) fn decode_value(value: &[u8]) -> Result<Option<GroupConfigs>, DecodeError> {
    if value.is_empty() {
        return Ok(None);
    }
    let mut r = Reader(value);
    r.version(VERSION, KEY_GROUP_CONFIG)?;
    // A name and a value: two u32 lengths at least.
    let n = r.count(8, "group configs")?;
    let mut configs = GroupConfigs::new();
    let mut last: Option<String> = None;
    for _ in 0..n {
        let name = r.string("config name")?;
        let value = r.string("config value")?;
        if last.as_ref().is_some_and(|l| *l >= name) {
            return Err(DecodeError::Unordered {
                field: "config names",
            });
        }
        last = Some(name.clone());
        configs.insert(name, value);
    }
    r.finish()?;
    Ok(Some(configs))
}
