//! The broker process as an operator sees it: start, ports, lock file, health and metrics,
//! SIGTERM, restart with its topics, and the first thing every client does (ApiVersions,
//! Metadata) against kcat and a raw socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::raw::{skip_header_v0, RawClient};
use common::{run_ok, Cohort};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, MetadataRequest, RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

fn metadata(client: &mut RawClient, topics: &[&str]) -> kafka_protocol::messages::MetadataResponse {
    let req = MetadataRequest::default().with_topics(Some(
        topics
            .iter()
            .map(|t| {
                MetadataRequestTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_string(t.to_string()))))
            })
            .collect(),
    ));
    match client.call(ApiKey::Metadata, 9, RequestKind::Metadata(req)) {
        ResponseKind::Metadata(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn sigterm_exits_0_and_topics_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &["--num-partitions", "3"]);
    let mut client = RawClient::connect(broker.kafka);
    let created = metadata(&mut client, &["survivor"]);
    assert_eq!(created.topics[0].error_code, 0);
    assert_eq!(created.topics[0].partitions.len(), 3);
    let cluster_id = created.cluster_id.clone();
    drop(client);

    let status = broker.terminate();
    assert_eq!(status.code(), Some(0), "log:\n{}", broker.log());
    assert!(broker.log().contains("shutting down"), "{}", broker.log());

    let broker = Cohort::start(&data, &["--auto-create-topics=false"]);
    let mut client = RawClient::connect(broker.kafka);
    let again = metadata(&mut client, &["survivor", "absent"]);
    assert_eq!(again.cluster_id, cluster_id);
    assert_eq!(again.topics[0].error_code, 0);
    assert_eq!(again.topics[0].partitions.len(), 3);
    assert_eq!(
        again.topics[1].error_code, 3,
        "no auto-create when turned off"
    );
}

#[test]
fn a_second_broker_on_the_same_data_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = Cohort::start(&data, &[]);
    let err = match Cohort::try_start(&data, &[]) {
        Ok(_) => panic!("a second broker started on the same data dir"),
        Err(e) => e,
    };
    assert!(err.contains("in use by another cohort process"), "{err}");
    assert!(err.contains(&format!("pid {}", first.pid())), "{err}");
    let mut client = RawClient::connect(first.kafka);
    assert_eq!(
        client.api_versions().error_code,
        0,
        "the first one still serves"
    );
}

#[test]
fn healthz_and_prometheus_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let (status, body) = broker.http_get("/healthz");
    assert!(status.contains("200"), "{status}");
    assert_eq!(body, "ok\n");
    let mut client = RawClient::connect(broker.kafka);
    client.api_versions();
    metadata(&mut client, &["bad name"]);
    let (status, body) = broker.http_get("/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(
        body.contains("cohort_requests_total{api=\"ApiVersions\"}"),
        "{body}"
    );
    assert!(
        body.contains(
            "cohort_request_errors_total{api=\"Metadata\",error=\"INVALID_TOPIC_EXCEPTION\"} 1"
        ),
        "{body}"
    );
    assert!(
        body.contains("cohort_request_duration_seconds_bucket"),
        "{body}"
    );
    let (status, _) = broker.http_get("/nope");
    assert!(status.contains("404"), "{status}");
}

#[test]
fn kcat_lists_the_broker_and_auto_creates_a_topic() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &["--num-partitions", "2"]);
    let out = run_ok(
        Command::new("kcat").args(["-b", &broker.bootstrap(), "-L", "-t", "kcat-smoke"]),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("broker 1 at {} (controller)", broker.kafka)),
        "{text}"
    );
    assert!(
        text.contains("topic \"kcat-smoke\" with 2 partitions"),
        "{text}"
    );
}

#[test]
fn a_too_new_api_versions_gets_the_v0_fallback_and_the_connection_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut client = RawClient::connect(broker.kafka);
    // ApiVersions v99 with an empty body: only the header can be read.
    let mut frame = Vec::new();
    let header = [0u8, 18, 0, 99, 0, 0, 0, 42, 0xff, 0xff, 0];
    frame.extend_from_slice(&(header.len() as i32).to_be_bytes());
    frame.extend_from_slice(&header);
    std::io::Write::write_all(&mut client.stream, &frame).unwrap();
    let (correlation_id, mut body) = skip_header_v0(client.read_frame().unwrap());
    assert_eq!(correlation_id, 42);
    let resp = ApiVersionsResponse::decode(&mut body, 0).unwrap();
    assert_eq!(resp.error_code, 35);
    let own = resp.api_keys.iter().find(|k| k.api_key == 18).unwrap();
    assert_eq!((own.min_version, own.max_version), (0, 4));
    assert_eq!(
        client.api_versions().error_code,
        0,
        "the client retries lower"
    );
}
