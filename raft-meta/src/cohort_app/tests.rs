use std::collections::BTreeMap;
use std::sync::Mutex;

use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitTopic, Generation, GroupId, LeaderEpoch,
    MemberId, Offset, PartitionIndex, Reply,
};

use super::*;

fn recording_app() -> (CohortApp, Arc<Mutex<Vec<Effect>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = seen.clone();
    let sink: EffectSink = Arc::new(move |e| sink_seen.lock().unwrap().push(e));
    let app = CohortApp::new(
        coordinator::Config::default(),
        TopicLimits::default(),
        Some(sink),
    );
    (app, seen)
}

fn topic(name: &str, partitions: usize) -> TopicMeta {
    TopicMeta {
        name: name.to_owned(),
        id: 42,
        partitions: vec![vec![1]; partitions],
        configs: BTreeMap::from([("cleanup.policy".to_owned(), "delete".to_owned())]),
    }
}

fn commit(group: &str, topic: &str, partition: i32, offset: i64) -> WriteCommand {
    WriteCommand::CommitOffsets(CommitOffsets {
        api_version: ApiVersion(8),
        now_ms: TimestampMs(1_000),
        group_id: GroupId::new(group),
        generation: Generation::NONE,
        member_id: MemberId::default(),
        group_instance_id: None,
        retention_time_ms: -1,
        topics: vec![CommitTopic {
            name: TopicName::new(topic),
            partitions: vec![CommitPartition {
                partition: PartitionIndex(partition),
                offset: Offset(offset),
                leader_epoch: LeaderEpoch(-1),
                metadata: None,
                partition_known: true,
            }],
        }],
    })
}

fn apply(app: &mut CohortApp, index: u64, origin: Option<RequestToken>, body: Body) -> AppReply {
    let command = CohortApp::decode(&Envelope { origin, body }.encode()).unwrap();
    let bytes = app.apply(LogIndex(index), command);
    AppReply::decode(&bytes).unwrap()
}

const TOKEN: RequestToken = RequestToken {
    node: 1,
    incarnation: 9,
    seq: 3,
};

#[test]
fn group_commands_reach_the_sink_with_their_origin() {
    let (mut app, seen) = recording_app();
    let reply = apply(
        &mut app,
        1,
        Some(TOKEN),
        Body::Group(commit("g", "t", 0, 5)),
    );
    assert_eq!(reply, AppReply::Group);
    let effects = seen.lock().unwrap();
    assert_eq!(effects.len(), 1);
    match &effects[0] {
        Effect::Group {
            origin,
            index,
            outcome,
            ..
        } => {
            assert_eq!(*origin, Some(TOKEN));
            assert_eq!(*index, LogIndex(1));
            assert!(matches!(outcome.reply, Reply::Commit(_)));
        }
        other => panic!("unexpected effect {other:?}"),
    }
    let committed = app
        .coordinator()
        .committed_offset(&GroupId::new("g"), "t", PartitionIndex(0))
        .unwrap();
    assert_eq!(committed.offset, Offset(5));
}

#[test]
fn topics_are_created_once_and_deleting_one_drops_its_offsets() {
    let (mut app, seen) = recording_app();
    let reply = apply(
        &mut app,
        1,
        None,
        Body::CreateTopics {
            topics: vec![topic("t", 3), topic("t", 1)],
        },
    );
    assert_eq!(
        reply,
        AppReply::CreateTopics(vec![
            Ok(topic("t", 3)),
            Err(TopicChangeError::Exists("t".into()))
        ])
    );
    apply(&mut app, 2, None, Body::Group(commit("g", "t", 2, 7)));
    let reply = apply(
        &mut app,
        3,
        None,
        Body::DeleteTopics {
            names: vec!["t".into(), "nope".into()],
            now_ms: TimestampMs(2_000),
        },
    );
    assert_eq!(
        reply,
        AppReply::DeleteTopics(vec![
            Ok(topic("t", 3)),
            Err(TopicChangeError::Unknown("nope".into()))
        ])
    );
    assert!(app.topics().get("t").is_none());
    assert_eq!(app.coordinator().offset_count(), 0);
    let effects = seen.lock().unwrap();
    let kinds: Vec<&str> = effects
        .iter()
        .map(|e| match e {
            Effect::Group { .. } => "group",
            Effect::TopicsChanged { .. } => "topics",
            Effect::Restored => "restored",
        })
        .collect();
    // Creating topics first changes the coordinator's topic image (a group outcome holding
    // `Topic` records), then the partition logs; deleting drops the offsets and the image's
    // entry in one group outcome, then the logs.
    assert_eq!(kinds, ["group", "topics", "group", "group", "topics"]);
}

#[test]
fn the_first_cluster_id_wins_and_producer_ids_never_repeat() {
    let (mut app, _) = recording_app();
    let a = apply(
        &mut app,
        1,
        None,
        Body::InitCluster {
            cluster_id: "first".into(),
        },
    );
    let b = apply(
        &mut app,
        2,
        None,
        Body::InitCluster {
            cluster_id: "second".into(),
        },
    );
    assert_eq!(a, AppReply::ClusterId("first".into()));
    assert_eq!(b, AppReply::ClusterId("first".into()));
    let p1 = apply(&mut app, 3, None, Body::AllocateProducerIds { count: 10 });
    let p2 = apply(&mut app, 4, None, Body::AllocateProducerIds { count: 10 });
    assert_eq!(p1, AppReply::ProducerIds { first: 0 });
    assert_eq!(p2, AppReply::ProducerIds { first: 10 });
    assert!(matches!(
        apply(&mut app, 5, None, Body::AllocateProducerIds { count: 0 }),
        AppReply::Rejected(_)
    ));
}

#[test]
fn garbage_unknown_kinds_and_newer_versions_do_not_decode() {
    let newer = {
        let mut b = Envelope {
            origin: None,
            body: Body::AllocateProducerIds { count: 1 },
        }
        .encode()
        .to_vec();
        b[3..5].copy_from_slice(&2u16.to_be_bytes());
        b
    };
    for (bytes, why) in [
        (&b""[..], "empty payload"),
        (&[9, 1, 2][..], "unknown frame byte 0x09"),
        (&[1, 0xff, 0xff, 0xff][..], "malformed untagged command"),
        (&[2, 0x02, 0xff, 0, 1, 0][..], "unknown type tag 0x02ff"),
        (
            &[2, 0x03, 0x01, 0, 1, 0][..],
            "found where a command was expected",
        ),
        (&newer[..], "AllocateProducerIds command version 2 is newer"),
    ] {
        let err = CohortApp::decode(bytes).unwrap_err();
        assert!(err.0.contains(why), "{bytes:?}: {err}");
    }
    // The leader's admission check sees the same refusals from the header alone.
    assert!(CohortApp::admit(&newer).is_err());
    assert!(CohortApp::admit(&[2, 0x02, 0xff, 0, 1]).is_err());
    assert!(CohortApp::admit(&[]).is_err());
    assert!(CohortApp::admit(
        &Envelope {
            origin: None,
            body: Body::AllocateProducerIds { count: 1 }
        }
        .encode()
    )
    .is_ok());
}

#[test]
fn a_snapshot_restores_groups_topics_and_cluster() {
    let (mut app, _) = recording_app();
    apply(
        &mut app,
        1,
        None,
        Body::CreateTopics {
            topics: vec![topic("t", 2), topic("u", 1)],
        },
    );
    apply(&mut app, 2, None, Body::Group(commit("g", "t", 1, 11)));
    apply(&mut app, 3, None, Body::Group(commit("h", "u", 0, 12)));
    apply(
        &mut app,
        4,
        None,
        Body::InitCluster {
            cluster_id: "c".into(),
        },
    );
    apply(&mut app, 5, None, Body::AllocateProducerIds { count: 5 });
    let records = app.snapshot_records();

    let (mut restored, seen) = recording_app();
    restored.restore(records).unwrap();
    assert_eq!(restored.coordinator(), app.coordinator());
    assert_eq!(
        restored.topics().iter().collect::<Vec<_>>(),
        app.topics().iter().collect::<Vec<_>>()
    );
    assert_eq!(restored.cluster(), app.cluster());
    assert!(matches!(
        seen.lock().unwrap().as_slice(),
        [Effect::Restored]
    ));

    let bad = vec![Record {
        key: Bytes::from_static(&[77, 1]),
        value: Bytes::new(),
    }];
    assert!(restored.restore(bad).is_err());
}

fn app_with_flags(config: coordinator::Config) -> CohortApp {
    CohortApp::new(config, TopicLimits::default(), None)
}

fn init_config(flags: &coordinator::Config, replace: bool) -> Body {
    Body::InitClusterConfig {
        static_values: ClusterConfig::from_flags(flags).static_values,
        replace,
    }
}

fn alter(key: &str, value: Option<i64>) -> Body {
    Body::AlterClusterConfig {
        changes: vec![ConfigChange {
            key: key.to_owned(),
            value,
        }],
    }
}

#[test]
fn replicas_with_different_flags_decide_alike_once_the_configuration_is_replicated() {
    let strict = coordinator::Config {
        offsets_per_group_max: 1,
        ..coordinator::Config::default()
    };
    let roomy = coordinator::Config {
        offsets_per_group_max: 3,
        ..coordinator::Config::default()
    };
    let log = |with_init: bool| {
        let mut log = Vec::new();
        if with_init {
            log.push(init_config(&strict, false));
        }
        log.push(Body::CreateTopics {
            topics: vec![topic("t", 2)],
        });
        log.push(Body::Group(commit("g", "t", 0, 5)));
        log.push(Body::Group(commit("g", "t", 1, 6)));
        log
    };
    let run = |flags: &coordinator::Config, with_init: bool| {
        let mut app = app_with_flags(flags.clone());
        for (i, body) in log(with_init).into_iter().enumerate() {
            apply(&mut app, i as u64 + 1, None, body);
        }
        app
    };
    // Without the replicated configuration, each replica decides with its own flags: the
    // second partition's commit is refused on one and kept on the other.
    assert_ne!(
        run(&strict, false).coordinator(),
        run(&roomy, false).coordinator()
    );
    let (a, b) = (run(&strict, true), run(&roomy, true));
    assert_eq!(a.coordinator(), b.coordinator());
    assert_eq!(a.coordinator().offset_count(), 1);
    assert_eq!(b.coordinator().config().offsets_per_group_max, 1);
    assert_eq!(a.cluster_config(), b.cluster_config());
}

#[test]
fn the_first_static_layer_wins_unless_replaced_and_alterations_survive_replacement() {
    let flags = coordinator::Config {
        group_max_size: 10,
        ..coordinator::Config::default()
    };
    let other = coordinator::Config {
        group_max_size: 20,
        ..coordinator::Config::default()
    };
    let mut app = app_with_flags(flags.clone());
    let first = apply(&mut app, 1, None, init_config(&flags, false));
    assert!(matches!(first, AppReply::ClusterConfig(Ok(_))));
    // A second leader with other flags, in a cluster of several: ignored.
    apply(&mut app, 2, None, init_config(&other, false));
    assert_eq!(app.coordinator().config().group_max_size, 10);

    let altered = apply(
        &mut app,
        3,
        None,
        alter("offsets.retention.minutes", Some(5)),
    );
    let AppReply::ClusterConfig(Ok(c)) = altered else {
        panic!("alter refused: {altered:?}");
    };
    assert_eq!(c.dynamic_values.get("offsets.retention.minutes"), Some(&5));
    assert_eq!(app.coordinator().config().offsets_retention_ms, 300_000);

    // A one-voter node restarted with new flags replaces the static layer only.
    apply(&mut app, 4, None, init_config(&other, true));
    assert_eq!(app.coordinator().config().group_max_size, 20);
    assert_eq!(app.coordinator().config().offsets_retention_ms, 300_000);

    // Deleting the override reverts to the static value.
    apply(&mut app, 5, None, alter("offsets.retention.minutes", None));
    assert_eq!(
        app.coordinator().config().offsets_retention_ms,
        coordinator::Config::default().offsets_retention_ms
    );
}

#[test]
fn a_refused_alteration_changes_nothing_and_names_the_key() {
    let mut app = app_with_flags(coordinator::Config::default());
    apply(
        &mut app,
        1,
        None,
        init_config(&coordinator::Config::default(), false),
    );
    let before = app.cluster_config().cloned();
    let reply = apply(
        &mut app,
        2,
        None,
        Body::AlterClusterConfig {
            changes: vec![
                ConfigChange {
                    key: "group.max.size".to_owned(),
                    value: Some(3),
                },
                ConfigChange {
                    key: "group.consumer.heartbeat.interval.ms".to_owned(),
                    value: Some(1),
                },
            ],
        },
    );
    let AppReply::ClusterConfig(Err(e)) = reply else {
        panic!("accepted: {reply:?}");
    };
    assert!(
        e.to_string()
            .starts_with("group.consumer.heartbeat.interval.ms"),
        "{e}"
    );
    assert_eq!(app.cluster_config().cloned(), before);
    assert_eq!(app.coordinator().config(), &coordinator::Config::default());
}

#[test]
fn the_replicated_configuration_survives_a_snapshot_on_a_node_with_other_flags() {
    let flags = coordinator::Config {
        session_timeout_min_ms: 1_000,
        ..coordinator::Config::default()
    };
    let mut app = app_with_flags(flags.clone());
    apply(&mut app, 1, None, init_config(&flags, false));
    apply(&mut app, 2, None, alter("group.max.size", Some(4)));
    apply(&mut app, 3, None, Body::Group(commit("g", "t", 0, 1)));

    let mut restored = app_with_flags(coordinator::Config::default());
    restored.restore(app.snapshot_records()).unwrap();
    assert_eq!(restored.cluster_config(), app.cluster_config());
    assert_eq!(restored.coordinator(), app.coordinator());
    assert_eq!(
        restored.coordinator().config().session_timeout_min_ms,
        1_000
    );
    assert_eq!(restored.coordinator().config().group_max_size, 4);

    // A snapshot from before replicated configuration (no config record) keeps the flags.
    let mut old = app_with_flags(coordinator::Config::default());
    let records: Vec<Record> = app
        .snapshot_records()
        .into_iter()
        .filter(|r| r.key.first() != Some(&NS_CONFIG))
        .collect();
    old.restore(records).unwrap();
    assert_eq!(old.cluster_config(), None);
    assert_eq!(old.coordinator().config(), &coordinator::Config::default());
}

fn scram_cred(byte: u8, iterations: u32) -> StoredScramCredential {
    StoredScramCredential {
        salt: vec![byte; 8],
        stored_key: vec![byte; 32],
        server_key: vec![byte.wrapping_add(1); 32],
        iterations,
    }
}

#[test]
fn scram_credentials_are_replicated_bootstrapped_once_and_kept_by_snapshots() {
    use ScramMechanismType::{Sha256, Sha512};
    let (mut app, _) = recording_app();
    let flags = vec![ScramCredentialRecord {
        user: "boot".into(),
        mechanism: Sha256,
        credential: scram_cred(1, 4096),
    }];
    let app_flags = CohortApp::new(coordinator::Config::default(), TopicLimits::default(), None)
        .with_scram_flags(flags.clone());
    assert!(matches!(
        app_flags.scram_bootstrap_to_propose(),
        Some(Body::BootstrapScramCredentials { .. })
    ));
    assert_eq!(
        apply(
            &mut app,
            1,
            None,
            Body::BootstrapScramCredentials {
                credentials: flags.clone()
            }
        ),
        AppReply::ScramBootstrapped(true)
    );
    let reply = apply(
        &mut app,
        2,
        Some(TOKEN),
        Body::AlterScramCredentials {
            changes: vec![
                UserScramChange {
                    user: "alice".into(),
                    op: ScramOp::Upsert {
                        mechanism: Sha512,
                        credential: scram_cred(7, 8192),
                    },
                },
                UserScramChange {
                    user: "boot".into(),
                    op: ScramOp::Delete { mechanism: Sha512 },
                },
            ],
        },
    );
    assert_eq!(
        reply,
        AppReply::ScramAltered(vec![Ok(()), Err(ScramChangeError::NotFound)])
    );
    // A second bootstrap (another leader's flags) changes nothing.
    assert_eq!(
        apply(
            &mut app,
            3,
            None,
            Body::BootstrapScramCredentials {
                credentials: vec![ScramCredentialRecord {
                    user: "other".into(),
                    mechanism: Sha256,
                    credential: scram_cred(2, 4096),
                }]
            }
        ),
        AppReply::ScramBootstrapped(false)
    );
    assert_eq!(app.scram().users(), vec!["alice", "boot"]);
    let (mut restored, _) = recording_app();
    restored.restore(app.snapshot_records()).unwrap();
    assert_eq!(restored.scram(), app.scram());
    assert!(restored.scram().bootstrapped());
    assert_eq!(
        restored.scram().get("alice", Sha512),
        Some(&scram_cred(7, 8192))
    );
    // A restored node whose flags name users proposes nothing: the cluster was bootstrapped.
    let mut flagged = CohortApp::new(coordinator::Config::default(), TopicLimits::default(), None)
        .with_scram_flags(flags);
    flagged.restore(app.snapshot_records()).unwrap();
    assert!(flagged.scram_bootstrap_to_propose().is_none());
    // A record under another user's key is refused.
    let mut bad = app.snapshot_records();
    for r in &mut bad {
        if r.key.first() == Some(&NS_SCRAM) && r.key.len() > 1 {
            r.key = scram_key("mallory", Sha512);
        }
    }
    assert!(restored.restore(bad).is_err());
}

fn acl_binding(name: &str, pattern: AclPatternType, principal: &str) -> AclBinding {
    AclBinding {
        resource_type: AclResourceType::Topic,
        name: name.into(),
        pattern,
        principal: principal.into(),
        host: "*".into(),
        operation: AclOperation::Read,
        permission: AclPermission::Allow,
    }
}

#[test]
fn acls_are_replicated_deleted_by_filter_and_kept_by_snapshots() {
    let (mut app, _) = recording_app();
    let a = acl_binding("orders", AclPatternType::Literal, "User:a");
    let b = acl_binding("ord", AclPatternType::Prefixed, "User:b");
    let reply = apply(
        &mut app,
        1,
        Some(TOKEN),
        Body::CreateAcls {
            acls: vec![
                a.clone(),
                b.clone(),
                acl_binding("", AclPatternType::Literal, "User:c"),
            ],
        },
    );
    assert_eq!(
        reply,
        AppReply::AclsCreated(vec![
            Ok(()),
            Ok(()),
            Err("Resource name should not be empty".into())
        ])
    );
    assert_eq!(app.acls().len(), 2);
    // Snapshot and restore: the same table, and the authorizer's answers with it.
    let (mut restored, _) = recording_app();
    restored.restore(app.snapshot_records()).unwrap();
    assert_eq!(restored.acls(), app.acls());
    let settings = acl::AuthorizerSettings::default();
    let orders = acl::Resource {
        resource_type: AclResourceType::Topic,
        name: "orders",
    };
    assert_eq!(
        restored
            .acls()
            .authorize(&settings, "User:b", "h", AclOperation::Read, orders),
        acl::Decision::Allowed
    );
    // Delete by a MATCH filter on the topic "orders": both apply to it.
    let reply = apply(
        &mut app,
        2,
        Some(TOKEN),
        Body::DeleteAcls {
            filters: vec![AclFilter {
                resource_type: Some(AclResourceType::Topic),
                name: Some("orders".into()),
                pattern: AclPatternFilter::Match,
                principal: Some("User:b".into()),
                host: None,
                operation: None,
                permission: None,
            }],
        },
    );
    assert_eq!(reply, AppReply::AclsDeleted(vec![vec![b]]));
    assert_eq!(app.acls().iter().cloned().collect::<Vec<_>>(), vec![a]);
    // A record under another ACL's key is refused.
    let mut bad = app.snapshot_records();
    for r in &mut bad {
        if r.key.first() == Some(&NS_ACL) {
            r.key = codec::acl_key(&acl_binding("x", AclPatternType::Literal, "User:x"));
        }
    }
    assert!(restored.restore(bad).is_err());
}
