//! `cohort bench auth`: SASL authentications per second, and per second of broker CPU (per
//! core), against a running broker whose pid is given so its CPU time can be read.
//!
//! ```text
//!  --connections tasks, each: loop { TCP ─ [TLS] ─ ApiVersions ─ SaslHandshake ─
//!                                     SaslAuthenticate (1 round PLAIN, 2 SCRAM) ─ close }
//!  warm-up, then a window: authentications, failures, broker and load-generator CPU
//! ```
//!
//! The connections log in with Cohort's own client (`src/client/auth/`) from
//! `--command-config`, so the client computes its side of SCRAM too: on a shared machine the
//! per-core figure (authentications per second of broker CPU) is the one to compare.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use super::broker::{cpu_time, load_average};
use super::BenchError;
use crate::client::connection::Connection;
use crate::client::ClientConfig;

/// Flags of `cohort bench auth`.
#[derive(Debug, Clone, Args)]
pub struct AuthArgs {
    /// The broker's SASL listener, `host:port`.
    #[arg(long)]
    pub bootstrap_server: String,
    /// Client properties naming a SASL protocol, mechanism and login (`--command-config`
    /// syntax).
    #[arg(long)]
    pub command_config: String,
    /// The broker's process id, whose CPU time the window reads.
    #[arg(long)]
    pub broker_pid: u32,
    /// Concurrent connect-authenticate-close loops.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub connections: u32,
    /// Measured seconds (after the warm-up).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub duration_secs: u64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=600))]
    pub warmup_secs: u64,
}

/// Counters the loops share.
#[derive(Debug, Default)]
struct Counts {
    done: AtomicU64,
    failed: AtomicU64,
}

pub async fn run(a: AuthArgs) -> Result<(), BenchError> {
    let (config, unused) =
        ClientConfig::for_tool(&a.bootstrap_server, Some(&a.command_config), &[])
            .map_err(|e| BenchError::Setup(e.java_message()))?;
    if !unused.is_empty() {
        eprintln!("unused --command-config keys: {}", unused.join(", "));
    }
    let Some(login) = config.security.sasl.clone() else {
        return Err(BenchError::Setup(
            "--command-config must name SASL_PLAINTEXT or SASL_SSL".into(),
        ));
    };
    let addr = config
        .bootstrap_servers
        .first()
        .cloned()
        .ok_or_else(|| BenchError::Setup("no --bootstrap-server".into()))?;
    if cpu_time(a.broker_pid).is_none() {
        return Err(BenchError::Setup(format!(
            "no process {} to read the CPU time of",
            a.broker_pid
        )));
    }
    let security = Arc::new(config.security);
    // One authentication first: a wrong password is a setup error, not a figure.
    Connection::open_with(
        &addr,
        "cohort-bench-auth",
        config.request_timeout,
        &security,
    )
    .await
    .map_err(|e| BenchError::Setup(e.java_message()))?;
    let counts = Arc::new(Counts::default());
    let warmup = Duration::from_secs(a.warmup_secs);
    let window = Duration::from_secs(a.duration_secs);
    let end = Instant::now() + warmup + window;
    let mut loops = tokio::task::JoinSet::new();
    for _ in 0..a.connections {
        let (addr, security, counts) = (addr.clone(), security.clone(), counts.clone());
        let timeout = config.request_timeout;
        loops.spawn(async move {
            while Instant::now() < end {
                match Connection::open_with(&addr, "cohort-bench-auth", timeout, &security).await {
                    Ok(_) => counts.done.fetch_add(1, Ordering::Relaxed),
                    Err(_) => counts.failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        });
    }
    tokio::time::sleep(warmup).await;
    let sample = || {
        (
            counts.done.load(Ordering::Relaxed),
            counts.failed.load(Ordering::Relaxed),
            cpu_time(a.broker_pid),
            cpu_time(std::process::id()),
        )
    };
    let (done0, failed0, broker0, own0) = sample();
    let started = Instant::now();
    tokio::time::sleep(window).await;
    let (done1, failed1, broker1, own1) = sample();
    let elapsed = started.elapsed().as_secs_f64();
    while loops.join_next().await.is_some() {}
    let done = done1 - done0;
    let broker_cpu = broker1
        .zip(broker0)
        .map(|(b, a)| b.saturating_sub(a).as_secs_f64());
    let own_cpu = own1
        .zip(own0)
        .map(|(b, a)| b.saturating_sub(a).as_secs_f64());
    println!(
        "cohort bench auth: {} {} at {addr}, {} loops, {:.1} s window (load average before: {})",
        security.protocol,
        login.mechanism.name(),
        a.connections,
        elapsed,
        load_average()
    );
    println!("authentications        {done}");
    println!("failed                 {}", failed1 - failed0);
    println!("authentications/s      {:.1}", done as f64 / elapsed);
    match broker_cpu {
        Some(cpu) if cpu > 0.0 => {
            println!(
                "broker CPU             {cpu:.2} s ({:.0} % of one core)",
                100.0 * cpu / elapsed
            );
            println!("per broker CPU second  {:.1}", done as f64 / cpu);
        }
        _ => println!("broker CPU             unknown"),
    }
    if let Some(cpu) = own_cpu {
        println!("load generator CPU     {cpu:.2} s");
    }
    Ok(())
}
