//! The value of a group config record (key type 10): a group's config overrides, key name →
//! canonical value text. Validation and meaning live in `crate::group_config`.

use std::collections::BTreeMap;

/// A group's overrides: key name → canonical integer text. Names are those of
/// `group_config::GROUP_CONFIG_KEYS` (a record written by a newer binary may hold others;
/// they are kept and shown, and ignored).
pub type GroupConfigs = BTreeMap<String, String>;
