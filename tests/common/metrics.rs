//! `/metrics` of a live `cohort serve` read as figures, for the tests of the lag surface.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::Cohort;

/// `/metrics` as `series → value` (the series is the name with its labels, as printed).
pub fn scrape(broker: &Cohort) -> BTreeMap<String, f64> {
    let (status, body) = broker.http_get("/metrics");
    assert!(status.contains("200"), "{status}");
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Scrapes until `done` accepts the figures, or panics with the last scrape's group and lag
/// series after `limit`.
pub fn scrape_until(
    broker: &Cohort,
    limit: Duration,
    what: &str,
    mut done: impl FnMut(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let deadline = Instant::now() + limit;
    loop {
        let m = scrape(broker);
        if done(&m) {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "{what} not seen within {limit:?}; last scrape:\n{:#?}",
            m.iter()
                .filter(|(k, _)| k.starts_with("cohort_group_") || k.starts_with("cohort_lag_"))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
