//! The users a node authenticates, from its flags: SCRAM credentials (`--scram-user`) and
//! PLAIN users (`--sasl-plain-users FILE`), every password turned into a salted hash as it is
//! read and then forgotten.
//!
//! These are node-local: each node of a cluster must be given the same flags. Replicating
//! them through Raft (as Kafka's `kafka-storage.sh format --add-scram` and
//! AlterUserScramCredentials do) is not done yet (decision 0122).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ring::rand::{SecureRandom, SystemRandom};

use super::scram::{constant_time_eq, ScramCredential, ScramMechanism};

/// Salt bytes of every credential.
const SALT_BYTES: usize = 32;
/// PBKDF2 iterations of PLAIN password hashes (Kafka keeps PLAIN passwords in the clear in
/// its JAAS file; Cohort keeps them hashed like SCRAM's, at SCRAM's minimum cost).
const PLAIN_ITERATIONS: u32 = super::scram::ITERATIONS_MIN;
/// Longest PLAIN users file read.
const PLAIN_FILE_BYTES_MAX: u64 = 16 << 20;

/// Why the credentials cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// `--scram-user` is not `NAME:MECHANISM:PASSWORD`.
    #[error("--scram-user must be NAME:SCRAM-SHA-256|SCRAM-SHA-512:PASSWORD (got one for {0:?})")]
    BadScramUser(String),
    /// The PLAIN users file cannot be read.
    #[error("--sasl-plain-users {}: {source}", path.display())]
    PlainFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line of it is not `NAME:PASSWORD`.
    #[error("--sasl-plain-users {}: line {line} is not NAME:PASSWORD", path.display())]
    PlainLine {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
    },
    /// The system's random source failed.
    #[error("no randomness for salts")]
    Random,
}

/// A `--scram-user` value split, password included (only while the credential is made).
pub fn parse_scram_user(s: &str) -> Option<(&str, ScramMechanism, &str)> {
    let (name, rest) = s.split_once(':')?;
    let (mechanism, password) = rest.split_once(':')?;
    let mechanism = ScramMechanism::from_name(mechanism)?;
    (!name.is_empty() && !password.is_empty()).then_some((name, mechanism, password))
}

/// A PLAIN password as kept: PBKDF2-HMAC-SHA256 with a salt.
#[derive(Clone)]
struct PlainCredential {
    salt: Vec<u8>,
    hash: Vec<u8>,
}

/// Every user this node knows.
#[derive(Default)]
pub struct Credentials {
    scram: HashMap<(ScramMechanism, String), ScramCredential>,
    plain: HashMap<String, PlainCredential>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("scram_users", &self.scram.len())
            .field("plain_users", &self.plain.len())
            .finish()
    }
}

fn salt(rng: &SystemRandom) -> Result<Vec<u8>, CredentialError> {
    let mut salt = vec![0u8; SALT_BYTES];
    rng.fill(&mut salt).map_err(|_| CredentialError::Random)?;
    Ok(salt)
}

fn plain_hash(salt: &[u8], password: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; ring::digest::SHA256_OUTPUT_LEN];
    let rounds = std::num::NonZeroU32::new(PLAIN_ITERATIONS).unwrap_or(std::num::NonZeroU32::MIN);
    ring::pbkdf2::derive(
        ring::pbkdf2::PBKDF2_HMAC_SHA256,
        rounds,
        salt,
        password,
        &mut out,
    );
    out
}

impl Credentials {
    /// From `--scram-user` values (hashed with `iterations`) and a PLAIN users file.
    pub fn load(
        scram_users: &[String],
        iterations: u32,
        plain_users: Option<&Path>,
    ) -> Result<Credentials, CredentialError> {
        let rng = SystemRandom::new();
        let mut out = Credentials::default();
        for s in scram_users {
            let (name, mechanism, password) = parse_scram_user(s).ok_or_else(|| {
                CredentialError::BadScramUser(s.split(':').next().unwrap_or("").to_owned())
            })?;
            let credential =
                ScramCredential::new(mechanism, password.as_bytes(), salt(&rng)?, iterations);
            out.scram.insert((mechanism, name.to_owned()), credential);
        }
        if let Some(path) = plain_users {
            out.load_plain(path, &rng)?;
        }
        Ok(out)
    }

    fn load_plain(&mut self, path: &Path, rng: &SystemRandom) -> Result<(), CredentialError> {
        use std::io::Read;
        let failed = |source| CredentialError::PlainFile {
            path: path.to_owned(),
            source,
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(failed)?
            .take(PLAIN_FILE_BYTES_MAX)
            .read_to_string(&mut text)
            .map_err(failed)?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let (name, password) = line
                .split_once(':')
                .filter(|(n, p)| !n.is_empty() && !p.is_empty())
                .ok_or_else(|| CredentialError::PlainLine {
                    path: path.to_owned(),
                    line: i + 1,
                })?;
            let salt = salt(rng)?;
            let hash = plain_hash(&salt, password.as_bytes());
            self.plain
                .insert(name.to_owned(), PlainCredential { salt, hash });
        }
        Ok(())
    }

    /// The SCRAM credential of `user` for `mechanism`.
    pub fn scram(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self.scram.get(&(mechanism, user.to_owned())).cloned()
    }

    /// Whether `password` is `user`'s PLAIN password.
    pub fn plain_matches(&self, user: &str, password: &[u8]) -> bool {
        match self.plain.get(user) {
            Some(c) => constant_time_eq(&plain_hash(&c.salt, password), &c.hash),
            None => false,
        }
    }

    /// How many users of each kind (for the start-up summary; never names or secrets).
    pub fn counts(&self) -> (usize, usize) {
        (self.scram.len(), self.plain.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_kept_hashed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "# users\nalice:wonder:land\n\nbob:builder\n").unwrap();
        let c = Credentials::load(
            &["carol:SCRAM-SHA-512:pw:with:colons".into()],
            4096,
            Some(&file),
        )
        .unwrap();
        assert!(c.plain_matches("alice", b"wonder:land"));
        assert!(!c.plain_matches("alice", b"wonder"));
        assert!(!c.plain_matches("mallory", b"x"));
        assert!(c.scram(ScramMechanism::Sha512, "carol").is_some());
        assert!(c.scram(ScramMechanism::Sha256, "carol").is_none());
        assert_eq!(c.counts(), (1, 2));
        assert!(!format!("{c:?}").contains("alice"));
        std::fs::write(&file, "nopassword\n").unwrap();
        assert!(matches!(
            Credentials::load(&[], 4096, Some(&file)),
            Err(CredentialError::PlainLine { line: 1, .. })
        ));
        assert!(parse_scram_user("a:SCRAM-SHA-1:p").is_none());
        assert!(parse_scram_user(":SCRAM-SHA-256:p").is_none());
        assert!(parse_scram_user("a:SCRAM-SHA-256:").is_none());
    }
}
