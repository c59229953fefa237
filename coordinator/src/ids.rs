//! Newtypes for every identifier, offset and instant the coordinator handles, so that a
//! generation can never be passed where an offset is expected and units are in the type.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(
    /// A consumer group's id. Kafka accepts the empty id on OffsetCommit, OffsetFetch,
    /// DescribeGroups and DeleteGroups (backwards compatibility) but not on the membership APIs.
    GroupId
);
string_id!(
    /// A member id minted by the coordinator (`<client id>-<uuid>` or `<instance id>-<uuid>`);
    /// the empty id means "unknown member" in requests.
    MemberId
);
string_id!(
    /// `group.instance.id` of a static member (KIP-345).
    GroupInstanceId
);
string_id!(
    /// A topic name as clients send it.
    TopicName
);
string_id!(
    /// `transactional.id` of a transactional producer (KIP-98): the key of its transaction
    /// state, stable across the producer's restarts.
    TransactionalId
);

macro_rules! number_id {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

number_id!(
    /// A group generation; bumped each time a join phase completes. Clients send −1 when they
    /// commit outside group management (admin tools, simple consumers).
    Generation(i32)
);
number_id!(
    /// A committed offset (the next record the consumer will read). −1 means "no offset".
    Offset(i64)
);
number_id!(
    /// Milliseconds since the Unix epoch, as stamped by the leader that created a command.
    TimestampMs(i64)
);
number_id!(
    /// A partition's index within its topic.
    PartitionIndex(i32)
);
number_id!(
    /// The leader epoch a consumer saw for the record it committed; −1 when unknown.
    LeaderEpoch(i32)
);
number_id!(
    /// A topic's id: the 128 bits of Kafka's topic UUID, which consumer-protocol requests and
    /// assignments name topics by.
    TopicId(u128)
);
number_id!(
    /// The version of the Kafka request that carried a command: some rules depend on it
    /// (MEMBER_ID_REQUIRED from JoinGroup v4, GROUP_ID_NOT_FOUND from OffsetCommit v9...).
    ApiVersion(i16)
);

number_id!(
    /// A producer id, allocated by the cluster (`AllocateProducerIds`); −1 means "none".
    ProducerId(i64)
);
number_id!(
    /// A producer epoch: bumped by every InitProducerId of the same transactional id, so that
    /// an older instance (a zombie) is fenced.
    ProducerEpoch(i16)
);

impl ProducerId {
    pub const NONE: ProducerId = ProducerId(-1);
}

impl ProducerEpoch {
    pub const NONE: ProducerEpoch = ProducerEpoch(-1);

    /// Kafka rotates to a new producer id once the epoch reaches `i16::MAX - 1`, keeping
    /// `i16::MAX` out of use so that a bump to fence a zombie always fits.
    pub fn is_exhausted(self) -> bool {
        self.0 >= i16::MAX - 1
    }

    /// The next epoch; the caller checks `is_exhausted` first.
    pub fn bumped(self) -> ProducerEpoch {
        ProducerEpoch(self.0.saturating_add(1))
    }
}

impl Generation {
    /// What a group starts with and what a commit outside group management carries.
    pub const NONE: Generation = Generation(-1);
}

impl Offset {
    /// OffsetFetch's answer for a partition without a committed offset.
    pub const NONE: Offset = Offset(-1);
}

impl LeaderEpoch {
    pub const NONE: LeaderEpoch = LeaderEpoch(-1);
}

impl TimestampMs {
    /// `self + ms`, saturating: deadlines computed from hostile timeouts never wrap.
    pub fn plus_ms(self, ms: i64) -> TimestampMs {
        TimestampMs(self.0.saturating_add(ms))
    }
}
