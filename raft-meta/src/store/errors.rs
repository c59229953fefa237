//! Conversions from our IO and codec failures into openraft's `StorageError`, which names what was
//! being read or written so a failing node says which file or tree broke.

use openraft::{AnyError, StorageIOError};

use crate::types::StorageError;

pub(crate) fn read_logs<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::read_logs(AnyError::new(&e)).into()
}

pub(crate) fn write_logs<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::write_logs(AnyError::new(&e)).into()
}

pub(crate) fn read_vote<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::read_vote(AnyError::new(&e)).into()
}

pub(crate) fn write_vote<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::write_vote(AnyError::new(&e)).into()
}

pub(crate) fn read_any<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::read(AnyError::new(&e)).into()
}

pub(crate) fn write_any<E: std::error::Error + 'static>(e: E) -> StorageError {
    StorageIOError::write(AnyError::new(&e)).into()
}
