//! Kafka's topic name rules (`Topic.validate`): 1 to 249 characters from `[a-zA-Z0-9._-]`, and
//! neither `.` nor `..`.

/// Longest topic name (Kafka: 255 minus room for a partition suffix in directory names).
pub const MAX_TOPIC_NAME_CHARS: usize = 249;

/// Why a name is not a valid topic name; the message is what Kafka tells clients.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTopicName {
    /// Empty.
    #[error("Topic name is illegal, it can't be empty")]
    Empty,
    /// `.` or `..`.
    #[error("Topic name cannot be \".\" or \"..\"")]
    Dots,
    /// Too long.
    #[error("Topic name is illegal, it can't be longer than 249 characters, topic name: {0}")]
    TooLong(String),
    /// A forbidden character.
    #[error(
        "Topic name \"{0}\" is illegal, it contains a character other than ASCII alphanumerics, \
         '.', '_' and '-'"
    )]
    BadCharacter(String),
}

/// Checks `name` against Kafka's rules.
pub fn validate_topic_name(name: &str) -> Result<(), InvalidTopicName> {
    if name.is_empty() {
        return Err(InvalidTopicName::Empty);
    }
    if name == "." || name == ".." {
        return Err(InvalidTopicName::Dots);
    }
    if name.len() > MAX_TOPIC_NAME_CHARS {
        return Err(InvalidTopicName::TooLong(name.to_string()));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
    {
        return Err(InvalidTopicName::BadCharacter(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_rules() {
        assert!(validate_topic_name("orders.v2_test-1").is_ok());
        assert!(validate_topic_name(&"a".repeat(249)).is_ok());
        assert_eq!(validate_topic_name(""), Err(InvalidTopicName::Empty));
        assert_eq!(validate_topic_name(".."), Err(InvalidTopicName::Dots));
        assert!(matches!(
            validate_topic_name(&"a".repeat(250)),
            Err(InvalidTopicName::TooLong(_))
        ));
        for bad in ["a b", "a/b", "ü", "a\0", "../x"] {
            assert!(
                matches!(
                    validate_topic_name(bad),
                    Err(InvalidTopicName::BadCharacter(_))
                ),
                "{bad}"
            );
        }
    }
}
