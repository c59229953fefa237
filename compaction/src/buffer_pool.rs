//! Read buffers, reused once their readers are done with them.
//!
//! Reads hand out entries as slices of one read buffer (no copy per entry). A fresh buffer
//! per read costs more than the read itself: large allocations come straight from the kernel
//! (`mmap`), and every page faults and is zeroed on first touch. So each read buffer is also
//! kept here; once every slice of it is dropped, `Bytes::try_into_mut` reclaims it in place for
//! the next read. Bounded process-wide: at most `POOL_BUFFERS` buffers of at most
//! `POOL_MAX_BUFFER_BYTES` each.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

const POOL_BUFFERS: usize = 16;
const POOL_MAX_BUFFER_BYTES: usize = 2 << 20;

static POOL: Mutex<Vec<Bytes>> = Mutex::new(Vec::new());

/// Capacity of a new pooled buffer: one fits any read of up to a MiB (the usual fetch size).
const POOL_MIN_CAPACITY: usize = 1 << 20;

/// A buffer of exactly `len` bytes, reclaimed from the pool when one is free. Its content is
/// unspecified (the caller overwrites all of it).
pub fn take(len: usize) -> BytesMut {
    if len > POOL_MAX_BUFFER_BYTES {
        return BytesMut::zeroed(len);
    }
    {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let mut i = 0;
        while i < pool.len() {
            if !pool[i].is_unique() {
                i += 1;
                continue;
            }
            let candidate = pool.swap_remove(i);
            match candidate.try_into_mut() {
                Ok(mut buf) if buf.capacity() >= len => {
                    buf.resize(len, 0);
                    return buf;
                }
                // Too small for this read: freed here, a bigger one takes its place below.
                Ok(_) => {}
                // Someone took a slice between the check and now: keep it for later.
                Err(back) => {
                    pool.push(back);
                    i += 1;
                }
            }
        }
    }
    let mut buf = BytesMut::zeroed(len.max(POOL_MIN_CAPACITY));
    buf.truncate(len);
    buf
}

/// Offers a buffer handed out to readers back to the pool (it is reused once unique).
pub fn give(buf: &Bytes) {
    if buf.len() > POOL_MAX_BUFFER_BYTES || buf.is_empty() {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if pool.len() < POOL_BUFFERS {
        pool.push(buf.clone());
    }
}
