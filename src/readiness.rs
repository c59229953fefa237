//! Whether this node is ready to serve: `GET /readyz` and the `cohort_ready` gauges.
//!
//! ```text
//!  /healthz   the process answers HTTP                       always 200 while it runs
//!  /readyz    every check below passes                       200, else 503 naming each failure
//!    listeners  the Kafka listener accepts (not starting, not shutting down)
//!    replayed   the Raft log is replayed and the data plane open (the broker serves requests)
//!    leader     a Raft leader is known (group requests have a coordinator to go to)
//!    apply      the Raft node applies its log: it has not halted at an entry (or snapshot) it
//!               cannot read, nor stopped on a fatal error (docs/decisions/0109)
//! ```
//!
//! The checks are a list of named functions of the node's state, read when asked: nothing
//! caches a verdict that could go stale. Adding one = a name in [`CHECKS`] and an arm in
//! `Readiness::run`; the name is the `check` label of `cohort_ready_check`, so the set of
//! label values stays fixed and small.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use crate::group_coordinator::GroupCoordinator;

/// Every check, in the order `/readyz` lists them. Fixed: these are label values.
pub const CHECKS: [&str; 4] = ["listeners", "replayed", "leader", "apply"];

/// `1` when the node is ready, `0` otherwise.
pub const READY: &str = "cohort_ready";
/// One per check (`check` label): `1` passing, `0` failing.
pub const READY_CHECK: &str = "cohort_ready_check";

/// What the checks read; set by [`crate::server::Server`] as the node starts and stops.
#[derive(Debug, Default)]
pub struct Readiness {
    /// The Kafka accept loop runs and no shutdown has begun.
    listening: AtomicBool,
    /// The log is replayed and the broker published to the connections.
    replayed: AtomicBool,
    /// The Raft node and coordinator, once started. Weak: shutdown must be able to take the
    /// last strong reference and stop Raft cleanly.
    groups: OnceLock<Weak<GroupCoordinator>>,
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Its name (one of [`CHECKS`]).
    pub check: &'static str,
    /// What a passing check found ("node 2"), if it says.
    pub detail: Option<String>,
    /// Why it fails; `None` when it passes.
    pub failure: Option<String>,
}

impl Readiness {
    /// The Kafka listener accepts connections.
    pub fn listening(&self) {
        self.listening.store(true, Ordering::SeqCst);
    }

    /// Shutdown has begun: a load balancer should stop sending clients here.
    pub fn stopping(&self) {
        self.listening.store(false, Ordering::SeqCst);
    }

    /// The Raft node and coordinator are up (they may still be replaying).
    pub fn groups_started(&self, groups: &Arc<GroupCoordinator>) {
        let _ = self.groups.set(Arc::downgrade(groups));
    }

    /// The log is replayed and the broker serves.
    pub fn replayed(&self) {
        self.replayed.store(true, Ordering::SeqCst);
    }

    /// The coordinator handle, while the Raft node runs.
    pub fn groups(&self) -> Option<Arc<GroupCoordinator>> {
        self.groups.get().and_then(Weak::upgrade)
    }

    /// `check` right now: `Ok` with what it found (shown after "ok"), or `Err` with why it
    /// fails.
    fn run(&self, check: &str) -> Result<Option<String>, String> {
        let flag = |set: &AtomicBool, why: &str| {
            if set.load(Ordering::SeqCst) {
                Ok(None)
            } else {
                Err(why.to_string())
            }
        };
        match check {
            "listeners" => flag(
                &self.listening,
                "the Kafka listener is not accepting (starting or shutting down)",
            ),
            "replayed" => flag(
                &self.replayed,
                "replaying the Raft log (group requests answer COORDINATOR_LOAD_IN_PROGRESS or \
                 NOT_COORDINATOR, the rest waits)",
            ),
            "leader" => match self.groups().map(|g| g.leader()) {
                None => Err("the Raft node is starting or stopped".into()),
                Some(None) => {
                    Err("no Raft leader known (an election is under way or no quorum)".into())
                }
                Some(Some(l)) => Ok(Some(format!("node {}", l.node_id))),
            },
            "apply" => match self.groups().map(|g| g.node().fatal()) {
                None => Err("the Raft node is starting or stopped".into()),
                Some(Some(why)) => Err(why),
                Some(None) => Ok(None),
            },
            other => Err(format!("unknown check {other}")),
        }
    }

    /// Every check's verdict, in [`CHECKS`] order.
    pub fn verdicts(&self) -> Vec<Verdict> {
        CHECKS
            .iter()
            .map(|&check| {
                let (detail, failure) = match self.run(check) {
                    Ok(detail) => (detail, None),
                    Err(why) => (None, Some(why)),
                };
                Verdict {
                    check,
                    detail,
                    failure,
                }
            })
            .collect()
    }

    /// `/readyz`: whether every check passes, and a body with one line per check.
    pub fn report(&self) -> (bool, String) {
        let verdicts = self.verdicts();
        let ready = verdicts.iter().all(|v| v.failure.is_none());
        let mut body = String::from(if ready { "ready\n" } else { "not ready\n" });
        for v in &verdicts {
            let _ = match (&v.failure, &v.detail) {
                (Some(why), _) => writeln!(body, "{}: failing: {why}", v.check),
                (None, Some(found)) => writeln!(body, "{}: ok ({found})", v.check),
                (None, None) => writeln!(body, "{}: ok", v.check),
            };
        }
        (ready, body)
    }

    /// The gauges in Prometheus's text format (rendered per server at scrape time: the global
    /// recorder is shared by every in-process server of a test).
    pub fn render_gauges(&self) -> String {
        let verdicts = self.verdicts();
        let ready = verdicts.iter().all(|v| v.failure.is_none());
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP {READY} 1 when every /readyz check passes\n# TYPE {READY} gauge\n{READY} {}",
            u8::from(ready)
        );
        let _ = writeln!(
            out,
            "# HELP {READY_CHECK} 1 when the named /readyz check passes\n# TYPE {READY_CHECK} gauge"
        );
        for v in &verdicts {
            let _ = writeln!(
                out,
                "{READY_CHECK}{{check=\"{}\"}} {}",
                v.check,
                u8::from(v.failure.is_none())
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_ready_only_once_it_listens_and_has_replayed() {
        let r = Readiness::default();
        let (ready, body) = r.report();
        assert!(!ready);
        assert!(body.starts_with("not ready\n"), "{body}");
        assert!(body.contains("listeners: failing:"), "{body}");
        assert!(
            body.contains("replayed: failing: replaying the Raft log"),
            "{body}"
        );
        assert!(
            body.contains("leader: failing: the Raft node is starting"),
            "{body}"
        );
        r.listening();
        r.replayed();
        let failing: Vec<_> = r
            .verdicts()
            .into_iter()
            .filter(|v| v.failure.is_some())
            .map(|v| v.check)
            .collect();
        // Without a Raft node no leader can be known, nor a log applied.
        assert_eq!(failing, ["leader", "apply"]);
        r.stopping();
        assert!(r.report().1.contains("listeners: failing:"));
    }

    #[test]
    fn the_gauges_have_one_series_per_check() {
        let r = Readiness::default();
        r.listening();
        let text = r.render_gauges();
        assert!(text.contains("\ncohort_ready 0\n"), "{text}");
        assert!(
            text.contains("cohort_ready_check{check=\"listeners\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_ready_check{check=\"replayed\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_ready_check{check=\"leader\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_ready_check{check=\"apply\"} 0\n"),
            "{text}"
        );
        assert_eq!(text.matches("cohort_ready_check{").count(), CHECKS.len());
    }
}
