//! The broker process: listeners, the accept loop, startup and clean shutdown.
//!
//! ```text
//!  Server::start(args)
//!    lock <data-dir>/cohort.lock ─> bind Kafka + HTTP listeners
//!    spawn run(listener, front) ─ accept ─> one task per connection (connection::serve)
//!    spawn http::run (/healthz, /readyz, /metrics, /console): answers while the node loads
//!    start Raft (replays the log) ─> caught up ─> open the data plane ─> front: broker ready
//!      (/readyz: 200 from here while a leader is known) ─> spawn lag::run_exporter
//!    spawn data::reconcile::run (judges partition directories once caught up with the leader)
//!  Server::shutdown()
//!    flip the shutdown signal: stop accepting; idle connections close; a connection in the
//!    middle of a request finishes it and writes the response; long polls answer at once
//!    wait for every connection task (bounded), flush and fsync, release the lock
//! ```
//!
//! `serve_main` is `cohort serve`: it runs the same `Server` until SIGINT or SIGTERM.

pub mod authenticate;
pub mod connection;
pub mod frame_reader;
pub mod front;
pub mod limits;
pub mod listener;
pub mod reauth;
pub mod request_memory;
pub mod send_records;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::BrokerId;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::broker::Broker;
use crate::cluster::BrokerEndpoint;
use crate::config::{BrokerConfig, ConfigError, ServeArgs};
use crate::data::DataPlane;
use crate::group_coordinator::GroupCoordinator;
use crate::handlers::loading::LoadingNode;
use crate::lag::{LagFeed, LogOffsetsPoller};
use crate::lock::{DataDirLock, LockError};
use crate::metrics as m;
use crate::readiness::Readiness;
use crate::replicated::catalog::{RaftCatalog, RaftCluster};
use crate::security::listeners::{ListenerAddr, SecurityProtocol};
use front::Front;

/// Longest wait for in-flight requests at shutdown before their connections are cut.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How long a node waits at startup to apply what it knows is committed.
const CATCH_UP_WAIT: Duration = Duration::from_secs(60);
/// One attempt to catch up with the leader before the partition directories are reconciled.
const RECONCILE_ATTEMPT: Duration = Duration::from_secs(10);
/// Bounds on how long the coordinator waits for a partition owner's log offsets (the sample
/// interval, within these).
const LAG_POLL_TIMEOUT_MIN: Duration = Duration::from_secs(1);
const LAG_POLL_TIMEOUT_MAX: Duration = Duration::from_secs(5);

/// Exit code of a command line that cannot run (clap's own usage errors exit with it too).
pub const USAGE_EXIT_CODE: u8 = 2;

/// Why the broker could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerStartError {
    /// The data directory is taken or unusable.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The Raft meta service (topics, groups) could not start.
    #[error(transparent)]
    Replicated(#[from] crate::replicated::ReplicatedStartError),
    /// A flag value is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The TLS files or the credentials cannot be loaded.
    #[error(transparent)]
    Security(#[from] crate::security::SecurityError),
    /// The `--http-basic-auth` file cannot be loaded.
    #[error(transparent)]
    HttpBasicAuth(#[from] crate::security::http_basic::HttpBasicAuthError),
    /// The partition directory could not be prepared.
    #[error("preparing topic data: {0}")]
    Data(#[from] compaction::LogError),
    /// A Kafka listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    BindListener {
        /// The address, as given.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// A running broker, in this process.
pub struct Server {
    kafka_addr: SocketAddr,
    /// Every Kafka listener and where it is bound (the first is `kafka_addr`).
    listeners: Vec<(SecurityProtocol, SocketAddr)>,
    http_addr: SocketAddr,
    broker: Arc<Broker>,
    groups: Arc<GroupCoordinator>,
    /// Removes partition data of topics deleted through another node.
    deletions_task: tokio::task::JoinHandle<()>,
    /// Moves aside directories no topic owns, once this node has caught up with the leader.
    reconcile_task: tokio::task::JoinHandle<()>,
    shutdown_tx: watch::Sender<bool>,
    /// One accept loop per listener.
    kafka_tasks: Vec<tokio::task::JoinHandle<()>>,
    http_task: tokio::task::JoinHandle<()>,
    /// Polls log offsets and samples lag while this node is the coordinator.
    lag_task: tokio::task::JoinHandle<()>,
    maintenance_task: tokio::task::JoinHandle<()>,
    /// What `/readyz` reports.
    readiness: Arc<Readiness>,
    /// Held until shutdown completes.
    lock: DataDirLock,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("kafka_addr", &self.kafka_addr)
            .field("http_addr", &self.http_addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Takes the data directory, opens its state, binds both listeners and starts serving.
    pub async fn start(args: ServeArgs) -> Result<Server, ServerStartError> {
        // Installs the recorder before anything counts (the Raft node and the coordinator
        // publish gauges while they start).
        let _ = m::prometheus();
        // A command line that cannot run creates no file and binds no port.
        args.validate()?;
        let lock = DataDirLock::acquire(&args.data_dir)?;
        let mut kafka_listeners = Vec::new();
        let mut bound = Vec::new();
        for l in args.listener_addrs() {
            let (socket, addr) = bind_listener(&l).await?;
            kafka_listeners.push(socket);
            bound.push(addr);
        }
        let kafka_addr = bound[0];
        let http_listener =
            TcpListener::bind(args.http)
                .await
                .map_err(|source| ServerStartError::Bind {
                    addr: args.http,
                    source,
                })?;
        let http_addr = http_listener
            .local_addr()
            .map_err(|source| ServerStartError::Bind {
                addr: args.http,
                source,
            })?;
        let config = BrokerConfig::resolve_bound(&args, &bound)?;
        let security = crate::security::Security::load(&args.security)?;
        let http_auth = match &args.http_basic_auth {
            Some(path) => Some(Arc::new(crate::security::http_basic::HttpBasicAuth::load(
                path,
            )?)),
            None => None,
        };
        tracing::info!(version = env!("CARGO_PKG_VERSION"), %kafka_addr, %http_addr, "cohort starting");
        for line in crate::config::summary::lines(&args, &config) {
            tracing::info!("{line}");
        }
        // Serving starts now, while the node replays its log: group requests are answered
        // COORDINATOR_LOAD_IN_PROGRESS (as Kafka's listener does while a coordinator loads),
        // the rest waits for the broker. Returning early drops `shutdown_tx`, which ends it.
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let loading_as = if args.cluster.is_single() {
            LoadingNode::Coordinator(BrokerEndpoint {
                node_id: BrokerId(config.node_id),
                host: config.advertised_host.clone(),
                port: config.advertised_port,
                rack: None,
            })
        } else {
            LoadingNode::ClusterMember
        };
        let (front, publish) = Front::new(loading_as, config.connection_limits);
        let mut listeners = Vec::new();
        let mut kafka_tasks = Vec::new();
        for ((socket, addr), advertised) in kafka_listeners
            .into_iter()
            .zip(&bound)
            .zip(&config.listeners)
        {
            listeners.push((advertised.protocol, *addr));
            let listener = Arc::new(security.listener(advertised.clone()));
            kafka_tasks.push(tokio::spawn(run(
                socket,
                listener,
                front.clone(),
                shutdown_rx.clone(),
            )));
        }
        let readiness = Arc::new(Readiness::default());
        readiness.listening();
        // HTTP answers from now on: /healthz says the process is alive and /readyz what it
        // still waits for while the log replays.
        let lag = Arc::new(LagFeed::new(config.lag));
        // Made before the data plane so that /metrics reports it from the start.
        let open_files = compaction::OpenFiles::new(config.open_segment_files_max);
        let disk = Arc::new(crate::disk::DiskSpace::new(
            &config.data_dir,
            config.disk_reserve_bytes,
        ));
        let txn_gauges = Arc::new(crate::txn_metrics::TxnGauges::default());
        let http_routes = Arc::new(crate::http::Routes {
            lag: lag.clone(),
            readiness: readiness.clone(),
            open_files: open_files.clone(),
            disk: disk.clone(),
            txn: txn_gauges.clone(),
            auth: http_auth,
            broker: std::sync::OnceLock::new(),
        });
        let http_task = tokio::spawn(crate::http::run(
            http_listener,
            http_routes.clone(),
            shutdown_rx.clone(),
        ));
        let groups = Arc::new(
            crate::replicated::start(
                config.node_id,
                format!("{}:{}", config.advertised_host, config.advertised_port),
                &config.data_dir,
                &args.cluster,
                &args.group,
                crate::replicated::scram::bootstrap_records(security.credentials()),
                Some(lag.clone()),
            )
            .await?,
        );
        // Every listener in this node's membership record, so that peers and clients on any
        // listener learn its address there (decision 0184). The task ends once recorded.
        groups.node().publish_listeners(
            config
                .listeners
                .iter()
                .map(|l| raft_meta::KafkaListener {
                    name: l.protocol.name().to_owned(),
                    addr: format!("{}:{}", l.host, l.port),
                })
                .collect(),
        );
        // SASL listeners authenticate SCRAM users from the replicated state from now on.
        security.credentials().install_scram(Arc::new(
            crate::replicated::scram::ReplicatedScram::new(groups.node().clone()),
        ));
        readiness.groups_started(&groups);
        disk.add_raft(groups.node().space_guards());
        // Ends with the shutdown signal (or when start fails and drops its sender).
        tokio::spawn(disk.clone().run_rechecks(shutdown_rx.clone()));
        // Serve the topic list as committed, not as a half-replayed log. A one-voter cluster
        // also becomes the active coordinator here, so its first clients never see
        // NOT_COORDINATOR.
        crate::replicated::wait_caught_up(&groups, args.cluster.is_single(), CATCH_UP_WAIT).await?;
        if args.cluster.is_single() && !security.credentials().scram_bootstrap().is_empty() {
            // A new one-voter cluster's first clients authenticate with the flags' users.
            crate::replicated::wait_scram_bootstrapped(&groups, CATCH_UP_WAIT).await?;
        }
        let catalog = Arc::new(RaftCatalog::new(groups.node().clone()));
        let data = Arc::new(DataPlane::open(
            &config.data_dir,
            catalog.clone(),
            config.node_id,
            config.flush_interval.is_none(),
            crate::data::DataLimits {
                list_offsets_decompress_bytes: config.list_offsets_decompress_bytes,
                open_files,
                space: Some(crate::data::DataSpace {
                    log: disk.partition_log().clone(),
                    index: disk.index().clone(),
                }),
            },
        )?);
        txn_gauges.attach(&data);
        // Before the reconcile task, which waits for it to act on the deletions applied so far.
        let deletions_task = tokio::spawn(crate::replicated::follow_topic_deletions(
            groups.clone(),
            data.clone(),
        ));
        // Directories the topic list does not account for are judged only once this node has
        // caught up with the leader (see `data::reconcile`) and the deletions follower has
        // removed the data of every deletion applied by then (else a deleted topic's
        // directory would be moved aside as unknown instead); a lone node does so before it
        // serves, a cluster node in the background (it may have no quorum yet).
        let reconcile_task = tokio::spawn(crate::data::reconcile::run(
            data.clone(),
            {
                let groups = groups.clone();
                move || {
                    let groups = groups.clone();
                    async move {
                        let index = groups
                            .node()
                            .wait_caught_up_with_leader(RECONCILE_ATTEMPT)
                            .await
                            .map_err(|e| e.to_string())?;
                        match tokio::time::timeout(RECONCILE_ATTEMPT, groups.topic_events_handled())
                            .await
                        {
                            Ok(true) => Ok(index),
                            Ok(false) => Err("the group runtime stopped".to_owned()),
                            Err(_) => Err("topic deletions not handled in time".to_owned()),
                        }
                    }
                }
            },
            shutdown_rx.clone(),
        ));
        if args.cluster.is_single()
            && tokio::time::timeout(CATCH_UP_WAIT, data.wait_reconciled())
                .await
                .is_err()
        {
            reconcile_task.abort();
            deletions_task.abort();
            return Err(crate::replicated::ReplicatedStartError::NotCaughtUp(CATCH_UP_WAIT).into());
        }
        let cluster = Arc::new(RaftCluster::new(
            groups.node().clone(),
            BrokerEndpoint {
                node_id: BrokerId(config.node_id),
                host: config.advertised_host.clone(),
                port: config.advertised_port,
                rack: None,
            },
        ));
        let authorizer = Arc::new(crate::security::authorizer::Authorizer::new(
            config.authorizer.clone(),
            Some(groups.node().clone()),
        ));
        let broker = Arc::new(Broker {
            config,
            cluster,
            catalog: catalog.clone(),
            producer_ids: catalog,
            data,
            shutdown: shutdown_rx.clone(),
            groups: Some(groups.clone()),
            authorizer,
        });
        // Prepared transactions wait for the data plane before their markers are written.
        groups.attach_marker_log(Arc::new(
            crate::group_coordinator::txn_marker_log::BrokerMarkerLog::new(
                broker.data.clone(),
                Arc::new(Arc::new(
                    crate::group_coordinator::txn_marker_log::KafkaPortMarkers::new(
                        broker.cluster.clone(),
                        broker.config.inter_broker.clone(),
                    ),
                )),
            ),
        ));
        publish.ready(broker.clone());
        // The console's topics pages read the catalog and the partition logs from now on.
        let _ = http_routes.broker.set(Arc::downgrade(&broker));
        readiness.replayed();
        let interval = broker.config.lag_sample_interval;
        let poller = LogOffsetsPoller::new(
            broker.config.node_id,
            broker.catalog.clone(),
            broker.cluster.clone(),
            broker.data.clone(),
            // An owner's answer may take a while on a busy node; never wait past 5 s.
            interval.clamp(LAG_POLL_TIMEOUT_MIN, LAG_POLL_TIMEOUT_MAX),
            broker.config.inter_broker.clone(),
        );
        let lag_task = tokio::spawn(crate::lag::run_exporter(
            lag,
            poller,
            interval,
            shutdown_rx.clone(),
        ));
        tokio::spawn(m::run_upkeep(shutdown_rx.clone()));
        let maintenance_task = tokio::spawn(maintenance(broker.clone(), shutdown_rx));
        tracing::info!(%kafka_addr, %http_addr, data_dir = %broker.config.data_dir.display(),
            node_id = broker.config.node_id, "cohort started");
        Ok(Server {
            kafka_addr,
            listeners,
            http_addr,
            broker,
            groups,
            deletions_task,
            reconcile_task,
            shutdown_tx,
            kafka_tasks,
            http_task,
            lag_task,
            maintenance_task,
            readiness,
            lock,
        })
    }

    /// Where the Kafka protocol listens.
    pub fn kafka_addr(&self) -> SocketAddr {
        self.kafka_addr
    }

    /// Every Kafka listener's protocol and bound address, in `--listeners` order.
    pub fn listeners(&self) -> &[(SecurityProtocol, SocketAddr)] {
        &self.listeners
    }

    /// Where `/healthz` and `/metrics` are served.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// Where the Raft peer listener (and `cohort cluster`'s admin requests) is served.
    pub fn raft_addr(&self) -> SocketAddr {
        self.groups.node().raft_addr()
    }

    /// The shared broker state (for tests and benches).
    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// Stops accepting, lets in-flight requests finish (bounded by [`SHUTDOWN_GRACE`]), makes
    /// every write durable and releases the data directory.
    pub async fn shutdown(self) {
        self.readiness.stopping();
        let _ = self.shutdown_tx.send(true);
        for task in self.kafka_tasks {
            if task.await.is_err() {
                tracing::error!("the accept loop panicked");
            }
        }
        let _ = self.http_task.await;
        let _ = self.lag_task.await;
        let _ = self.maintenance_task.await;
        // Connections are drained: nothing appends any more. Make everything durable.
        self.broker.data.flush_all().await;
        // The connections are gone; the broker's catalog and cluster view are the last
        // holders of the Raft node besides `groups`.
        self.deletions_task.abort();
        let _ = self.deletions_task.await;
        let _ = self.reconcile_task.await;
        drop(self.broker);
        match Arc::try_unwrap(self.groups) {
            Ok(groups) => groups.shutdown().await,
            Err(_) => tracing::warn!("group coordinator still referenced at shutdown"),
        }
        tracing::info!(lock = %self.lock.path().display(), "cohort stopped");
        drop(self.lock);
    }
}

/// Binds one Kafka listener.
async fn bind_listener(l: &ListenerAddr) -> Result<(TcpListener, SocketAddr), ServerStartError> {
    let wanted = l.host_port();
    let failed = |source: std::io::Error| ServerStartError::BindListener {
        addr: wanted.clone(),
        source,
    };
    let socket = TcpListener::bind(wanted.as_str()).await.map_err(failed)?;
    let addr = socket.local_addr().map_err(failed)?;
    Ok((socket, addr))
}

/// The accept loop (mini-redis shape) of one listener: one task per connection, at most
/// `max_connections` at once over every listener, until `shutdown` flips; then waits for the
/// connection tasks.
pub async fn run(
    socket: TcpListener,
    listener: Arc<listener::Listener>,
    front: Arc<Front>,
    mut shutdown: watch::Receiver<bool>,
) {
    let max_connections = front.max_connections();
    let permits = front.connection_permits().clone();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = socket.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        accept_failed("kafka", &e).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    metrics::counter!(m::CONNECTIONS_REFUSED_TOTAL).increment(1);
                    tracing::warn!(%peer, max = max_connections,
                        "closing connection: too many connections");
                    drop(stream);
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let front = front.clone();
                let shutdown = shutdown.clone();
                let listener = listener.clone();
                connections.spawn(async move {
                    metrics::gauge!(m::CONNECTIONS_ACTIVE).increment(1.0);
                    listener.serve(stream, peer, front, shutdown).await;
                    metrics::gauge!(m::CONNECTIONS_ACTIVE).decrement(1.0);
                    drop(permit);
                });
            }
        }
    }
    drop(socket);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            remaining = connections.len(),
            "in-flight requests did not finish in time; closing their connections"
        );
        connections.shutdown().await;
    }
}

/// Pause after an accept failed for lack of file descriptors: they free up only when
/// something closes, so retrying sooner would spin on the connection left in the backlog.
const ACCEPT_BACKOFF_NO_FDS: Duration = Duration::from_millis(250);
/// Pause after any other failed accept (a connection reset while queued, and the like).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Backs off after a failed `accept`; counted, and logged at most once a second per process.
pub(crate) async fn accept_failed(listener: &'static str, error: &std::io::Error) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static STARTED: OnceLock<std::time::Instant> = OnceLock::new();
    static LAST_LOG_SECS: AtomicU64 = AtomicU64::new(u64::MAX);
    metrics::counter!(m::ACCEPT_ERRORS_TOTAL, "listener" => listener).increment(1);
    let now = STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs();
    if LAST_LOG_SECS.swap(now, Ordering::Relaxed) != now {
        tracing::warn!(listener, %error, "accept failed; backing off");
    }
    let out_of_fds = matches!(
        rustix::io::Errno::from_io_error(error),
        Some(rustix::io::Errno::MFILE | rustix::io::Errno::NFILE)
    );
    let pause = if out_of_fds {
        ACCEPT_BACKOFF_NO_FDS
    } else {
        ACCEPT_BACKOFF
    };
    tokio::time::sleep(pause).await;
}

/// Periodic work: retention every `retention_check_interval`, and with `--flush-ms` the flush
/// that makes acknowledged-but-unsynced writes durable and visible.
async fn maintenance(broker: Arc<Broker>, mut shutdown: watch::Receiver<bool>) {
    let mut retention = tokio::time::interval(broker.config.retention_check_interval);
    retention.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let flush_every = broker.config.flush_interval;
    let mut flush = tokio::time::interval(flush_every.unwrap_or(Duration::from_secs(3600)));
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = retention.tick() => broker.data.enforce_retention(crate::clock::unix_ms()).await,
            _ = flush.tick(), if flush_every.is_some() => broker.data.flush_all().await,
        }
    }
}

/// `cohort serve`: runs a [`Server`] until SIGINT or SIGTERM; exit code 0 after a clean stop,
/// 2 (nothing started) when a flag breaks its rule.
pub fn serve_main(args: ServeArgs) -> ExitCode {
    if let Err(ConfigError::Invalid(broken)) = args.validate() {
        for b in broken {
            eprintln!("cohort serve: {b}");
        }
        return ExitCode::from(USAGE_EXIT_CODE);
    }
    crate::logging::init(args.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cohort: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        // Registered before the listeners open: a SIGTERM that arrives while the broker
        // starts (or right after it announced itself) must not kill it uncleanly.
        let signal = wait_for_signal();
        let server = match Server::start(args).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cohort: {e}");
                return ExitCode::FAILURE;
            }
        };
        // One machine-readable line on stdout: scripts and tests learn the real ports here.
        let listeners: Vec<String> = server
            .listeners()
            .iter()
            .map(|(protocol, addr)| format!("{protocol}://{addr}"))
            .collect();
        println!(
            "cohort listening kafka={} http={} raft={} listeners={}",
            server.kafka_addr(),
            server.http_addr(),
            server.raft_addr(),
            listeners.join(",")
        );
        let signal = signal.await;
        tracing::info!(signal, "shutting down");
        server.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// Installs the SIGTERM handler now (not at first poll) and returns a future that resolves
/// with the name of the first stop signal.
fn wait_for_signal() -> impl std::future::Future<Output = &'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    async move {
        let mut term = match term {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the broker");
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
}
