//! `--http-basic-auth FILE`: HTTP Basic authentication (RFC 7617) of the HTTP side door.
//!
//! The file has the form of `--sasl-plain-users` ([`super::user_file`]). Each password is
//! hashed as PLAIN passwords are (salted PBKDF2) when the file is read, and only the hash is
//! kept; a request's password is hashed with the same salt and the hashes are compared in
//! constant time. An unknown name is checked against a decoy hash, so the answer takes as
//! long for a wrong name as for a wrong password.
//!
//! The liveness and readiness probes stay open (decision 0151): orchestrators probe them
//! without credentials, and they tell no more than whether the node is up and what it waits
//! for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use ring::rand::SystemRandom;

use super::credentials::{plain_hash, salt, CredentialError};
use super::scram::constant_time_eq;
use super::user_file::{self, UserFileError};

/// What a refused request is told: the scheme and the realm (RFC 7617 section 2).
pub const CHALLENGE: &str = "Basic realm=\"cohort\"";

/// Paths served without credentials: the probes.
pub const OPEN_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// Why `--http-basic-auth` cannot be used (never carries a line's text: it holds a password).
#[derive(Debug, thiserror::Error)]
pub enum HttpBasicAuthError {
    /// Unreadable, or a line is not `NAME:PASSWORD`.
    #[error("--http-basic-auth {}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: UserFileError,
    },
    /// Not one user in it: nothing could ever be served.
    #[error("--http-basic-auth {}: no NAME:PASSWORD line", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The system's random source failed.
    #[error("--http-basic-auth: {0}")]
    Random(#[from] CredentialError),
}

/// A password as kept.
struct Hashed {
    salt: Vec<u8>,
    hash: Vec<u8>,
}

impl Hashed {
    fn matches(&self, password: &[u8]) -> bool {
        constant_time_eq(&plain_hash(&self.salt, password), &self.hash)
    }
}

/// Who may use the HTTP side door (past its open probes).
pub struct HttpBasicAuth {
    users: HashMap<String, Hashed>,
    /// Checked for names not in the file (it matches no password that could be sent: its
    /// hash is of a password nobody knows).
    decoy: Hashed,
}

impl std::fmt::Debug for HttpBasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBasicAuth")
            .field("users", &self.users.len())
            .finish_non_exhaustive()
    }
}

/// Why `path` cannot be used, if it cannot (what the start-up rule checks; nothing is
/// hashed).
pub fn check_file(path: &Path) -> Result<(), HttpBasicAuthError> {
    read_users(path).map(drop)
}

/// The file's text, once it is known to hold at least one well-formed user and nothing else.
fn read_users(path: &Path) -> Result<String, HttpBasicAuthError> {
    let failed = |source| HttpBasicAuthError::File {
        path: path.to_owned(),
        source,
    };
    let text = user_file::read(path).map_err(failed)?;
    if user_file::parse(&text).map_err(failed)?.is_empty() {
        return Err(HttpBasicAuthError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(text)
}

impl HttpBasicAuth {
    /// Reads `path` and hashes its passwords.
    pub fn load(path: &Path) -> Result<HttpBasicAuth, HttpBasicAuthError> {
        let text = read_users(path)?;
        let failed = |source| HttpBasicAuthError::File {
            path: path.to_owned(),
            source,
        };
        let rng = SystemRandom::new();
        let mut users = HashMap::new();
        for (name, password) in user_file::parse(&text).map_err(failed)? {
            let salt = salt(&rng)?;
            let hash = plain_hash(&salt, password.as_bytes());
            users.insert(name.to_owned(), Hashed { salt, hash });
        }
        // The decoy's password is random bytes, dropped here.
        let decoy_password = salt(&rng)?;
        let decoy_salt = salt(&rng)?;
        let decoy = Hashed {
            hash: plain_hash(&decoy_salt, &decoy_password),
            salt: decoy_salt,
        };
        Ok(HttpBasicAuth { users, decoy })
    }

    /// How many users may authenticate.
    pub fn users(&self) -> usize {
        self.users.len()
    }

    /// Whether `authorization` (an `Authorization` header's value, if the request had one)
    /// names a user of the file with their password.
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        let Some((name, password)) = authorization.and_then(basic_credentials) else {
            return false;
        };
        match self.users.get(&name) {
            Some(user) => user.matches(password.as_bytes()),
            None => {
                // Same work as a known name: the time does not tell which names exist.
                let _ = self.decoy.matches(password.as_bytes());
                false
            }
        }
    }
}

/// The name and password of a `Basic` credentials value (the scheme is case-insensitive;
/// RFC 7617 section 2).
fn basic_credentials(value: &str) -> Option<(String, String)> {
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (name, password) = text.split_once(':')?;
    Some((name.to_owned(), password.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user_pass: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(user_pass)
        )
    }

    #[test]
    fn only_a_user_of_the_file_with_their_password_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("http-users");
        std::fs::write(&file, "# scrapers\nprom:s3cret:x\nops:other\n").unwrap();
        let auth = HttpBasicAuth::load(&file).unwrap();
        assert_eq!(auth.users(), 2);
        assert!(auth.allows(Some(&header("prom:s3cret:x"))));
        assert!(auth.allows(Some(&header("ops:other"))));
        assert!(auth.allows(Some(&format!("basic  {}", &header("ops:other")[6..]))));
        assert!(!auth.allows(None));
        assert!(!auth.allows(Some(&header("prom:s3cret"))));
        assert!(!auth.allows(Some(&header("prom:other"))));
        assert!(!auth.allows(Some(&header("nobody:s3cret:x"))));
        assert!(!auth.allows(Some(&header("prom"))));
        assert!(!auth.allows(Some("Bearer cHJvbTpzM2NyZXQ6eA==")));
        assert!(!auth.allows(Some("Basic !!!not-base64")));
        assert!(!auth.allows(Some("Basic")));
        assert!(!format!("{auth:?}").contains("prom"));
    }

    #[test]
    fn a_file_without_users_or_with_a_bad_line_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("http-users");
        std::fs::write(&file, "# nobody yet\n\n").unwrap();
        assert!(matches!(
            HttpBasicAuth::load(&file),
            Err(HttpBasicAuthError::Empty { .. })
        ));
        std::fs::write(&file, "prom:hunter2\nleaked-secret\n").unwrap();
        let e = HttpBasicAuth::load(&file).unwrap_err().to_string();
        assert!(e.contains("line 2 is not NAME:PASSWORD"), "{e}");
        assert!(
            !e.contains("leaked-secret") && !e.contains("hunter2"),
            "{e}"
        );
        assert!(matches!(
            check_file(&dir.path().join("missing")),
            Err(HttpBasicAuthError::File {
                source: UserFileError::Read(_),
                ..
            })
        ));
    }
}
