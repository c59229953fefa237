//! Files of `NAME:PASSWORD` lines, one user a line, `#` comments and blank lines skipped: the
//! form of `--sasl-plain-users` and `--http-basic-auth`. The password is everything after the
//! first `:` (it may hold colons). Callers hash each password at once and drop the text.

use std::io::Read;
use std::path::Path;

/// Longest users file read.
pub const USER_FILE_BYTES_MAX: u64 = 16 << 20;

/// Why a users file cannot be used (never carries a line's text: it holds a password).
#[derive(Debug, thiserror::Error)]
pub enum UserFileError {
    /// It cannot be opened or read.
    #[error("cannot be read: {0}")]
    Read(#[from] std::io::Error),
    /// A line is not `NAME:PASSWORD` with both parts non-empty.
    #[error("line {0} is not NAME:PASSWORD")]
    Line(usize),
}

/// The file's text, at most [`USER_FILE_BYTES_MAX`] bytes of it.
pub fn read(path: &Path) -> Result<String, UserFileError> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(USER_FILE_BYTES_MAX)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// Every `(name, password)` of `text`, in file order.
pub fn parse(text: &str) -> Result<Vec<(&str, &str)>, UserFileError> {
    let mut users = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let user = line
            .split_once(':')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
            .ok_or(UserFileError::Line(i + 1))?;
        users.push(user);
    }
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_name_colon_password() {
        let users = parse("# ops\nalice:wonder:land\r\n\n  \nbob:b\n").unwrap();
        assert_eq!(users, [("alice", "wonder:land"), ("bob", "b")]);
        assert!(parse("").unwrap().is_empty());
        for bad in ["alice", ":pw", "alice:", "ok:1\nnocolon"] {
            let line = bad.lines().count();
            assert!(
                matches!(parse(bad), Err(UserFileError::Line(n)) if n == line),
                "{bad:?}"
            );
        }
        // The message names the line, never its text.
        let message = parse("alice:pw\nsecret-without-colon")
            .unwrap_err()
            .to_string();
        assert_eq!(message, "line 2 is not NAME:PASSWORD");
    }
}
