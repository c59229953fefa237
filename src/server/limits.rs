//! The resource-limit flags of `cohort serve` (their rules are in `config::rules`): request memory, idle and
//! send timeouts of client connections, open segment files, the ListOffsets decompression
//! budget, and the Raft peer port. README "Limits" lists them for operators;
//! docs/decisions/0111-resource-limits.md says why each default is what it is.

use std::time::Duration;

use clap::Args;

/// Default broker-wide request memory: five largest (100 MiB) frames, or five hundred 1 MiB
/// produce requests (the Java producer's `max.request.size`) at once.
pub const QUEUED_MAX_REQUEST_BYTES_DEFAULT: usize = 512 << 20;
/// Kafka's `connections.max.idle.ms` default.
pub const CONNECTIONS_MAX_IDLE_MS_DEFAULT: u64 = 600_000;
/// The Java client gives up on a request after `request.timeout.ms`, 30 s: an answer the
/// client takes no byte of for that long is one it has given up on.
pub const CONNECTIONS_SEND_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// The Java client's `request.timeout.ms` covers sending the request as well: a request
/// still arriving after 30 s is one its client has given up on.
pub const REQUEST_RECEIVE_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// Default decompressed bytes all ListOffsets-by-timestamp lookups hold at once.
pub const LIST_OFFSETS_DECOMPRESS_BYTES_DEFAULT: usize = 64 << 20;
/// Default free space partition data leaves to the Raft log and metadata (decision 0112).
pub const DISK_RESERVE_BYTES_DEFAULT: u64 = 64 << 20;
/// Largest `--disk-reserve-bytes` (1 TiB).
pub const DISK_RESERVE_BYTES_MAX: u64 = 1 << 40;

/// Flags bounding what clients can make the broker hold.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Bytes of requests read but not yet answered, over every connection (Kafka's
    /// `queued.max.request.bytes`). Past it no socket is read until answers free some.
    #[arg(long, default_value_t = QUEUED_MAX_REQUEST_BYTES_DEFAULT)]
    pub queued_max_request_bytes: usize,

    /// The same for one connection (default: `--max-frame-bytes`, one largest request).
    #[arg(long)]
    pub queued_max_request_bytes_per_connection: Option<usize>,

    /// Close a client connection that sent nothing for this long (Kafka's
    /// `connections.max.idle.ms`).
    #[arg(long, default_value_t = CONNECTIONS_MAX_IDLE_MS_DEFAULT)]
    pub connections_max_idle_ms: u64,

    /// Close a client connection that took no byte of an answer for this long (it stopped
    /// reading: its task, request memory and the segment files its Fetch pins are freed).
    #[arg(long, default_value_t = CONNECTIONS_SEND_TIMEOUT_MS_DEFAULT)]
    pub connections_send_timeout_ms: u64,

    /// Close a client connection whose request, once its length prefix came, did not arrive
    /// whole within this (a trickled request would hold request memory).
    #[arg(long, default_value_t = REQUEST_RECEIVE_TIMEOUT_MS_DEFAULT)]
    pub request_receive_timeout_ms: u64,

    /// Segment files kept open at once over every partition; idle ones are closed (least
    /// recently used first) and reopened on use (default: half the process's open-file
    /// limit, between 64 and 100000).
    #[arg(long)]
    pub open_segment_files_max: Option<usize>,

    /// Decompressed bytes ListOffsets-by-timestamp lookups in compressed batches hold at once,
    /// over every request; lookups queue for it, and a batch needing more is refused.
    #[arg(long, default_value_t = LIST_OFFSETS_DECOMPRESS_BYTES_DEFAULT)]
    pub list_offsets_decompress_bytes_max: usize,

    /// Free bytes partition data leaves on its filesystem: a Produce that would go below it
    /// gets KAFKA_STORAGE_ERROR, so the Raft log, snapshots and metadata still have room to
    /// record state (new group and topic commands stop at a quarter of it). 0: refuse only
    /// once a write meets a full disk.
    #[arg(long, default_value_t = DISK_RESERVE_BYTES_DEFAULT)]
    pub disk_reserve_bytes: u64,
}

/// Bounds of client connections, resolved from the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// `--max-connections`.
    pub max_connections: usize,
    /// `--max-frame-bytes`.
    pub max_frame_bytes: usize,
    /// `--queued-max-request-bytes`.
    pub queued_max_request_bytes: usize,
    /// `--queued-max-request-bytes-per-connection`, plus a frame's length prefix.
    pub queued_max_request_bytes_per_connection: usize,
    /// `--connections-max-idle-ms`.
    pub idle_timeout: Duration,
    /// `--connections-send-timeout-ms`.
    pub send_timeout: Duration,
    /// `--request-receive-timeout-ms`.
    pub receive_timeout: Duration,
}

/// Shortest idle timeout: below a second, clients between two polls would be cut.
pub const IDLE_MS_MIN: u64 = 1_000;
/// Longest idle timeout (a week).
pub const IDLE_MS_MAX: u64 = 7 * 24 * 3_600_000;
/// Shortest send and receive timeouts.
pub const SEND_MS_MIN: u64 = 100;
/// Longest send and receive timeouts (an hour).
pub const SEND_MS_MAX: u64 = 3_600_000;
/// Bounds of `--open-segment-files-max`.
pub const OPEN_FILES_MIN: usize = 16;
pub const OPEN_FILES_MAX: usize = 1_000_000;
/// Bounds of its default.
const OPEN_FILES_DEFAULT_MIN: usize = 64;
const OPEN_FILES_DEFAULT_MAX: usize = 100_000;

/// Half the soft open-file limit: the other half is for client and peer sockets, the Raft
/// log, snapshots and the rest.
fn default_open_segment_files() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let soft = limit.current.map_or(OPEN_FILES_DEFAULT_MAX as u64, |n| n);
    usize::try_from(soft / 2)
        .unwrap_or(OPEN_FILES_DEFAULT_MAX)
        .clamp(OPEN_FILES_DEFAULT_MIN, OPEN_FILES_DEFAULT_MAX)
}

/// Smallest ListOffsets decompression budget (its upper end is the largest batch the decoder
/// ever decompresses, `protocol::batch::MAX_DECOMPRESSED_BYTES`).
pub const DECOMPRESS_MIN: usize = 1 << 20;

impl LimitArgs {
    /// `--queued-max-request-bytes-per-connection`, or its default `max_frame_bytes`.
    pub fn per_connection_bytes(&self, max_frame_bytes: usize) -> usize {
        self.queued_max_request_bytes_per_connection
            .unwrap_or(max_frame_bytes)
    }

    /// The bounds of client connections (the flags are checked by `config::rules` first).
    pub fn connection_limits(
        &self,
        max_connections: usize,
        max_frame_bytes: usize,
    ) -> ConnectionLimits {
        let prefix = protocol::frame::LENGTH_PREFIX_BYTES;
        ConnectionLimits {
            max_connections,
            max_frame_bytes,
            queued_max_request_bytes: self.queued_max_request_bytes.saturating_add(prefix),
            queued_max_request_bytes_per_connection: self
                .per_connection_bytes(max_frame_bytes)
                .saturating_add(prefix),
            idle_timeout: Duration::from_millis(self.connections_max_idle_ms),
            send_timeout: Duration::from_millis(self.connections_send_timeout_ms),
            receive_timeout: Duration::from_millis(self.request_receive_timeout_ms),
        }
    }

    /// `--open-segment-files-max`, or its default from `RLIMIT_NOFILE`.
    pub fn open_segment_files_max(&self) -> usize {
        self.open_segment_files_max
            .unwrap_or_else(default_open_segment_files)
    }
}

/// Flags of the Raft peer port (`--raft`): caps and timeouts, so that idle or trickling
/// sockets cannot keep real peers out (raft-meta's `network::admission`).
#[derive(Debug, Clone, Args)]
pub struct PeerPortArgs {
    /// Connections the Raft port holds at once; when full, the oldest one that has not sent a
    /// whole first request yet is closed for a new one, else the new one is refused.
    #[arg(long, default_value_t = raft_meta::PeerPortLimits::default().connections_max)]
    pub raft_connections_max: usize,

    /// The same, from one IP address.
    #[arg(long, default_value_t = raft_meta::PeerPortLimits::default().connections_per_address_max)]
    pub raft_connections_per_address_max: usize,

    /// A new Raft connection's first request, and any request once its first bytes came,
    /// must arrive whole within this.
    #[arg(long, default_value_t = raft_meta::PeerPortLimits::default().handshake_timeout.as_millis() as u64)]
    pub raft_handshake_timeout_ms: u64,

    /// A Raft connection that sends nothing for this long is closed (peers reconnect).
    #[arg(long, default_value_t = raft_meta::PeerPortLimits::default().idle_timeout.as_millis() as u64)]
    pub raft_connections_max_idle_ms: u64,
}

/// Most connections the Raft port may be allowed (each is a task and a file descriptor).
pub const RAFT_CONNECTIONS_MAX_MAX: usize = 65_536;
/// Bounds of the Raft handshake timeout: a peer's first request comes in milliseconds; the
/// longest deadline a peer gives a call is 5 s (`request_timeout`).
pub const RAFT_HANDSHAKE_MS_MIN: u64 = 100;
pub const RAFT_HANDSHAKE_MS_MAX: u64 = 60_000;

impl Default for PeerPortArgs {
    /// The flags' defaults (for code that builds arguments without parsing them).
    fn default() -> Self {
        let d = raft_meta::PeerPortLimits::default();
        PeerPortArgs {
            raft_connections_max: d.connections_max,
            raft_connections_per_address_max: d.connections_per_address_max,
            raft_handshake_timeout_ms: d.handshake_timeout.as_millis() as u64,
            raft_connections_max_idle_ms: d.idle_timeout.as_millis() as u64,
        }
    }
}

impl PeerPortArgs {
    /// The peer port's limits (the flags are checked by `config::rules` first).
    pub fn limits(&self) -> raft_meta::PeerPortLimits {
        raft_meta::PeerPortLimits {
            connections_max: self.raft_connections_max,
            connections_per_address_max: self.raft_connections_per_address_max,
            handshake_timeout: Duration::from_millis(self.raft_handshake_timeout_ms),
            idle_timeout: Duration::from_millis(self.raft_connections_max_idle_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: LimitArgs,
        #[command(flatten)]
        peer_port: PeerPortArgs,
    }

    fn parse(flags: &[&str]) -> Wrap {
        Wrap::parse_from(std::iter::once("serve").chain(flags.iter().copied()))
    }

    const FRAME: usize = 100 << 20;

    #[test]
    fn defaults_are_finite_and_fit_the_largest_frame() {
        let limits = parse(&[]).args.connection_limits(1024, FRAME);
        assert_eq!(limits.queued_max_request_bytes, (512 << 20) + 4);
        assert_eq!(limits.queued_max_request_bytes_per_connection, FRAME + 4);
        assert_eq!(limits.idle_timeout, Duration::from_secs(600));
        assert_eq!(limits.send_timeout, Duration::from_secs(30));
        assert_eq!(limits.receive_timeout, Duration::from_secs(30));
        assert_eq!(parse(&[]).args.list_offsets_decompress_bytes_max, 64 << 20);
        assert_eq!(
            parse(&[]).peer_port.limits(),
            raft_meta::PeerPortLimits::default()
        );
        assert_eq!(
            PeerPortArgs::default().limits(),
            raft_meta::PeerPortLimits::default()
        );
    }

    #[test]
    fn request_memory_counts_the_length_prefix() {
        let small = parse(&[
            "--queued-max-request-bytes",
            "2048",
            "--queued-max-request-bytes-per-connection",
            "1024",
        ])
        .args
        .connection_limits(8, 1024);
        assert_eq!(
            (
                small.queued_max_request_bytes,
                small.queued_max_request_bytes_per_connection
            ),
            (2052, 1028)
        );
    }

    #[test]
    fn the_open_file_budget_defaults_to_half_the_fd_limit() {
        let default = parse(&[]).args.open_segment_files_max();
        assert!((64..=100_000).contains(&default), "{default}");
        let set = parse(&["--open-segment-files-max", "500"]).args;
        assert_eq!(set.open_segment_files_max(), 500);
    }
}
