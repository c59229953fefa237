//! The cluster secret (`--cluster-secret-file`): what every node of one cluster and the
//! operator's `cohort cluster` share, and prove to each other on the peer port (`handshake`).
//!
//! The file is read once, at start-up, and refused unless it is a regular file only its owner
//! may read or write (as ssh refuses a private key others can read: a secret the whole machine
//! can read protects nothing) holding between [`SECRET_BYTES_MIN`] and [`SECRET_BYTES_MAX`]
//! bytes once trailing whitespace (the newline an editor adds) is cut. The lower bound is what
//! makes the handshake safe against offline guessing: anyone who connects sees one HMAC of the
//! secret over known nonces, so the secret must be too long to enumerate, not a password.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Shortest secret accepted: 32 bytes (`head -c 32 /dev/urandom | base64` gives 44).
pub const SECRET_BYTES_MIN: usize = 32;
/// Longest secret accepted; a bigger file is not a secret someone meant to give.
pub const SECRET_BYTES_MAX: usize = 4096;

/// Why a secret file was refused. The messages never show the file's contents.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    #[error("{path}: cannot be read ({source})")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a regular file")]
    NotAFile { path: PathBuf },
    #[error("{path}: mode {mode:04o} lets others than its owner in (chmod 600 it)")]
    Permissions { path: PathBuf, mode: u32 },
    #[error("{path}: {len} bytes, fewer than {SECRET_BYTES_MIN} (generate one with `head -c 32 /dev/urandom | base64`)")]
    TooShort { path: PathBuf, len: usize },
    #[error("{path}: {len} bytes, more than {SECRET_BYTES_MAX}")]
    TooLong { path: PathBuf, len: usize },
}

/// Why secret bytes were refused (the file-less part of [`SecretFileError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("{0} bytes, fewer than {SECRET_BYTES_MIN}")]
    TooShort(usize),
    #[error("{0} bytes, more than {SECRET_BYTES_MAX}")]
    TooLong(usize),
}

/// The secret's bytes; `Debug` never shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterSecret(Arc<[u8]>);

impl fmt::Debug for ClusterSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClusterSecret({} bytes, redacted)", self.0.len())
    }
}

impl ClusterSecret {
    /// The secret in `bytes`, trailing whitespace cut.
    pub fn from_bytes(bytes: &[u8]) -> Result<ClusterSecret, SecretError> {
        let end = bytes
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        let bytes = &bytes[..end];
        if bytes.len() < SECRET_BYTES_MIN {
            return Err(SecretError::TooShort(bytes.len()));
        }
        if bytes.len() > SECRET_BYTES_MAX {
            return Err(SecretError::TooLong(bytes.len()));
        }
        Ok(ClusterSecret(Arc::from(bytes)))
    }

    /// Reads and checks the secret file at `path` (the rules are the module's).
    pub fn from_file(path: &Path) -> Result<ClusterSecret, SecretFileError> {
        let read = |source| SecretFileError::Read {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(SecretFileError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        check_mode(path, &meta)?;
        if meta.len() > (SECRET_BYTES_MAX as u64).saturating_mul(2) {
            return Err(SecretFileError::TooLong {
                path: path.to_path_buf(),
                len: usize::try_from(meta.len()).unwrap_or(usize::MAX),
            });
        }
        let bytes = std::fs::read(path).map_err(read)?;
        ClusterSecret::from_bytes(&bytes).map_err(|e| match e {
            SecretError::TooShort(len) => SecretFileError::TooShort {
                path: path.to_path_buf(),
                len,
            },
            SecretError::TooLong(len) => SecretFileError::TooLong {
                path: path.to_path_buf(),
                len,
            },
        })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(unix)]
fn check_mode(path: &Path, meta: &std::fs::Metadata) -> Result<(), SecretFileError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(SecretFileError::Permissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), SecretFileError> {
    Ok(())
}

/// How the peer port authenticates: not at all (the port is open to whoever reaches it), or by
/// the cluster secret, proven by both sides and then sealing every frame (`handshake`, `frame`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PeerAuth {
    #[default]
    Open,
    Secret(ClusterSecret),
}

impl PeerAuth {
    /// `Open` without a file, else the secret in it.
    pub fn from_file(path: Option<&Path>) -> Result<PeerAuth, SecretFileError> {
        match path {
            None => Ok(PeerAuth::Open),
            Some(path) => ClusterSecret::from_file(path).map(PeerAuth::Secret),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const GOOD: &str = "0123456789abcdef0123456789abcdef";

    fn file(contents: &[u8], mode: u32) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.secret");
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    #[test]
    fn a_private_file_of_32_bytes_or_more_is_a_secret_and_its_newline_is_cut() {
        let (_d, path) = file(format!("{GOOD}\n").as_bytes(), 0o600);
        let secret = ClusterSecret::from_file(&path).unwrap();
        assert_eq!(secret.bytes(), GOOD.as_bytes());
        assert!(!format!("{secret:?}").contains(GOOD));
        let (_d, path) = file(GOOD.as_bytes(), 0o400);
        assert!(ClusterSecret::from_file(&path).is_ok());
    }

    #[test]
    fn a_missing_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let got = ClusterSecret::from_file(&dir.path().join("nope"));
        assert!(matches!(got, Err(SecretFileError::Read { .. })), "{got:?}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let got = ClusterSecret::from_file(dir.path());
        assert!(
            matches!(got, Err(SecretFileError::NotAFile { .. })),
            "{got:?}"
        );
    }

    #[test]
    fn a_file_others_may_read_or_write_is_refused() {
        for mode in [0o640, 0o604, 0o620, 0o602, 0o644] {
            let (_d, path) = file(GOOD.as_bytes(), mode);
            let got = ClusterSecret::from_file(&path);
            assert!(
                matches!(got, Err(SecretFileError::Permissions { mode: m, .. }) if m == mode),
                "{mode:o}: {got:?}"
            );
        }
    }

    #[test]
    fn a_short_secret_is_refused_and_never_shown() {
        let short = "tooshort-but-secret\n\n";
        let (_d, path) = file(short.as_bytes(), 0o600);
        let got = ClusterSecret::from_file(&path).unwrap_err();
        assert!(
            matches!(got, SecretFileError::TooShort { len: 19, .. }),
            "{got:?}"
        );
        assert!(!got.to_string().contains("tooshort"), "{got}");
        let (_d, path) = file(b"   \n", 0o600);
        assert!(matches!(
            ClusterSecret::from_file(&path),
            Err(SecretFileError::TooShort { len: 0, .. })
        ));
    }

    #[test]
    fn a_huge_file_is_refused() {
        let (_d, path) = file(&vec![b'x'; SECRET_BYTES_MAX + 1], 0o600);
        assert!(matches!(
            ClusterSecret::from_file(&path),
            Err(SecretFileError::TooLong { .. })
        ));
        let (_d, path) = file(&vec![b'x'; SECRET_BYTES_MAX * 3], 0o600);
        assert!(matches!(
            ClusterSecret::from_file(&path),
            Err(SecretFileError::TooLong { .. })
        ));
        let (_d, path) = file(&vec![b'x'; SECRET_BYTES_MAX], 0o600);
        assert!(ClusterSecret::from_file(&path).is_ok());
    }

    #[test]
    fn no_file_is_an_open_port() {
        assert_eq!(PeerAuth::from_file(None).unwrap(), PeerAuth::Open);
    }
}
