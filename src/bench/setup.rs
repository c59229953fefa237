//! What happens before a load runs: check the API versions the load speaks, create its topic
//! on the controller, and find the coordinator of its groups (waiting while a new leader is
//! still loading).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, CreateTopicsRequest, FindCoordinatorRequest, MetadataRequest,
    RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::wire::Conn;
use super::BenchError;

/// The versions the load generator sends: what current Java clients and librdkafka send to a
/// Kafka 4.0 broker for the classic group protocol.
pub mod versions {
    pub const API_VERSIONS: i16 = 3;
    pub const METADATA: i16 = 12;
    pub const CREATE_TOPICS: i16 = 7;
    pub const FIND_COORDINATOR: i16 = 4;
    pub const JOIN_GROUP: i16 = 9;
    pub const SYNC_GROUP: i16 = 5;
    pub const HEARTBEAT: i16 = 4;
    pub const OFFSET_COMMIT: i16 = 8;
    pub const OFFSET_FETCH: i16 = 8;
}

/// How long the cluster may take to elect a leader that serves groups and topics.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const RETRY_PAUSE: Duration = Duration::from_millis(100);

// Kafka error codes the setup steps act on.
const NONE: i16 = 0;
const TOPIC_ALREADY_EXISTS: i16 = 36;

/// Checks that the broker at `addr` serves every request the load sends at its version.
/// Each `HOST:PORT` of a `--bootstrap-server` list, resolved to its first address.
pub fn resolve_all(servers: &[String]) -> Result<Vec<SocketAddr>, BenchError> {
    servers
        .iter()
        .map(|s| {
            s.to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| BenchError::Setup(format!("cannot resolve {s}")))
        })
        .collect()
}

pub async fn check_versions(addr: SocketAddr) -> Result<(), BenchError> {
    check_served(
        addr,
        &[
            (ApiKey::Metadata, versions::METADATA),
            (ApiKey::CreateTopics, versions::CREATE_TOPICS),
            (ApiKey::FindCoordinator, versions::FIND_COORDINATOR),
            (ApiKey::JoinGroup, versions::JOIN_GROUP),
            (ApiKey::SyncGroup, versions::SYNC_GROUP),
            (ApiKey::Heartbeat, versions::HEARTBEAT),
            (ApiKey::OffsetCommit, versions::OFFSET_COMMIT),
            (ApiKey::OffsetFetch, versions::OFFSET_FETCH),
        ],
    )
    .await
}

/// Checks that the broker at `addr` serves each `(api, version)` of `needed`.
pub async fn check_served(addr: SocketAddr, needed: &[(ApiKey, i16)]) -> Result<(), BenchError> {
    let mut conn = Conn::connect(addr, "cohort-bench-setup").await?;
    let body = RequestKind::ApiVersions(
        ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("cohort-bench"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION"))),
    );
    let ResponseKind::ApiVersions(r) = conn
        .call(ApiKey::ApiVersions, versions::API_VERSIONS, body)
        .await?
    else {
        return Err(BenchError::Setup(
            "ApiVersions answered with another body".into(),
        ));
    };
    if r.error_code != NONE {
        return Err(BenchError::Setup(format!(
            "ApiVersions v{} refused with error {}",
            versions::API_VERSIONS,
            r.error_code
        )));
    }
    for &(api, v) in needed {
        let served = r
            .api_keys
            .iter()
            .any(|k| k.api_key == api as i16 && k.min_version <= v && v <= k.max_version);
        if !served {
            return Err(BenchError::Setup(format!(
                "{addr} does not serve {api:?} v{v}, which the load sends"
            )));
        }
    }
    Ok(())
}

/// Creates `topic` with `partitions` partitions (replication factor 1) through the
/// controller; an existing topic is reused if it has at least that many partitions.
pub async fn create_topic(
    bootstrap: &[SocketAddr],
    topic: &str,
    partitions: i32,
) -> Result<(), BenchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let (controller, existing) = metadata(bootstrap, topic).await?;
        if let Some(n) = existing {
            if n >= partitions {
                return Ok(());
            }
            return Err(BenchError::Setup(format!(
                "topic {topic} exists with {n} partitions; the load needs {partitions}"
            )));
        }
        if let Some(controller) = controller {
            let mut conn = Conn::connect(controller, "cohort-bench-setup").await?;
            let body = RequestKind::CreateTopics(
                CreateTopicsRequest::default()
                    .with_timeout_ms(30_000)
                    .with_topics(vec![CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                        .with_num_partitions(partitions)
                        .with_replication_factor(1)]),
            );
            if let ResponseKind::CreateTopics(r) = conn
                .call(ApiKey::CreateTopics, versions::CREATE_TOPICS, body)
                .await?
            {
                match r.topics.first().map(|t| t.error_code) {
                    Some(NONE | TOPIC_ALREADY_EXISTS) => continue,
                    Some(code) if !is_retriable(code) => {
                        return Err(BenchError::Setup(format!(
                            "CreateTopics {topic} failed with {}",
                            code_name(code)
                        )))
                    }
                    _ => {}
                }
            }
        }
        if Instant::now() >= deadline {
            return Err(BenchError::Setup(format!(
                "could not create topic {topic} within {READY_TIMEOUT:?}"
            )));
        }
        tokio::time::sleep(RETRY_PAUSE).await;
    }
}

/// The controller's address and the partition count of `topic` if it exists.
async fn metadata(
    bootstrap: &[SocketAddr],
    topic: &str,
) -> Result<(Option<SocketAddr>, Option<i32>), BenchError> {
    let mut last_error = None;
    for addr in bootstrap {
        let mut conn = match Conn::connect(*addr, "cohort-bench-setup").await {
            Ok(c) => c,
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        let body = RequestKind::Metadata(
            MetadataRequest::default()
                .with_topics(Some(vec![
                    kafka_protocol::messages::metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(topic.to_string())))),
                ]))
                .with_allow_auto_topic_creation(false),
        );
        let ResponseKind::Metadata(r) = conn
            .call(ApiKey::Metadata, versions::METADATA, body)
            .await?
        else {
            continue;
        };
        let controller = r
            .brokers
            .iter()
            .find(|b| b.node_id == r.controller_id)
            .and_then(|b| resolve(b.host.as_str(), b.port));
        let existing = r
            .topics
            .iter()
            .find(|t| {
                t.error_code == NONE && t.name.as_ref().is_some_and(|n| n.0.as_str() == topic)
            })
            .map(|t| i32::try_from(t.partitions.len()).unwrap_or(i32::MAX));
        return Ok((controller, existing));
    }
    Err(last_error.unwrap_or_else(|| BenchError::Setup("no bootstrap server answered".into())))
}

/// The coordinator of every group in `groups`, once it serves them (a fresh cluster answers
/// NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE until its leader is active). All groups must
/// share one coordinator: Cohort's Raft leader coordinates every group.
pub async fn find_coordinator(
    bootstrap: &[SocketAddr],
    groups: &[String],
) -> Result<SocketAddr, BenchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut last = String::from("no answer");
    // A node that has not yet heard of a fresh election names the old leader: trust an answer
    // only once every node gives it, in two rounds in a row.
    let mut agreed_before: Option<SocketAddr> = None;
    while Instant::now() < deadline {
        let mut answers = Vec::with_capacity(bootstrap.len());
        for addr in bootstrap {
            match lookup(*addr, groups).await {
                Ok(Ok(coordinator)) => answers.push(coordinator),
                Ok(Err(why)) => last = why,
                Err(e) => last = e.to_string(),
            }
        }
        let agreed = match answers.split_first() {
            Some((first, rest)) if answers.len() == bootstrap.len() => {
                rest.iter().all(|a| a == first).then_some(*first)
            }
            _ => None,
        };
        if let Some(coordinator) = agreed.filter(|c| agreed_before == Some(*c)) {
            return Ok(coordinator);
        }
        if agreed.is_none() && answers.len() == bootstrap.len() {
            last = format!("the nodes name different coordinators: {answers:?}");
        }
        agreed_before = agreed;
        tokio::time::sleep(RETRY_PAUSE).await;
    }
    Err(BenchError::Setup(format!(
        "no coordinator for the groups within {READY_TIMEOUT:?}: {last}"
    )))
}

/// FindCoordinator for `groups` (v4 batches the keys); `Ok(Err)` is a retriable answer.
async fn lookup(
    addr: SocketAddr,
    groups: &[String],
) -> Result<Result<SocketAddr, String>, BenchError> {
    /// Keys per FindCoordinator request (a 10,000-member run has 2,000 groups).
    const KEYS_PER_REQUEST: usize = 1000;
    let mut conn = Conn::connect(addr, "cohort-bench-setup").await?;
    let mut found: Option<SocketAddr> = None;
    for chunk in groups.chunks(KEYS_PER_REQUEST) {
        let body = RequestKind::FindCoordinator(
            FindCoordinatorRequest::default().with_coordinator_keys(
                chunk
                    .iter()
                    .map(|g| StrBytes::from_string(g.clone()))
                    .collect(),
            ),
        );
        let ResponseKind::FindCoordinator(r) = conn
            .call(ApiKey::FindCoordinator, versions::FIND_COORDINATOR, body)
            .await?
        else {
            return Ok(Err("FindCoordinator answered with another body".into()));
        };
        for c in &r.coordinators {
            if c.error_code != NONE {
                return Ok(Err(format!(
                    "FindCoordinator {}: {}",
                    c.key.as_str(),
                    code_name(c.error_code)
                )));
            }
            let Some(at) = resolve(c.host.as_str(), c.port) else {
                return Ok(Err(format!(
                    "coordinator {}:{} unresolvable",
                    c.host.as_str(),
                    c.port
                )));
            };
            match found {
                None => found = Some(at),
                Some(f) if f != at => {
                    return Err(BenchError::Setup(format!(
                        "the groups have several coordinators ({f} and {at}); this load drives one"
                    )))
                }
                Some(_) => {}
            }
        }
    }
    Ok(found.ok_or_else(|| "FindCoordinator named no coordinator".to_string()))
}

fn resolve(host: &str, port: i32) -> Option<SocketAddr> {
    let port = u16::try_from(port).ok()?;
    (host, port).to_socket_addrs().ok()?.next()
}

/// Kafka's name for an error code.
pub fn code_name(code: i16) -> String {
    protocol::ErrorCode::from_code(code).map_or_else(
        || format!("error {code}"),
        |c| format!("{} ({code})", c.name()),
    )
}

fn is_retriable(code: i16) -> bool {
    protocol::ErrorCode::from_code(code).is_some_and(|c| c.is_retriable())
        // NOT_CONTROLLER: Metadata will name the new controller.
        || code == 41
}
