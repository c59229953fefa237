//! Explicit field-by-field encoding: big-endian integers, strings as a u32 length then the
//! bytes, optional fields behind a 0/1 byte. The reader treats its input as hostile: every
//! length and count is checked against the bytes left before anything is allocated.

use crate::format::FormatError;

/// Builds an explicitly encoded body.
#[derive(Debug, Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    /// A length or count. Every one we write is bounded far below 4 GiB by the limits of what
    /// holds it (frames, snapshots, memberships).
    pub fn len(&mut self, n: usize) {
        self.0
            .extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
    }
    pub fn str(&mut self, v: &str) {
        self.len(v.len());
        self.0.extend_from_slice(v.as_bytes());
    }
    /// `None` as 0, `Some(v)` as 1 then `v`.
    pub fn opt<T>(&mut self, v: Option<&T>, put: impl FnOnce(&mut Self, &T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                put(self, v);
            }
        }
    }
}

/// Reads an explicitly encoded body; `what` names the payload in errors.
#[derive(Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Self { rest: bytes, what }
    }

    fn malformed(&self, reason: String) -> FormatError {
        FormatError::Malformed {
            what: self.what,
            reason,
        }
    }

    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N], FormatError> {
        let Some((head, tail)) = self.rest.split_first_chunk::<N>() else {
            return Err(self.malformed(format!("truncated at {field}")));
        };
        self.rest = tail;
        Ok(*head)
    }

    pub fn u8(&mut self, field: &str) -> Result<u8, FormatError> {
        Ok(self.array::<1>(field)?[0])
    }
    pub fn u16(&mut self, field: &str) -> Result<u16, FormatError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }
    pub fn u64(&mut self, field: &str) -> Result<u64, FormatError> {
        Ok(u64::from_be_bytes(self.array(field)?))
    }
    pub fn bool(&mut self, field: &str) -> Result<bool, FormatError> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(self.malformed(format!("{field} is {other}, not 0 or 1"))),
        }
    }
    /// A count of elements each at least `min_size` bytes: one the remaining bytes cannot
    /// hold is refused before anything is allocated.
    pub fn count(&mut self, min_size: usize, field: &str) -> Result<usize, FormatError> {
        let n = u32::from_be_bytes(self.array(field)?) as usize;
        if n.saturating_mul(min_size.max(1)) > self.rest.len() {
            return Err(self.malformed(format!("{field} count {n} exceeds the bytes left")));
        }
        Ok(n)
    }
    pub fn string(&mut self, field: &str) -> Result<String, FormatError> {
        let n = self.count(1, field)?;
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        String::from_utf8(head.to_vec())
            .map_err(|_| self.malformed(format!("{field} is not UTF-8")))
    }
    pub fn opt<T>(
        &mut self,
        field: &str,
        get: impl FnOnce(&mut Self) -> Result<T, FormatError>,
    ) -> Result<Option<T>, FormatError> {
        if self.bool(field)? {
            Ok(Some(get(self)?))
        } else {
            Ok(None)
        }
    }
    /// Ends the body: trailing bytes are an error, not ignored.
    pub fn finish(self) -> Result<(), FormatError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(FormatError::TrailingBytes {
                what: self.what,
                count: self.rest.len(),
            })
        }
    }
}
