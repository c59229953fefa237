//! The HTTP side door: `GET /healthz` (the process is alive), `GET /readyz` (the node serves:
//! see [`crate::readiness`]), Prometheus `GET /metrics`, and the console's pages
//! ([`crate::console`]: `/console`, `/console/groups/<id>`, `/console/topics`,
//! `/console/topics/<name>`, `/console.json`). It answers from the moment the node starts,
//! while it replays its log, so an operator can watch it load; the topics pages answer 503
//! until the data plane is open.
//!
//! With `--http-basic-auth` every path but `/healthz` and `/readyz` needs the credentials of
//! one of its users ([`crate::security::http_basic`]); without them the answer is `401` with
//! the `Basic` challenge.
//!
//! A few fixed routes do not need an HTTP stack: a request line is read (bounded in size and
//! time), one response is written, the connection is closed.
//!
//! `/metrics` is the process's recorder (request counts, Raft, coordinator counters and
//! histograms) followed by the lag families rendered from the lag tracker's snapshot. Only the
//! active coordinator has group figures: on any other node the lag families are absent and the
//! console names the coordinator, so scraping every node of a cluster counts each group once.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::broker::Broker;
use crate::console::{topic_facts, Page, TopicsRoute};
use crate::group_coordinator::Role;
use crate::lag::{LagFeed, Snapshot};
use crate::readiness::Readiness;
use crate::security::http_basic::{HttpBasicAuth, CHALLENGE, OPEN_PATHS};

/// The root page: where things are.
const INDEX: &str =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Cohort</title></head>\
<body><h1>Cohort</h1><ul><li><a href=\"/console\">console</a> (consumer groups, their partitions and lag)</li>\
<li><a href=\"/console/topics\">topics</a> (partitions, sizes, offsets, configs)</li>\
<li><a href=\"/metrics\">metrics</a> (Prometheus)</li><li><a href=\"/healthz\">healthz</a></li>\
<li><a href=\"/readyz\">readyz</a></li></ul></body></html>\n";

/// Largest request head read before giving up.
const MAX_REQUEST_HEAD_BYTES: usize = 8 * 1024;
/// Time a client gets to send its request head.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// Most HTTP requests served at once; scrapes are rare, this only bounds abuse.
const MAX_CONCURRENT_REQUESTS: usize = 64;
/// Longest a topics page may take to gather its figures (it opens and measures partitions);
/// past it the page answers 503 and the script tries again.
const TOPICS_PAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the routes read.
pub struct Routes {
    /// Lag figures (exported only while this node is the active coordinator).
    pub lag: Arc<LagFeed>,
    /// The node's readiness, and its coordinator once started (to name the one that exports
    /// when this node does not).
    pub readiness: Arc<Readiness>,
    /// The data plane's open-file budget, exported as read at each scrape.
    pub open_files: compaction::OpenFiles,
    /// The disk-full guards (`cohort_disk_full`).
    pub disk: Arc<crate::disk::DiskSpace>,
    /// The transaction gauges (`crate::txn_metrics`).
    pub txn: Arc<crate::txn_metrics::TxnGauges>,
    /// `--http-basic-auth`: when set, every path but the probes needs one of its users.
    pub auth: Option<Arc<HttpBasicAuth>>,
    /// The broker, set once the data plane is open: the topics pages read its catalog and
    /// partition logs. Weak, as shutdown must be able to drop the last strong reference.
    pub broker: OnceLock<Weak<Broker>>,
}

impl Routes {
    /// The lag snapshot, or an empty one saying why there are no figures here.
    fn lag_snapshot(&self) -> (Snapshot, bool) {
        let now = crate::clock::unix_ms_unsigned();
        match self.lag.snapshot(now) {
            Some(s) => (s, true),
            None => (Snapshot::empty(now, self.not_exporting_notice()), false),
        }
    }

    fn not_exporting_notice(&self) -> String {
        let Some(groups) = self.readiness.groups() else {
            return "This node is starting; its group coordinator is not up yet.".to_string();
        };
        let me = groups.node().node_id();
        match (groups.role(), groups.leader()) {
            (Role::Follower, Some(l)) if l.node_id != me => format!(
                "Node {me} is not the group coordinator: node {} (Kafka {}) is, and its console shows the groups.",
                l.node_id, l.info.kafka_addr
            ),
            (Role::Follower, _) => format!(
                "Node {me} is not the group coordinator, and no coordinator is known right now."
            ),
            (Role::Loading | Role::Active, _) => format!(
                "Node {me} is becoming the group coordinator; figures follow within a sample interval."
            ),
        }
    }

    /// A topics page: its figures gathered from the broker (the same sources the Admin APIs
    /// read), or 503 while there is no broker yet or the gathering takes too long.
    async fn topics_page(&self, route: TopicsRoute, query: &str, snapshot: &Snapshot) -> Page {
        let Some(broker) = self.broker.get().and_then(Weak::upgrade) else {
            return crate::console::respond_topics_unavailable(
                query,
                &route,
                "This node is starting: its topics are listed once it serves.",
            );
        };
        if broker.is_shutting_down() {
            // Shutdown takes the last reference to the broker: hold none past this point.
            return crate::console::respond_topics_unavailable(
                query,
                &route,
                "This node is shutting down.",
            );
        }
        let now = crate::clock::unix_ms_unsigned();
        let gathered = tokio::time::timeout(TOPICS_PAGE_TIMEOUT, async {
            match &route {
                TopicsRoute::All => crate::console::respond_topics(
                    query,
                    &topic_facts::list(
                        &broker,
                        snapshot,
                        now,
                        topic_facts::LIST_PARTITIONS_MEASURED_MAX,
                    )
                    .await,
                ),
                TopicsRoute::One(name) => {
                    let detail = match name {
                        Some(n) => {
                            topic_facts::detail(
                                &broker,
                                n,
                                snapshot,
                                now,
                                topic_facts::PARTITIONS_LISTED_MAX,
                            )
                            .await
                        }
                        None => None,
                    };
                    crate::console::respond_topic(
                        query,
                        name.as_deref().unwrap_or(""),
                        detail.as_ref(),
                    )
                }
            }
        })
        .await;
        gathered.unwrap_or_else(|_| {
            crate::console::respond_topics_unavailable(
                query,
                &route,
                "The figures took too long to gather; the page tries again.",
            )
        })
    }

    fn metrics(&self) -> String {
        let files = &self.open_files;
        metrics::gauge!(crate::metrics::SEGMENT_FILES_OPEN).set(files.open() as f64);
        metrics::counter!(crate::metrics::SEGMENT_FILES_CLOSED_TOTAL)
            .absolute(files.closed_total());
        metrics::counter!(crate::metrics::SEGMENT_FILES_REOPENED_TOTAL)
            .absolute(files.reopened_total());
        let handle = crate::metrics::prometheus();
        handle.run_upkeep();
        let mut body = handle.render();
        let (snapshot, exporting) = self.lag_snapshot();
        if exporting {
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str(&crate::lag::prometheus::render(&snapshot));
        }
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str(&self.readiness.render_gauges());
        body.push_str(&self.disk.render_gauges());
        body.push_str(&self.txn.render(&self.readiness));
        body
    }
}

/// Serves until `shutdown` flips to true.
pub async fn run(listener: TcpListener, routes: Arc<Routes>, mut shutdown: watch::Receiver<bool>) {
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_REQUESTS));
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // EMFILE leaves the connection in the backlog: retrying at once spins.
                        crate::server::accept_failed("http", &e).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
                let routes = routes.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(e) = serve_one(stream, &routes).await {
                        tracing::debug!(error = %e, "http request failed");
                    }
                });
            }
        }
    }
}

async fn serve_one(mut stream: TcpStream, routes: &Routes) -> std::io::Result<()> {
    let head = tokio::time::timeout(REQUEST_HEAD_TIMEOUT, read_head(&mut stream))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "request head"))??;
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    if !authorized(routes, path, &head).await {
        // Nothing about the request or the users: the challenge alone.
        return respond(
            &mut stream,
            "401 Unauthorized",
            &format!("www-authenticate: {CHALLENGE}\r\n"),
            "text/plain; charset=utf-8",
            "unauthorized\n",
        )
        .await;
    }
    let (status, content_type, body) = match (method, path) {
        ("GET", "/healthz") => ("200 OK", "text/plain; charset=utf-8", "ok\n".to_string()),
        ("GET", "/readyz") => {
            let (ready, body) = routes.readiness.report();
            let status = if ready {
                "200 OK"
            } else {
                "503 Service Unavailable"
            };
            (status, "text/plain; charset=utf-8", body)
        }
        ("GET", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            routes.metrics(),
        ),
        ("GET", "/") => ("200 OK", "text/html; charset=utf-8", INDEX.to_string()),
        ("GET", p) if crate::console::serves(p) => {
            let (snapshot, _) = routes.lag_snapshot();
            let page = match crate::console::topics_route(p) {
                Some(route) => Some(routes.topics_page(route, query, &snapshot).await),
                None => crate::console::respond(path, query, &snapshot),
            };
            match page {
                Some(page) => (page.status, page.content_type, page.body),
                None => (
                    "404 Not Found",
                    "text/plain; charset=utf-8",
                    "not found\n".into(),
                ),
            }
        }
        ("GET", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found\n".into(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".into(),
        ),
    };
    respond(&mut stream, status, "", content_type, &body).await
}

/// Whether the request may be served: always without `--http-basic-auth` and for the probes,
/// else only with the credentials of one of its users. The header is never logged.
async fn authorized(routes: &Routes, path: &str, head: &str) -> bool {
    let Some(auth) = routes.auth.clone() else {
        return true;
    };
    if OPEN_PATHS.contains(&path) {
        return true;
    }
    let authorization = header(head, "authorization").map(str::to_owned);
    // Hashing the password is PBKDF2: off the runtime's workers, as a flood of guesses must
    // not stall the Kafka connections they serve.
    tokio::task::spawn_blocking(move || auth.allows(authorization.as_deref()))
        .await
        .unwrap_or(false)
}

/// The value of the first header called `name` (case-insensitive) in a request head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
}

/// Writes one response (`extra_headers`: complete `name: value\r\n` lines) and closes.
async fn respond(
    stream: &mut TcpStream,
    status: &str,
    extra_headers: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\n{extra_headers}content-type: {content_type}\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() >= MAX_REQUEST_HEAD_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}
