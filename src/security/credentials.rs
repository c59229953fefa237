//! The users a node authenticates: SCRAM credentials from the cluster's replicated state
//! (installed once the node's Raft replica runs), PLAIN users from `--sasl-plain-users FILE`
//! (node-local). Every password is turned into a salted hash as it is read and then
//! forgotten.
//!
//! `--scram-user` credentials are hashed here too, but they are only what this node proposes
//! as the cluster's bootstrap credentials (decision 0133): a node authenticates SCRAM users
//! from the replicated state alone, so every node authenticates the same users.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use ring::rand::{SecureRandom, SystemRandom};

use super::scram::{constant_time_eq, ScramCredential, ScramMechanism};
use super::user_file::{self, UserFileError};

/// Salt bytes of every credential.
const SALT_BYTES: usize = 32;
/// PBKDF2 iterations of PLAIN password hashes (Kafka keeps PLAIN passwords in the clear in
/// its JAAS file; Cohort keeps them hashed like SCRAM's, at SCRAM's minimum cost).
const PLAIN_ITERATIONS: u32 = super::scram::ITERATIONS_MIN;

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

/// Where SCRAM credentials are looked up: the replicated state (`replicated::scram`).
pub trait ScramLookup: Send + Sync {
    /// `user`'s credential for `mechanism`, if the cluster has one.
    fn scram(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential>;
}

/// Every user this node knows.
#[derive(Default)]
pub struct Credentials {
    /// `--scram-user`, hashed: proposed as the cluster's bootstrap credentials.
    bootstrap: Vec<(String, ScramCredential)>,
    /// The replicated credentials, once the replica runs (before: no SCRAM user is known).
    scram: OnceLock<Arc<dyn ScramLookup>>,
    plain: HashMap<String, PlainCredential>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("scram_bootstrap_users", &self.bootstrap.len())
            .field("scram_installed", &self.scram.get().is_some())
            .field("plain_users", &self.plain.len())
            .finish()
    }
}

pub(crate) fn salt(rng: &SystemRandom) -> Result<Vec<u8>, CredentialError> {
    let mut salt = vec![0u8; SALT_BYTES];
    rng.fill(&mut salt).map_err(|_| CredentialError::Random)?;
    Ok(salt)
}

pub(crate) fn plain_hash(salt: &[u8], password: &[u8]) -> Vec<u8> {
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

/// A `--sasl-plain-users` file that cannot be used, as the flag's error.
fn plain_file_error(path: &Path, e: UserFileError) -> CredentialError {
    let path = path.to_owned();
    match e {
        UserFileError::Read(source) => CredentialError::PlainFile { path, source },
        UserFileError::Line(line) => CredentialError::PlainLine { path, line },
    }
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
            // A later flag for the same user and mechanism wins, as a map insert did.
            out.bootstrap
                .retain(|(n, c)| !(n == name && c.mechanism == mechanism));
            out.bootstrap.push((name.to_owned(), credential));
        }
        if let Some(path) = plain_users {
            out.load_plain(path, &rng)?;
        }
        Ok(out)
    }

    fn load_plain(&mut self, path: &Path, rng: &SystemRandom) -> Result<(), CredentialError> {
        let failed = |e| plain_file_error(path, e);
        let text = user_file::read(path).map_err(failed)?;
        let users = user_file::parse(&text).map_err(failed)?;
        for (name, password) in users {
            let salt = salt(rng)?;
            let hash = plain_hash(&salt, password.as_bytes());
            self.plain
                .insert(name.to_owned(), PlainCredential { salt, hash });
        }
        Ok(())
    }

    /// The SCRAM credential of `user` for `mechanism`, from the replicated state.
    pub fn scram(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self.scram.get().and_then(|s| s.scram(mechanism, user))
    }

    /// Makes `source` where SCRAM users are looked up (once; later calls are ignored).
    pub fn install_scram(&self, source: Arc<dyn ScramLookup>) {
        let _ = self.scram.set(source);
    }

    /// The `--scram-user` credentials, hashed (what this node proposes as the bootstrap).
    pub fn scram_bootstrap(&self) -> &[(String, ScramCredential)] {
        &self.bootstrap
    }

    /// Whether `password` is `user`'s PLAIN password.
    pub fn plain_matches(&self, user: &str, password: &[u8]) -> bool {
        match self.plain.get(user) {
            Some(c) => constant_time_eq(&plain_hash(&c.salt, password), &c.hash),
            None => false,
        }
    }

    /// How many users of each kind the flags give (never names or secrets).
    pub fn counts(&self) -> (usize, usize) {
        (self.bootstrap.len(), self.plain.len())
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
        // Flag credentials are only the bootstrap: nothing authenticates before the
        // replicated state is installed.
        assert!(c.scram(ScramMechanism::Sha512, "carol").is_none());
        assert_eq!(c.scram_bootstrap().len(), 1);
        assert_eq!(c.scram_bootstrap()[0].0, "carol");
        assert_eq!(c.scram_bootstrap()[0].1.mechanism, ScramMechanism::Sha512);
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
