//! The lag status of one group partition, judged over a sliding window of observations in the
//! manner of LinkedIn's Burrow (its "consumer lag evaluation rules"), with no thresholds:
//!
//! | status  | rule (checked in this order)                                                      |
//! |---------|------------------------------------------------------------------------------------|
//! | ERROR   | the latest committed offset is past the log end, or before the log start           |
//! | OK      | the lag was zero at some point in the window                                       |
//! | STALLED | lag > 0 throughout, the committed offset never moved, but commits kept arriving    |
//! | STOPPED | lag > 0 throughout and the committed offset never moved, with no commits seen;     |
//! |         | or it moved, but the time since the last commit activity exceeds the time the     |
//! |         | window had seen activity (Burrow's "now − last commit > last − first")            |
//! | WARNING | the offset moves, but the lag grew in every interval of the window, in records and, |
//! |         | when the age of the record at the committed offset is known throughout, in time   |
//! | OK      | otherwise                                                                          |
//!
//! A window with fewer than two observations of a known lag only gets ERROR or OK. A partition
//! whose committed or log-end offset is unknown has no status (`None`, shown as `-`).
//!
//! The server's tracker also knows what a window does not show: when it started watching a
//! partition and when the partition's last commit was (from the applied state, so also for
//! commits made before this node became the coordinator). `judge` uses both so a window that
//! does not yet span `window_ms` claims nothing it cannot know: ERROR, OK from a zero lag, and
//! STOPPED from a last commit older than the window are certain at once; anything else is
//! "warming up" until the window is covered.
//!
//! Lag in time is the one thing Burrow cannot see: a backlog that grows only because producers
//! sped up, while the consumer keeps the same delay behind them, grows in records but not in
//! time. Such a consumer is keeping up, so WARNING also needs the time lag to grow in every
//! interval whenever every observation knows it (the tracker does, from the timestamps the log
//! keeps; a client sampling offsets does not, and judges by records alone).
//!
//! "Commits arriving" needs a commit counter: the server's tracker sees every commit, while a
//! client sampling OffsetFetch cannot tell a re-commit of the same offset from no commit, so for
//! it an unmoving offset is STOPPED.

/// One look at a partition of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// When, in ms (any epoch; only differences matter).
    pub at_ms: u64,
    /// The group's committed offset then.
    pub committed: Option<i64>,
    /// The partition's log-end offset then.
    pub log_end: Option<i64>,
    /// The partition's log-start offset then, if known.
    pub log_start: Option<i64>,
    /// Commits received for this partition so far (a running count), if the observer sees
    /// commits.
    pub commits: Option<u64>,
    /// How old the record at the committed offset was then, in ms (0 when caught up), if known.
    pub lag_ms: Option<u64>,
}

impl Observation {
    fn lag(&self) -> Option<i64> {
        super::offset_lag(self.committed, self.log_end)
    }
}

/// The verdict for one partition (or, as the worst of its partitions, for a group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LagStatus {
    /// Keeping up.
    Ok,
    /// Consuming, but falling further behind every interval.
    Warning,
    /// Committing without moving while behind.
    Stalled,
    /// Not committing while behind.
    Stopped,
    /// Committed offset out of the log's range.
    Error,
}

impl LagStatus {
    /// The name shown in tables and exported.
    pub fn as_str(self) -> &'static str {
        match self {
            LagStatus::Ok => "OK",
            LagStatus::Warning => "WARNING",
            LagStatus::Stalled => "STALLED",
            LagStatus::Stopped => "STOPPED",
            LagStatus::Error => "ERROR",
        }
    }

    /// A number for gauges: 0 OK, 1 WARNING, 2 STALLED, 3 STOPPED, 4 ERROR (worse is higher).
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl std::fmt::Display for LagStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The row of the module's table that decided a status, for people reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// ERROR: the committed offset is outside the log.
    OutOfRange,
    /// OK: the lag reached zero in the window.
    CaughtUp,
    /// OK: fewer than two observations behind, nothing to compare.
    TooFewObservations,
    /// STALLED: commits arrive, the offset does not move.
    CommittingWithoutMoving,
    /// STOPPED: the offset never moved and no commits were seen.
    NotCommitting,
    /// STOPPED: idle for longer than the window saw activity.
    IdleTooLong,
    /// STOPPED (before the window is covered): the last commit is older than a window.
    LastCommitOlderThanWindow,
    /// WARNING: the lag grew in every interval (in time too, when known).
    FallingBehind,
    /// OK: consuming, and the lag did not grow in every interval.
    KeepingUp,
}

impl Rule {
    /// The rule in words.
    pub fn text(self) -> &'static str {
        match self {
            Rule::OutOfRange => "the committed offset is past the log end or before the log start",
            Rule::CaughtUp => "the lag was zero at some point in the window",
            Rule::TooFewObservations => "fewer than two observations behind: nothing to compare yet",
            Rule::CommittingWithoutMoving => "behind throughout; commits kept arriving but the committed offset never moved",
            Rule::NotCommitting => "behind throughout; the committed offset never moved and no commits arrived",
            Rule::IdleTooLong => "no commit activity for longer than the window had seen activity",
            Rule::LastCommitOlderThanWindow => "behind throughout, and the last commit is older than the window",
            Rule::FallingBehind => "consuming, but the lag grew in every interval of the window (in seconds too, where known)",
            Rule::KeepingUp => "consuming, and the lag did not grow in every interval",
        }
    }
}

/// Judges a window of observations, oldest first.
pub fn evaluate(window: &[Observation]) -> Option<LagStatus> {
    assess(window).map(|(status, _)| status)
}

/// [`evaluate`] with the rule that decided.
pub fn assess(window: &[Observation]) -> Option<(LagStatus, Rule)> {
    let latest = window.last()?;
    let committed = latest.committed.filter(|c| *c >= 0)?;
    let log_end = latest.log_end?;
    if committed > log_end || latest.log_start.is_some_and(|start| committed < start) {
        return Some((LagStatus::Error, Rule::OutOfRange));
    }
    let known: Vec<&Observation> = window.iter().filter(|o| o.lag().is_some()).collect();
    if known.iter().any(|o| o.lag().is_some_and(|l| l <= 0)) {
        return Some((LagStatus::Ok, Rule::CaughtUp));
    }
    if known.len() < 2 {
        return Some((LagStatus::Ok, Rule::TooFewObservations));
    }
    let first = known[0];
    let last = known[known.len() - 1];
    let moved = known.windows(2).any(|w| w[0].committed != w[1].committed);
    let commit_counts: Option<Vec<u64>> = known.iter().map(|o| o.commits).collect();
    let commits_arrived = commit_counts
        .as_ref()
        .map(|c| c.windows(2).any(|w| w[1] > w[0]));
    if !moved {
        return Some(if commits_arrived == Some(true) {
            (LagStatus::Stalled, Rule::CommittingWithoutMoving)
        } else {
            (LagStatus::Stopped, Rule::NotCommitting)
        });
    }
    let last_activity = known
        .windows(2)
        .filter(|w| {
            w[0].committed != w[1].committed
                || matches!((w[0].commits, w[1].commits), (Some(a), Some(b)) if b > a)
        })
        .map(|w| w[1].at_ms)
        .max()
        .unwrap_or(first.at_ms);
    let idle = last.at_ms.saturating_sub(last_activity);
    let active = last_activity.saturating_sub(first.at_ms);
    if idle > active {
        return Some((LagStatus::Stopped, Rule::IdleTooLong));
    }
    let lags: Vec<i64> = known.iter().filter_map(|o| o.lag()).collect();
    if lags.windows(2).all(|w| w[1] > w[0]) && !keeps_its_delay(&known) {
        return Some((LagStatus::Warning, Rule::FallingBehind));
    }
    Some((LagStatus::Ok, Rule::KeepingUp))
}

/// Whether the time lag, known at every observation, failed to grow in some interval: the
/// consumer keeps its delay behind the producers however many records that delay holds.
fn keeps_its_delay(known: &[&Observation]) -> bool {
    let times: Option<Vec<u64>> = known.iter().map(|o| o.lag_ms).collect();
    times.is_some_and(|t| t.windows(2).any(|w| w[1] <= w[0]))
}

/// What a tracker knows about a partition beyond its window of observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// The first observation this tracker took of the partition (it has no older ones).
    pub watched_since_ms: u64,
    /// When the partition's latest commit was applied, as the commit's own timestamp says.
    pub last_commit_ms: Option<u64>,
    /// The span a window must cover before its verdict stands.
    pub window_ms: u64,
}

/// A tracker's verdict on one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Committed or log-end offset unknown.
    Unknown,
    /// Known to be this.
    Status(LagStatus),
    /// The window is shorter than `window_ms` and what it shows decides nothing yet.
    WarmingUp,
}

impl Verdict {
    /// The status, when one is known.
    pub fn status(self) -> Option<LagStatus> {
        match self {
            Verdict::Status(s) => Some(s),
            Verdict::Unknown | Verdict::WarmingUp => None,
        }
    }
}

/// Judges `window` (oldest first) knowing `coverage`: `evaluate`'s verdict once the window spans
/// `coverage.window_ms`; before that only what is already certain (see the module docs).
pub fn judge(window: &[Observation], coverage: Coverage) -> Verdict {
    judge_with_rule(window, coverage).0
}

/// [`judge`] with the rule behind a status (`None` when there is no status).
pub fn judge_with_rule(window: &[Observation], coverage: Coverage) -> (Verdict, Option<Rule>) {
    let Some((status, rule)) = assess(window) else {
        return (Verdict::Unknown, None);
    };
    let now = window.last().map_or(0, |o| o.at_ms);
    if status == LagStatus::Error
        || now.saturating_sub(coverage.watched_since_ms) >= coverage.window_ms
    {
        return (Verdict::Status(status), Some(rule));
    }
    if window.iter().any(|o| o.lag().is_some_and(|l| l <= 0)) {
        return (Verdict::Status(LagStatus::Ok), Some(Rule::CaughtUp));
    }
    // Behind in every observation, and no commit for a whole window: a full window would
    // say STOPPED too, whatever else it held.
    if coverage
        .last_commit_ms
        .is_some_and(|at| now.saturating_sub(at) >= coverage.window_ms)
    {
        return (
            Verdict::Status(LagStatus::Stopped),
            Some(Rule::LastCommitOlderThanWindow),
        );
    }
    (Verdict::WarmingUp, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Observations one second apart from (committed, log_end, commits) triples.
    fn window(points: &[(i64, i64, Option<u64>)]) -> Vec<Observation> {
        points
            .iter()
            .enumerate()
            .map(|(i, (c, e, n))| Observation {
                at_ms: i as u64 * 1000,
                committed: Some(*c),
                log_end: Some(*e),
                log_start: None,
                commits: *n,
                lag_ms: None,
            })
            .collect()
    }

    #[test]
    fn zero_lag_anywhere_in_the_window_is_ok() {
        let w = window(&[(10, 10, None), (10, 20, None), (10, 30, None)]);
        assert_eq!(evaluate(&w), Some(LagStatus::Ok));
    }

    #[test]
    fn committed_past_log_end_is_error() {
        let w = window(&[(10, 10, None), (25, 20, None)]);
        assert_eq!(evaluate(&w), Some(LagStatus::Error));
    }

    #[test]
    fn committed_before_log_start_is_error() {
        let mut w = window(&[(5, 50, None)]);
        w[0].log_start = Some(10);
        assert_eq!(evaluate(&w), Some(LagStatus::Error));
    }

    #[test]
    fn not_moving_and_not_committing_while_behind_is_stopped() {
        let w = window(&[(10, 20, Some(3)), (10, 25, Some(3)), (10, 30, Some(3))]);
        assert_eq!(evaluate(&w), Some(LagStatus::Stopped));
        let unknown_commits = window(&[(10, 20, None), (10, 20, None)]);
        assert_eq!(evaluate(&unknown_commits), Some(LagStatus::Stopped));
    }

    #[test]
    fn committing_without_moving_while_behind_is_stalled() {
        let w = window(&[(10, 20, Some(3)), (10, 20, Some(4)), (10, 21, Some(5))]);
        assert_eq!(evaluate(&w), Some(LagStatus::Stalled));
    }

    #[test]
    fn lag_growing_every_interval_while_consuming_is_warning() {
        let w = window(&[
            (10, 20, None),
            (15, 30, None),
            (20, 40, None),
            (25, 50, None),
        ]);
        assert_eq!(evaluate(&w), Some(LagStatus::Warning));
    }

    /// `window` with the time lags given.
    fn with_time_lags(mut w: Vec<Observation>, lags_ms: &[u64]) -> Vec<Observation> {
        for (o, l) in w.iter_mut().zip(lags_ms) {
            o.lag_ms = Some(*l);
        }
        w
    }

    #[test]
    fn a_growing_backlog_at_a_steady_delay_is_ok() {
        // Producers speed up: ten, then twenty, then thirty records behind, but the record at
        // the committed offset is always about 2 s old.
        let growing = [
            (10, 20, None),
            (15, 35, None),
            (20, 50, None),
            (25, 65, None),
        ];
        let steady = with_time_lags(window(&growing), &[2_000, 2_100, 1_900, 2_000]);
        assert_eq!(evaluate(&steady), Some(LagStatus::Ok));
        // The same offsets with the delay growing too: falling behind.
        let falling = with_time_lags(window(&growing), &[2_000, 2_500, 3_000, 3_500]);
        assert_eq!(evaluate(&falling), Some(LagStatus::Warning));
        // A time lag unknown at one observation leaves the records to decide.
        let mut partly = with_time_lags(window(&growing), &[2_000, 2_000, 2_000, 2_000]);
        partly[1].lag_ms = None;
        assert_eq!(evaluate(&partly), Some(LagStatus::Warning));
    }

    #[test]
    fn a_growing_delay_with_a_shrinking_backlog_is_ok() {
        // Producers slowed down: the consumer catches up in records while the records it reads
        // get older; it will catch up, so it is not falling behind.
        let w = with_time_lags(
            window(&[
                (10, 40, None),
                (20, 45, None),
                (30, 48, None),
                (40, 50, None),
            ]),
            &[1_000, 2_000, 3_000, 4_000],
        );
        assert_eq!(evaluate(&w), Some(LagStatus::Ok));
    }

    #[test]
    fn each_status_names_the_rule_that_decided_it() {
        let cases = [
            (
                window(&[(25, 20, None)]),
                LagStatus::Error,
                Rule::OutOfRange,
            ),
            (
                window(&[(10, 10, None), (10, 20, None)]),
                LagStatus::Ok,
                Rule::CaughtUp,
            ),
            (
                window(&[(10, 20, None)]),
                LagStatus::Ok,
                Rule::TooFewObservations,
            ),
            (
                window(&[(10, 20, Some(1)), (10, 20, Some(2))]),
                LagStatus::Stalled,
                Rule::CommittingWithoutMoving,
            ),
            (
                window(&[(10, 20, Some(1)), (10, 20, Some(1))]),
                LagStatus::Stopped,
                Rule::NotCommitting,
            ),
            (
                window(&[
                    (10, 20, None),
                    (15, 25, None),
                    (15, 30, None),
                    (15, 35, None),
                ]),
                LagStatus::Stopped,
                Rule::IdleTooLong,
            ),
            (
                window(&[(10, 20, None), (15, 30, None), (20, 40, None)]),
                LagStatus::Warning,
                Rule::FallingBehind,
            ),
            (
                window(&[(10, 20, None), (20, 30, None), (30, 35, None)]),
                LagStatus::Ok,
                Rule::KeepingUp,
            ),
        ];
        for (w, status, rule) in cases {
            assert_eq!(assess(&w), Some((status, rule)), "{w:?}");
            assert!(!rule.text().is_empty());
        }
        let mut old = window(&[(10, 20, Some(0))]);
        old[0].at_ms = 50_000;
        assert_eq!(
            judge_with_rule(&old, coverage(50_000, Some(40_000))),
            (
                Verdict::Status(LagStatus::Stopped),
                Some(Rule::LastCommitOlderThanWindow)
            )
        );
        assert_eq!(
            judge_with_rule(&old, coverage(50_000, Some(45_000))),
            (Verdict::WarmingUp, None)
        );
    }

    #[test]
    fn consuming_with_steady_lag_is_ok() {
        let w = window(&[
            (10, 20, None),
            (20, 30, None),
            (30, 35, None),
            (40, 52, None),
        ]);
        assert_eq!(evaluate(&w), Some(LagStatus::Ok));
    }

    #[test]
    fn commits_that_stopped_early_in_the_window_are_stopped() {
        // Moved between the first two observations, then nothing for three seconds.
        let w = window(&[
            (10, 20, None),
            (15, 25, None),
            (15, 30, None),
            (15, 35, None),
            (15, 40, None),
        ]);
        assert_eq!(evaluate(&w), Some(LagStatus::Stopped));
    }

    #[test]
    fn unknown_offsets_have_no_status() {
        assert_eq!(evaluate(&[]), None);
        let mut w = window(&[(10, 20, None)]);
        w[0].committed = None;
        assert_eq!(evaluate(&w), None);
        let mut w = window(&[(10, 20, None)]);
        w[0].log_end = None;
        assert_eq!(evaluate(&w), None);
    }

    #[test]
    fn a_single_observation_behind_is_ok() {
        assert_eq!(evaluate(&window(&[(10, 20, None)])), Some(LagStatus::Ok));
    }

    fn coverage(watched_since_ms: u64, last_commit_ms: Option<u64>) -> Coverage {
        Coverage {
            watched_since_ms,
            last_commit_ms,
            window_ms: 10_000,
        }
    }

    #[test]
    fn a_short_window_behind_with_a_recent_commit_is_warming_up() {
        // Two observations behind, not moving: a full window would call it STOPPED, but the
        // last commit was 2 s ago and the window spans 1 s of the 10 required.
        let w = window(&[(10, 20, Some(0)), (10, 20, Some(0))]);
        assert_eq!(evaluate(&w), Some(LagStatus::Stopped));
        assert_eq!(judge(&w, coverage(0, Some(0))), Verdict::WarmingUp);
        assert_eq!(judge(&w, coverage(0, Some(0))).status(), None);
    }

    #[test]
    fn a_short_window_behind_whose_last_commit_is_older_than_the_window_is_stopped() {
        let mut w = window(&[(10, 20, Some(0))]);
        w[0].at_ms = 50_000;
        assert_eq!(evaluate(&w), Some(LagStatus::Ok));
        assert_eq!(
            judge(&w, coverage(50_000, Some(40_000))),
            Verdict::Status(LagStatus::Stopped)
        );
        assert_eq!(
            judge(&w, coverage(50_000, Some(40_001))),
            Verdict::WarmingUp
        );
    }

    #[test]
    fn certain_verdicts_need_no_full_window() {
        let caught_up = window(&[(20, 20, Some(0))]);
        assert_eq!(
            judge(&caught_up, coverage(0, Some(0))),
            Verdict::Status(LagStatus::Ok)
        );
        let past_end = window(&[(25, 20, Some(0))]);
        assert_eq!(
            judge(&past_end, coverage(0, Some(0))),
            Verdict::Status(LagStatus::Error)
        );
        let mut unknown = window(&[(10, 20, None)]);
        unknown[0].log_end = None;
        assert_eq!(judge(&unknown, coverage(0, Some(0))), Verdict::Unknown);
    }

    #[test]
    fn a_covered_window_gets_the_evaluator_verdict() {
        let w = window(&[(10, 20, Some(3)), (10, 20, Some(4)), (10, 21, Some(5))]);
        let mut c = coverage(0, Some(2_000));
        c.window_ms = 2_000;
        assert_eq!(judge(&w, c), Verdict::Status(LagStatus::Stalled));
    }

    #[test]
    fn statuses_order_by_severity() {
        assert!(LagStatus::Ok < LagStatus::Warning);
        assert!(LagStatus::Warning < LagStatus::Stalled);
        assert!(LagStatus::Stopped < LagStatus::Error);
        assert_eq!(LagStatus::Error.code(), 4);
        assert_eq!(LagStatus::Stalled.to_string(), "STALLED");
    }
}
