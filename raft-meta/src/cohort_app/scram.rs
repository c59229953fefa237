//! SCRAM credentials as replicated state (Kafka's `ScramControlManager`): per (user, mechanism)
//! only the salt, the iteration count, StoredKey and ServerKey — never a password.
//!
//! ```text
//!  AlterScramCredentials  { changes: [user: Upsert(mechanism, credential) | Delete(mechanism)] }
//!     each change checked here, at apply (name, iterations, existence of what is deleted):
//!     the valid ones applied, every change answered in request order
//!  BootstrapScramCredentials { credentials } (a leader's `--scram-user` flags, hashed)
//!     applied once per cluster: the absent ones created, then never again (as
//!     `kafka-storage.sh format --add-scram` only acts on a new cluster)
//! ```
//!
//! Keys are computed by the node that received the request (from the salted password a
//! client sends, or from a flag's password); the log and the snapshots hold only these.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Kafka's bounds on SCRAM iterations (`ScramMechanism.minIterations` of both mechanisms and
/// `ScramControlManager.MAX_ITERATIONS`).
pub const SCRAM_ITERATIONS_MIN: u32 = 4096;
/// See [`SCRAM_ITERATIONS_MIN`].
pub const SCRAM_ITERATIONS_MAX: u32 = 16_384;

/// The two SCRAM mechanisms, as Kafka numbers them on the wire (`ScramMechanism.type()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ScramMechanismType {
    /// SCRAM-SHA-256, type 1.
    Sha256,
    /// SCRAM-SHA-512, type 2.
    Sha512,
}

impl ScramMechanismType {
    /// Kafka's type byte.
    pub fn kafka_type(self) -> i8 {
        match self {
            ScramMechanismType::Sha256 => 1,
            ScramMechanismType::Sha512 => 2,
        }
    }

    /// By Kafka's type byte (0 is UNKNOWN there, like every other value but 1 and 2).
    pub fn from_kafka_type(t: i8) -> Option<Self> {
        match t {
            1 => Some(ScramMechanismType::Sha256),
            2 => Some(ScramMechanismType::Sha512),
            _ => None,
        }
    }

    /// The SASL mechanism name.
    pub fn name(self) -> &'static str {
        match self {
            ScramMechanismType::Sha256 => "SCRAM-SHA-256",
            ScramMechanismType::Sha512 => "SCRAM-SHA-512",
        }
    }
}

/// What is kept of one SCRAM password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredScramCredential {
    pub salt: Vec<u8>,
    /// H(ClientKey).
    pub stored_key: Vec<u8>,
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: Vec<u8>,
    pub iterations: u32,
}

impl std::fmt::Debug for StoredScramCredential {
    // A salt with a stored key is enough to brute-force the password offline: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredScramCredential")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// One user's change in an AlterScramCredentials command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScramOp {
    /// Creates or replaces the user's credential for `mechanism`.
    Upsert {
        mechanism: ScramMechanismType,
        credential: StoredScramCredential,
    },
    /// Removes it (refused if there is none).
    Delete { mechanism: ScramMechanismType },
}

/// A change for one user (Kafka allows one per user per request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserScramChange {
    pub user: String,
    pub op: ScramOp,
}

/// A bootstrap credential (from a leader's `--scram-user`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScramCredentialRecord {
    pub user: String,
    pub mechanism: ScramMechanismType,
    pub credential: StoredScramCredential,
}

/// Why one user's change was refused (Kafka's error codes, by name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ScramChangeError {
    /// RESOURCE_NOT_FOUND.
    #[error("Attempt to delete a user credential that does not exist")]
    NotFound,
    /// UNACCEPTABLE_CREDENTIAL, with Kafka's message.
    #[error("{0}")]
    Unacceptable(String),
    /// DUPLICATE_RESOURCE.
    #[error("A user credential cannot be altered twice in the same request")]
    Duplicate,
}

/// Checks what needs no state: the name and the iteration count (Kafka's
/// `validateScramUsernameAndMechanism` and `validateUpsertion`; the mechanism is typed here).
pub fn check_change(change: &UserScramChange) -> Result<(), ScramChangeError> {
    if change.user.is_empty() {
        return Err(ScramChangeError::Unacceptable(
            "Username must not be empty".to_owned(),
        ));
    }
    if let ScramOp::Upsert { credential, .. } = &change.op {
        if credential.iterations < SCRAM_ITERATIONS_MIN {
            return Err(ScramChangeError::Unacceptable(
                "Too few iterations".to_owned(),
            ));
        }
        if credential.iterations > SCRAM_ITERATIONS_MAX {
            return Err(ScramChangeError::Unacceptable(
                "Too many iterations".to_owned(),
            ));
        }
    }
    Ok(())
}

/// Every SCRAM credential of the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScramTable {
    credentials: BTreeMap<(String, ScramMechanismType), StoredScramCredential>,
    /// Whether a bootstrap was applied (then later ones are ignored).
    bootstrapped: bool,
}

impl ScramTable {
    /// `user`'s credential for `mechanism`.
    pub fn get(&self, user: &str, mechanism: ScramMechanismType) -> Option<&StoredScramCredential> {
        // Two keys at most per user: a range over the user's entries would need a borrowed
        // tuple key; cloning the name is cheap next to one authentication.
        self.credentials.get(&(user.to_owned(), mechanism))
    }

    /// Every (user, mechanism, credential), by user then mechanism.
    pub fn iter(
        &self,
    ) -> impl Iterator<Item = (&str, ScramMechanismType, &StoredScramCredential)> + '_ {
        self.credentials
            .iter()
            .map(|((u, m), c)| (u.as_str(), *m, c))
    }

    /// The mechanisms and iteration counts `user` has credentials for.
    pub fn describe(&self, user: &str) -> Vec<(ScramMechanismType, u32)> {
        [ScramMechanismType::Sha256, ScramMechanismType::Sha512]
            .into_iter()
            .filter_map(|m| self.get(user, m).map(|c| (m, c.iterations)))
            .collect()
    }

    /// Names of every user with at least one credential, sorted.
    pub fn users(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.credentials.keys().map(|(u, _)| u.as_str()).collect();
        out.dedup();
        out
    }

    pub fn len(&self) -> usize {
        self.credentials.len()
    }

    pub fn is_empty(&self) -> bool {
        self.credentials.is_empty()
    }

    pub fn bootstrapped(&self) -> bool {
        self.bootstrapped
    }

    /// Applies the valid changes; answers each in order.
    pub fn alter(&mut self, changes: Vec<UserScramChange>) -> Vec<Result<(), ScramChangeError>> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(changes.len());
        for change in changes {
            let result = if !seen.insert(change.user.clone()) {
                Err(ScramChangeError::Duplicate)
            } else {
                check_change(&change).and_then(|()| self.apply_one(change))
            };
            out.push(result);
        }
        out
    }

    fn apply_one(&mut self, change: UserScramChange) -> Result<(), ScramChangeError> {
        match change.op {
            ScramOp::Upsert {
                mechanism,
                credential,
            } => {
                self.credentials
                    .insert((change.user, mechanism), credential);
                Ok(())
            }
            ScramOp::Delete { mechanism } => self
                .credentials
                .remove(&(change.user, mechanism))
                .map(drop)
                .ok_or(ScramChangeError::NotFound),
        }
    }

    /// Creates the absent ones of `credentials` unless a bootstrap was applied before; returns
    /// whether this one was.
    pub fn bootstrap(&mut self, credentials: Vec<ScramCredentialRecord>) -> bool {
        if self.bootstrapped {
            return false;
        }
        self.bootstrapped = true;
        for r in credentials {
            let valid = check_change(&UserScramChange {
                user: r.user.clone(),
                op: ScramOp::Upsert {
                    mechanism: r.mechanism,
                    credential: r.credential.clone(),
                },
            })
            .is_ok();
            if valid {
                self.credentials
                    .entry((r.user, r.mechanism))
                    .or_insert(r.credential);
            }
        }
        true
    }

    /// The state a snapshot holds: every credential and the bootstrap mark.
    pub fn restore(&mut self, records: Vec<ScramCredentialRecord>, bootstrapped: bool) {
        self.credentials = records
            .into_iter()
            .map(|r| ((r.user, r.mechanism), r.credential))
            .collect();
        self.bootstrapped = bootstrapped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(iterations: u32) -> StoredScramCredential {
        StoredScramCredential {
            salt: vec![1; 4],
            stored_key: vec![2; 32],
            server_key: vec![3; 32],
            iterations,
        }
    }

    fn upsert(user: &str, m: ScramMechanismType, iterations: u32) -> UserScramChange {
        UserScramChange {
            user: user.to_owned(),
            op: ScramOp::Upsert {
                mechanism: m,
                credential: cred(iterations),
            },
        }
    }

    fn delete(user: &str, m: ScramMechanismType) -> UserScramChange {
        UserScramChange {
            user: user.to_owned(),
            op: ScramOp::Delete { mechanism: m },
        }
    }

    #[test]
    fn changes_are_checked_one_by_one_as_kafka_checks_them() {
        use ScramMechanismType::*;
        let mut t = ScramTable::default();
        let answers = t.alter(vec![
            upsert("alice", Sha256, 8192),
            upsert("", Sha256, 8192),
            upsert("bob", Sha512, 4095),
            upsert("carol", Sha512, 16_385),
            delete("dave", Sha256),
            upsert("alice", Sha512, 4096),
        ]);
        assert_eq!(
            answers,
            vec![
                Ok(()),
                Err(ScramChangeError::Unacceptable(
                    "Username must not be empty".into()
                )),
                Err(ScramChangeError::Unacceptable("Too few iterations".into())),
                Err(ScramChangeError::Unacceptable("Too many iterations".into())),
                Err(ScramChangeError::NotFound),
                Err(ScramChangeError::Duplicate),
            ]
        );
        assert_eq!(t.describe("alice"), vec![(Sha256, 8192)]);
        assert_eq!(t.users(), vec!["alice"]);
        assert_eq!(t.alter(vec![upsert("alice", Sha512, 4096)]), vec![Ok(())]);
        assert_eq!(t.describe("alice"), vec![(Sha256, 8192), (Sha512, 4096)]);
        assert_eq!(t.alter(vec![delete("alice", Sha256)]), vec![Ok(())]);
        assert_eq!(t.describe("alice"), vec![(Sha512, 4096)]);
        assert!(t.get("alice", Sha256).is_none());
        assert_eq!(
            t.alter(vec![delete("alice", Sha256)]),
            vec![Err(ScramChangeError::NotFound)]
        );
    }

    #[test]
    fn a_bootstrap_applies_once_and_never_overwrites() {
        use ScramMechanismType::*;
        let mut t = ScramTable::default();
        t.alter(vec![upsert("alice", Sha256, 8192)]);
        let flags = vec![
            ScramCredentialRecord {
                user: "alice".into(),
                mechanism: Sha256,
                credential: cred(4096),
            },
            ScramCredentialRecord {
                user: "bob".into(),
                mechanism: Sha512,
                credential: cred(4096),
            },
        ];
        assert!(t.bootstrap(flags.clone()));
        assert_eq!(t.describe("alice"), vec![(Sha256, 8192)]);
        assert_eq!(t.describe("bob"), vec![(Sha512, 4096)]);
        t.alter(vec![delete("bob", Sha512)]);
        assert!(!t.bootstrap(flags));
        assert!(t.describe("bob").is_empty(), "a deleted user stays deleted");
        assert!(t.bootstrapped());
    }

    #[test]
    fn debug_shows_no_key() {
        let text = format!("{:?}", cred(4096));
        assert!(!text.contains("[2"), "{text}");
        assert!(text.contains("4096"));
    }
}
