//! `--list`, with `--state` and `--type` filters, and the group listing `--all-groups` uses.

use crate::client::groups::ListGroupsFilter;

use super::context::{Run, Step, Stop};
use super::format::{self, ListRow};
use super::java_order::{self, Construction};

/// The group states `--state` accepts, in Kafka's enum order (used in the error message).
pub const VALID_STATES: &[&str] = &[
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
];
/// The group types `--type` accepts, in Kafka's enum order.
pub const VALID_TYPES: &[&str] = &["Consumer", "Classic", "Share"];

/// Parses a `--state` list (case-insensitive, comma-separated), as Kafka does.
pub fn parse_states(input: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for s in input.split(',') {
        match VALID_STATES
            .iter()
            .find(|v| v.eq_ignore_ascii_case(s.trim()))
        {
            Some(v) => {
                if !out.contains(&v.to_string()) {
                    out.push(v.to_string())
                }
            }
            None => {
                return Err(format!(
                    "Invalid state list '{input}'. Valid states are: {}",
                    VALID_STATES.join(", ")
                ))
            }
        }
    }
    Ok(out)
}

/// Parses a `--type` list (case-insensitive, comma-separated), as Kafka does.
pub fn parse_types(input: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for t in input.to_lowercase().split(',') {
        match VALID_TYPES
            .iter()
            .find(|v| v.eq_ignore_ascii_case(t.trim()))
        {
            Some(v) => {
                if !out.contains(&v.to_string()) {
                    out.push(v.to_string())
                }
            }
            None => {
                return Err(format!(
                    "Invalid types list '{input}'. Valid types are: {}",
                    VALID_TYPES.join(", ")
                ))
            }
        }
    }
    Ok(out)
}

impl Run<'_, '_> {
    /// Every consumer group id, in the order Kafka's tool iterates them (a `HashMap` of the
    /// listings). A failure ends the run as Kafka's does.
    pub async fn all_group_ids(&mut self) -> Step<Vec<String>> {
        let listings = self
            .admin
            .list_consumer_groups(&ListGroupsFilter::default())
            .await
            .map_err(|e| Stop::from_runtime(&e))?;
        Ok(java_order::strings(
            Construction::Default,
            listings.into_iter().map(|l| l.group_id),
        ))
    }

    /// `--list`.
    pub async fn list(&mut self) -> Step<()> {
        let with_type = self.options.has("type");
        let with_state = self.options.has("state");
        if !with_type && !with_state {
            let ids = self.all_group_ids().await?;
            self.console.out(&format::list_plain(&ids));
            return Ok(());
        }
        let types = match self.options.value("type").filter(|v| !v.is_empty()) {
            Some(v) => parse_types(v).map_err(Stop::Usage)?,
            None => Vec::new(),
        };
        let states = match self.options.value("state").filter(|v| !v.is_empty()) {
            Some(v) => parse_states(v).map_err(Stop::Usage)?,
            None => Vec::new(),
        };
        let listings = self
            .admin
            .list_consumer_groups(&ListGroupsFilter { states, types })
            .await
            .map_err(|e| Stop::from_future(&e))?;
        let order = java_order::strings(
            Construction::Default,
            listings.iter().map(|l| l.group_id.clone()),
        );
        let rows: Vec<ListRow> = order
            .iter()
            .filter_map(|id| listings.iter().find(|l| &l.group_id == id))
            .map(|l| ListRow {
                group: l.group_id.clone(),
                group_type: format::canonical_type(l.group_type.as_deref().unwrap_or(""))
                    .to_string(),
                state: format::canonical_state(l.state.as_deref().unwrap_or("")).to_string(),
            })
            .collect();
        self.console
            .out(&format::list_with_columns(&rows, with_type, with_state));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_case_insensitively() {
        assert_eq!(
            parse_states("stable, EMPTY").unwrap(),
            vec!["Stable".to_string(), "Empty".to_string()]
        );
        assert_eq!(
            parse_states("stable,bogus").unwrap_err(),
            "Invalid state list 'stable,bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling"
        );
    }

    #[test]
    fn types_parse_case_insensitively() {
        assert_eq!(parse_types("CLASSIC").unwrap(), vec!["Classic".to_string()]);
        assert_eq!(
            parse_types("Classic,x").unwrap_err(),
            "Invalid types list 'Classic,x'. Valid types are: Consumer, Classic, Share"
        );
    }
}
