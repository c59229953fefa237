#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Snapshot files: round trip, every kind of damage refused, and a crash before the rename.

use std::path::Path;

use bytes::Bytes;
use compaction::snapshot::SnapshotFault;
use compaction::{
    install_snapshot_bytes, SnapshotError, SnapshotLimits, SnapshotReader, SnapshotWriter,
    TimestampMs,
};

/// Replaces a file's content in place. `std::fs::write` truncates to zero first, which makes
/// ext4 flush the file on close (its replace-by-truncate heuristic) and costs an IO per call.
fn overwrite(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    let bytes = bytes.as_ref();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)
}

fn write_snapshot(dir: &Path, name: &str, records: u32) -> Vec<(Bytes, Option<Bytes>)> {
    let mut writer =
        SnapshotWriter::create(dir, name, b"meta:last=42", SnapshotLimits::default()).unwrap();
    let mut written = Vec::new();
    for i in 0..records {
        let key = Bytes::from(format!("group-{i}"));
        let value = (i % 5 != 4).then(|| Bytes::from(format!("offset={}", i * 7)));
        writer
            .push(&key, value.as_deref(), TimestampMs(i64::from(i)))
            .unwrap();
        written.push((key, value));
    }
    let info = writer.finish().unwrap();
    assert_eq!(info.records, u64::from(records));
    written
}

fn read_back(path: &Path) -> Result<Vec<(Bytes, Option<Bytes>)>, SnapshotError> {
    let reader = SnapshotReader::open(path)?;
    assert_eq!(&reader.meta()[..], b"meta:last=42");
    reader.map(|r| r.map(|r| (r.key, r.value))).collect()
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for count in [0, 1, 1000] {
        let written = write_snapshot(dir.path(), "snap", count);
        assert_eq!(read_back(&dir.path().join("snap")).unwrap(), written);
        assert!(!dir.path().join("snap.tmp").exists());
    }
}

#[test]
fn every_flipped_byte_and_every_truncation_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), "snap", 20);
    let path = dir.path().join("snap");
    let good = std::fs::read(&path).unwrap();
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        overwrite(&path, &bad).unwrap();
        assert!(read_back(&path).is_err(), "flip at byte {at} unnoticed");
    }
    for cut in 0..good.len() {
        overwrite(&path, &good[..cut]).unwrap();
        assert!(read_back(&path).is_err(), "cut at byte {cut} unnoticed");
    }
    let mut extra = good.clone();
    extra.push(0);
    overwrite(&path, &extra).unwrap();
    assert!(matches!(
        read_back(&path),
        Err(SnapshotError::Corrupt {
            reason: SnapshotFault::AfterTrailer,
            ..
        })
    ));
}

/// Reads an in-memory image as `parts` split readers, one after the other, and joins them.
fn read_split(image: &Bytes, parts: usize) -> Result<Vec<(Bytes, Option<Bytes>)>, SnapshotError> {
    let reader = SnapshotReader::from_bytes(Path::new("image"), image.clone())?;
    let mut records = Vec::new();
    for (i, mut part) in reader.split(parts).into_iter().enumerate() {
        if i % 2 == 1 {
            part.detach();
        }
        for record in part {
            let record = record?;
            records.push((record.key, record.value));
        }
    }
    Ok(records)
}

#[test]
fn split_readers_read_every_record_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    for count in [0, 1, 2, 3, 7, 1000] {
        let written = write_snapshot(dir.path(), "snap", count);
        let image = Bytes::from(std::fs::read(dir.path().join("snap")).unwrap());
        for parts in 1..=5 {
            let reader = SnapshotReader::from_bytes(Path::new("image"), image.clone()).unwrap();
            let made = reader.split(parts).len();
            assert!(
                made <= parts.max(1),
                "{count} records, {parts} parts: {made}"
            );
            if count >= 1000 {
                assert_eq!(made, parts, "a large image is cut as asked");
            }
            assert_eq!(read_split(&image, parts).unwrap(), written, "{parts} parts");
        }
        assert_eq!(
            SnapshotReader::from_bytes(Path::new("image"), image.clone())
                .unwrap()
                .records_hint(),
            Some(u64::from(count))
        );
    }
}

#[test]
fn split_readers_refuse_every_flipped_byte_and_every_truncation() {
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), "snap", 20);
    let good = std::fs::read(dir.path().join("snap")).unwrap();
    for parts in [2, 3] {
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            assert!(
                read_split(&Bytes::from(bad), parts).is_err(),
                "{parts} parts: flip at byte {at} unnoticed"
            );
        }
        for cut in 0..good.len() {
            assert!(
                read_split(&Bytes::from(good[..cut].to_vec()), parts).is_err(),
                "{parts} parts: cut at byte {cut} unnoticed"
            );
        }
    }
}

#[test]
fn crash_before_rename_leaves_the_previous_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_snapshot(dir.path(), "snap", 10);
    // A writer that never finishes (the process died): its temp file stays behind.
    let mut writer = SnapshotWriter::create(
        dir.path(),
        "snap",
        b"meta:last=42",
        SnapshotLimits::default(),
    )
    .unwrap();
    for i in 0..100_000u32 {
        writer
            .push(format!("k{i}").as_bytes(), Some(b"v"), TimestampMs(0))
            .unwrap();
    }
    std::mem::forget(writer);
    assert!(dir.path().join("snap.tmp").exists());
    assert_eq!(read_back(&dir.path().join("snap")).unwrap(), first);
    // The next snapshot of that name replaces the leftover.
    let second = write_snapshot(dir.path(), "snap", 3);
    assert_eq!(read_back(&dir.path().join("snap")).unwrap(), second);
}

#[test]
fn received_bytes_are_verified_before_install() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_snapshot(dir.path(), "source", 50);
    let bytes = Bytes::from(std::fs::read(dir.path().join("source")).unwrap());
    let info = install_snapshot_bytes(dir.path(), "installed", bytes.clone()).unwrap();
    assert_eq!(info.records, 50);
    assert_eq!(read_back(&dir.path().join("installed")).unwrap(), written);
    let damaged = bytes.slice(..bytes.len() - 1);
    assert!(install_snapshot_bytes(dir.path(), "other", damaged).is_err());
    assert!(!dir.path().join("other").exists());
}

#[test]
fn limits_and_names() {
    let dir = tempfile::tempdir().unwrap();
    let limits = SnapshotLimits {
        max_key_bytes: 8,
        max_record_bytes: 100,
    };
    let mut writer = SnapshotWriter::create(dir.path(), "s", b"", limits).unwrap();
    assert!(matches!(
        writer.push(&[0; 9], None, TimestampMs(0)),
        Err(SnapshotError::KeyTooLarge { .. })
    ));
    assert!(matches!(
        writer.push(b"k", Some(&[0; 100]), TimestampMs(0)),
        Err(SnapshotError::RecordTooLarge { .. })
    ));
    for name in ["", "a/b", "..", "s.tmp"] {
        assert!(matches!(
            SnapshotWriter::create(dir.path(), name, b"", limits),
            Err(SnapshotError::BadName(_))
        ));
    }
}
