//! The effective configuration in a few short INFO lines at start-up: what an operator checks
//! first when a node behaves unexpectedly ("which flags did it actually run with?").

use super::{BrokerConfig, ServeArgs};

/// One line per area, each `area: key value, ...`. Limits added later join the `limits` line.
pub fn lines(args: &ServeArgs, config: &BrokerConfig) -> Vec<String> {
    let cluster = &args.cluster;
    let group = &args.group;
    let limits = &config.connection_limits;
    let membership = if cluster.join {
        "joining an existing cluster".to_string()
    } else if cluster.peers.is_empty() {
        "one voter".to_string()
    } else {
        format!("peers {}", cluster.peers.join(","))
    };
    let durability = match config.flush_interval {
        None => "fsync before every acknowledgement".to_string(),
        Some(d) => format!("acknowledge at once, fsync every {} ms", d.as_millis()),
    };
    let mut out = vec![
        format!(
            "node: id {}, data dir {}, advertised {}:{}",
            config.node_id,
            config.data_dir.display(),
            config.advertised_host,
            config.advertised_port
        ),
        format!(
            "raft: {membership}, listen {} ({}), store {}, snapshot every {} entries",
            cluster.raft_listen,
            if cluster.cluster_secret_file.is_some() {
                "peers prove the cluster secret"
            } else {
                "open to anyone"
            },
            cluster.raft_store,
            cluster.raft_snapshot_every_entries
        ),
        format!(
            "topics: {durability}, retention checked every {} ms, auto-create {}, default \
             partitions {}, disk reserve {}",
            config.retention_check_interval.as_millis(),
            if config.auto_create_topics {
                "on"
            } else {
                "off"
            },
            config.default_num_partitions,
            size(usize::try_from(config.disk_reserve_bytes).unwrap_or(usize::MAX))
        ),
        format!(
            "groups: session timeout {}..{} ms, initial rebalance delay {} ms, max size {}, \
             offsets kept {} min, max {} groups of {} offsets",
            group.group_min_session_timeout_ms,
            group.group_max_session_timeout_ms,
            group.group_initial_rebalance_delay_ms,
            group.group_max_size,
            group.offsets_retention_minutes,
            group.groups_max,
            group.offsets_per_group_max
        ),
        format!(
            "limits: frame {}, {} connections (idle {} s, send {} s), request memory {}, {} \
             segment files, lag {} groups / {} partitions",
            size(limits.max_frame_bytes),
            limits.max_connections,
            limits.idle_timeout.as_secs(),
            limits.send_timeout.as_secs(),
            size(args.limits.queued_max_request_bytes),
            config.open_segment_files_max,
            config.lag.groups_max,
            config.lag.partitions_max
        ),
    ];
    // Only when there is more to say than one PLAINTEXT listener (the default reads as before).
    let secured = config
        .listeners
        .iter()
        .any(|l| l.protocol != crate::security::listeners::SecurityProtocol::Plaintext);
    if secured || config.listeners.len() > 1 {
        let listeners: Vec<String> = config
            .listeners
            .iter()
            .map(|l| format!("{}://{}:{}", l.protocol, l.host, l.port))
            .collect();
        let sec = &args.security;
        // Names and counts only: never a password or a hash.
        out.push(format!(
            "security: advertised {}, SASL {}, {} SCRAM users to bootstrap (replicated credentials), PLAIN users {}, client certs {}",
            listeners.join(","),
            sec.sasl_enabled_mechanisms,
            sec.scram_users.len(),
            if sec.sasl_plain_users.is_some() {
                "from file"
            } else {
                "none"
            },
            if sec.ssl_client_ca.is_some() {
                "required on SSL"
            } else {
                "not asked"
            },
        ));
    }
    if !args.cluster.is_single() && (secured || config.listeners.len() > 1) {
        // Who the node is on its peers' Kafka ports: the user name, never the password.
        let ib = &config.inter_broker;
        let who = match (&ib.sasl, &ib.tls) {
            (Some(login), _) => format!("as {} ({})", login.username, login.mechanism.name()),
            (None, Some(_)) => "with TLS (keystore if set)".to_owned(),
            (None, None) => "as User:ANONYMOUS".to_owned(),
        };
        out.push(format!("inter-broker: listener {}, {who}", ib.protocol));
    }
    if args.http_basic_auth.is_some() {
        // That it is on, never who: the file's names and passwords stay out of the log.
        out.push(
            "http: basic auth required (users from file), /healthz and /readyz open".to_owned(),
        );
    }
    out
}

/// `512 MiB` when a whole number of MiB, else bytes.
fn size(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: ServeArgs,
    }

    #[test]
    fn the_default_configuration_reads_in_five_short_lines() {
        let args = Wrap::parse_from(["serve", "--flush-ms", "50"]).args;
        let config = match BrokerConfig::resolve(&args, ([127, 0, 0, 1], 9092).into()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let lines = lines(&args, &config);
        assert_eq!(lines.len(), 5);
        assert!(lines.iter().all(|l| l.len() < 160), "{lines:#?}");
        assert_eq!(
            lines[0],
            "node: id 1, data dir ./data, advertised 127.0.0.1:9092"
        );
        assert!(lines[1].starts_with("raft: one voter, "), "{}", lines[1]);
        assert!(
            lines[2].starts_with("topics: acknowledge at once, fsync every 50 ms"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].contains("session timeout 6000..1800000 ms"),
            "{}",
            lines[3]
        );
        assert!(
            lines[4].starts_with("limits: frame 100 MiB, 1024 connections (idle 600 s, send 30 s), request memory 512 MiB, "),
            "{}",
            lines[4]
        );
    }
}
