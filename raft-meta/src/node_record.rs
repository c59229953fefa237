//! The versioned Kafka field of a node record in the replicated membership (decision 0184).
//!
//! A membership travels as `postcard(openraft::Entry)` in the log and in peer RPCs, and field
//! by field in snapshot meta (`format/openraft_codec.rs`); in all three a node is two strings,
//! `raft_addr` and a Kafka field, and that layout is pinned for every log already written. The
//! Kafka field therefore carries its own version:
//!
//! ```text
//!  version 1   HOST:PORT                          the first listener's address (never starts
//!                                                 with NUL); the node's listeners are unknown
//!  version N   NUL | N (decimal) | NUL | body | NUL
//!  version 2   body = NAME=HOST:PORT,NAME=HOST:PORT,...   every listener, in --listeners order
//! ```
//!
//! A version this binary does not read is refused by name ([`FormatError::NewerVersion`]): the
//! entry or snapshot carrying it stops the node (decision 0109) rather than being misread. A
//! binary from before version 2 reads a version 2 field as an address whose port does not
//! parse (the trailing NUL), so it leaves that node out of its Metadata answers and retries its
//! calls to it until it is upgraded itself, instead of sending clients to a made-up address.

use crate::format::FormatError;
use crate::types::{KafkaListener, NodeInfo};

/// The newest version of the Kafka field this binary writes and reads.
pub const NEWEST: u16 = 2;
const WHAT: &str = "node record";
const MARK: char = '\0';

/// Why a node's listeners cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerRecordError {
    #[error("a node publishes at least one Kafka listener")]
    Empty,
    #[error("listener {0:?} is listed twice")]
    Duplicate(String),
    #[error(
        "listener {name:?} = {addr:?}: names and addresses cannot be empty or hold ',', '=' or NUL"
    )]
    Unencodable { name: String, addr: String },
}

/// Checks that `listeners` can be written as a version 2 record and read back as they are.
pub fn check_listeners(listeners: &[KafkaListener]) -> Result<(), ListenerRecordError> {
    if listeners.is_empty() {
        return Err(ListenerRecordError::Empty);
    }
    let bad = |s: &str| s.is_empty() || s.contains([',', '=', MARK]);
    for (i, l) in listeners.iter().enumerate() {
        if bad(&l.name) || bad(&l.addr) {
            return Err(ListenerRecordError::Unencodable {
                name: l.name.clone(),
                addr: l.addr.clone(),
            });
        }
        if listeners[..i].iter().any(|o| o.name == l.name) {
            return Err(ListenerRecordError::Duplicate(l.name.clone()));
        }
    }
    Ok(())
}

/// The Kafka field of `info`: version 1 (its one address) while its listeners are unknown,
/// version 2 once it published them.
pub fn kafka_field(info: &NodeInfo) -> String {
    if info.listeners.is_empty() {
        return info.kafka_addr.clone();
    }
    let body: Vec<String> = info
        .listeners
        .iter()
        .map(|l| format!("{}={}", l.name, l.addr))
        .collect();
    format!("{MARK}{NEWEST}{MARK}{}{MARK}", body.join(","))
}

/// Reads a node record from its two fields; refuses a version newer than [`NEWEST`].
pub fn from_fields(raft_addr: String, kafka: &str) -> Result<NodeInfo, FormatError> {
    let Some(framed) = kafka.strip_prefix(MARK) else {
        return Ok(NodeInfo {
            raft_addr,
            kafka_addr: kafka.to_owned(),
            listeners: Vec::new(),
        });
    };
    let malformed = |reason: String| FormatError::Malformed { what: WHAT, reason };
    let (version, rest) = framed
        .split_once(MARK)
        .ok_or_else(|| malformed("no version".to_owned()))?;
    let version: u16 = version
        .parse()
        .map_err(|_| malformed(format!("version {version:?} is not a number")))?;
    if version > NEWEST {
        return Err(FormatError::NewerVersion {
            name: WHAT,
            version,
            newest: NEWEST,
        });
    }
    if version < 2 {
        return Err(FormatError::UnknownVersion {
            name: WHAT,
            version,
        });
    }
    let body = rest
        .strip_suffix(MARK)
        .ok_or_else(|| malformed("no end mark".to_owned()))?;
    let listeners = body
        .split(',')
        .map(|entry| {
            entry
                .split_once('=')
                .map(|(name, addr)| KafkaListener {
                    name: name.to_owned(),
                    addr: addr.to_owned(),
                })
                .ok_or_else(|| malformed(format!("listener {entry:?} is not NAME=HOST:PORT")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_listeners(&listeners).map_err(|e| malformed(e.to_string()))?;
    Ok(NodeInfo {
        raft_addr,
        kafka_addr: listeners[0].addr.clone(),
        listeners,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(name: &str, addr: &str) -> KafkaListener {
        KafkaListener {
            name: name.into(),
            addr: addr.into(),
        }
    }

    #[test]
    fn a_version_1_record_still_decodes_with_unknown_listeners() {
        // The bytes every membership before version 2 holds: two plain strings.
        let old = postcard::to_stdvec(&("10.0.0.1:9093", "10.0.0.1:9092")).unwrap();
        let info: NodeInfo = postcard::from_bytes(&old).unwrap();
        assert_eq!(
            info,
            NodeInfo {
                raft_addr: "10.0.0.1:9093".into(),
                kafka_addr: "10.0.0.1:9092".into(),
                listeners: Vec::new(),
            }
        );
        // Unknown listeners: the one address on every listener, as before.
        assert_eq!(info.listener_addr("SSL"), Some("10.0.0.1:9092"));
        // A record without listeners is written as version 1, byte for byte.
        assert_eq!(postcard::to_stdvec(&info).unwrap(), old);
    }

    #[test]
    fn a_version_2_record_round_trips_and_answers_by_listener_name() {
        let info = NodeInfo {
            raft_addr: "10.0.0.1:9093".into(),
            kafka_addr: "10.0.0.1:9092".into(),
            listeners: vec![
                listener("PLAINTEXT", "10.0.0.1:9092"),
                listener("SASL_SSL", "kafka-1.example:9094"),
            ],
        };
        let field = kafka_field(&info);
        assert_eq!(
            field,
            "\u{0}2\u{0}PLAINTEXT=10.0.0.1:9092,SASL_SSL=kafka-1.example:9094\u{0}"
        );
        let bytes = postcard::to_stdvec(&info).unwrap();
        assert_eq!(postcard::from_bytes::<NodeInfo>(&bytes).unwrap(), info);
        assert_eq!(info.listener_addr("SASL_SSL"), Some("kafka-1.example:9094"));
        assert_eq!(info.listener_addr("SSL"), None);
        // A binary before version 2 splits the field at its last ':' and cannot parse the
        // port: it leaves the node out rather than advertising a made-up address.
        let (_, port) = field.rsplit_once(':').unwrap();
        assert!(port.parse::<u16>().is_err());
    }

    #[test]
    fn an_unknown_newer_version_fails_closed() {
        let newer = postcard::to_stdvec(&("r", "\u{0}3\u{0}whatever\u{0}")).unwrap();
        // In a log entry or a peer RPC the record does not decode: the entry halts the node.
        assert!(postcard::from_bytes::<NodeInfo>(&newer).is_err());
        assert!(matches!(
            from_fields("r".into(), "\u{0}3\u{0}whatever\u{0}"),
            Err(FormatError::NewerVersion {
                version: 3,
                newest: 2,
                ..
            })
        ));
        for bad in [
            "\u{0}1\u{0}PLAINTEXT=a:1\u{0}",
            "\u{0}x\u{0}PLAINTEXT=a:1\u{0}",
            "\u{0}2\u{0}PLAINTEXT=a:1",
            "\u{0}2\u{0}PLAINTEXT\u{0}",
            "\u{0}2\u{0}\u{0}",
            "\u{0}2\u{0}SSL=a:1,SSL=b:2\u{0}",
            "\u{0}2",
        ] {
            assert!(
                from_fields("r".into(), bad).is_err(),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn listeners_that_would_not_read_back_are_refused() {
        assert_eq!(check_listeners(&[]), Err(ListenerRecordError::Empty));
        assert!(check_listeners(&[listener("SSL", "a,b:1")]).is_err());
        assert!(check_listeners(&[listener("SSL", "a:1"), listener("SSL", "b:1")]).is_err());
        assert!(check_listeners(&[listener("PLAINTEXT", "a:1"), listener("SSL", "b:1")]).is_ok());
    }
}
