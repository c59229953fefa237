//! `cohort acls`: Kafka's `kafka-acls.sh` (`AclCommand`) over Cohort's pure Kafka client
//! (decision 0142): the same flags, the same lines.
//!
//! ```text
//!  --add --allow-principal User:alice --operation Read --topic t
//!      Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
//!       \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
//!  --list [--topic t | --group g | --cluster | --transactional-id x] [--principal User:a]
//!      Current ACLs for resource `ResourcePattern(...)`: (one block per resource)
//!  --remove ... [--force]   (asks "Are you sure ...? (y/n)" on stdin without --force)
//! ```
//!
//! Resources are a `ResourcePatternFilter` each (`--resource-pattern-type`, default LITERAL;
//! ANY and MATCH only for --list and --remove). The entries are every (principal, operation,
//! host) of `--allow-*` (ALLOW) and `--deny-*` (DENY); `--operation` defaults to All, a
//! principal without a host gets `*`. Kafka prints Scala sets and maps, in no fixed order;
//! this prints them sorted. `--producer`, `--consumer`, `--delegation-token`,
//! `--user-principal` and `--bootstrap-controller` are not served. A failed call prints
//! `Error while executing ACL command: <exception>` and exits 1, as Kafka's tool.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};

use super::groups::jopt::{self, spec, Arity, Parsed, Spec};
use crate::client::acls::{AclEntry, AclEntryFilter};
use crate::client::{Admin, ClientConfig};

const CALL_TIMEOUT_MS: u64 = 60_000;

/// Every option `cohort acls` accepts.
pub const SPECS: &[Spec] = &[
    spec("bootstrap-server", Arity::Required, "server to connect to", "A list of host/port pairs to use for establishing the connection to the Kafka cluster. This list should be in the form host1:port1,host2:port2,... This config is required for acl management using admin client API."),
    spec("command-config", Arity::Optional, "command-config", "A property file containing configs to be passed to Admin Client."),
    spec("add", Arity::None, "", "Indicates you are trying to add ACLs."),
    spec("remove", Arity::None, "", "Indicates you are trying to remove ACLs."),
    spec("list", Arity::None, "", "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource."),
    spec("topic", Arity::Required, "topic", "topic to which ACLs should be added or removed. A value of '*' indicates ACL should apply to all topics."),
    spec("cluster", Arity::None, "", "Add/Remove cluster ACLs."),
    spec("group", Arity::Required, "group", "Consumer Group to which the ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all groups."),
    spec("transactional-id", Arity::Required, "transactional-id", "The transactionalId to which ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all transactionalIds."),
    spec("resource-pattern-type", Arity::Required, "ANY|MATCH|LITERAL|PREFIXED", "The type of the resource pattern or pattern filter. When adding acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific pattern type can be used to list or remove acls from specific resource patterns, or use the filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the resource name exactly, where as 'match' will perform pattern matching to list or remove all acls that affect the supplied resource(s). WARNING: 'match', when used in combination with the '--remove' switch, should be used with care. (default: LITERAL)"),
    spec("operation", Arity::Required, "", "Operation that is being allowed or denied. Valid operation names are: All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (default: All)"),
    spec("allow-principal", Arity::Required, "allow-principal", "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. For example, User:'*' is the wild card indicating all users."),
    spec("deny-principal", Arity::Required, "deny-principal", "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access. You only need to use --deny-principal if you want to deny access to a subset of the principals allowed by --allow-principal."),
    spec("principal", Arity::Required, "principal", "List ACLs for the specified principal. principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. Multiple --principal option can be passed."),
    spec("allow-host", Arity::Required, "allow-host", "Host from which principals listed in --allow-principal will have access. If you have specified --allow-principal then the default for this option will be set to '*' which allows access from all hosts."),
    spec("deny-host", Arity::Required, "deny-host", "Host from which principals listed in --deny-principal will be denied access. If you have specified --deny-principal then the default for this option will be set to '*' which denies access from all hosts."),
    spec("force", Arity::None, "", "Assume Yes to all queries and do not prompt."),
    spec("help", Arity::None, "", "Print usage information."),
    spec("version", Arity::None, "", "Display Kafka version."),
];

const ANY: i8 = 1;
const MATCH: i8 = 2;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;
const DENY: i8 = 2;
const ALLOW: i8 = 3;
const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const TRANSACTIONAL_ID: i8 = 5;

/// (code, enum name, CLI name) of Kafka's `AclOperation`s an ACL may carry.
const OPERATIONS: &[(i8, &str, &str)] = &[
    (2, "ALL", "All"),
    (3, "READ", "Read"),
    (4, "WRITE", "Write"),
    (5, "CREATE", "Create"),
    (6, "DELETE", "Delete"),
    (7, "ALTER", "Alter"),
    (8, "DESCRIBE", "Describe"),
    (9, "CLUSTER_ACTION", "ClusterAction"),
    (10, "DESCRIBE_CONFIGS", "DescribeConfigs"),
    (11, "ALTER_CONFIGS", "AlterConfigs"),
    (12, "IDEMPOTENT_WRITE", "IdempotentWrite"),
    (13, "CREATE_TOKENS", "CreateTokens"),
    (14, "DESCRIBE_TOKENS", "DescribeTokens"),
];

/// Kafka's `AclEntry.supportedOperations` per resource type (ALL is always allowed too).
fn supported_operations(resource_type: i8) -> &'static [i8] {
    match resource_type {
        TOPIC => &[3, 4, 5, 8, 6, 7, 10, 11],
        GROUP => &[3, 8, 6],
        CLUSTER => &[5, 9, 10, 11, 12, 7, 8],
        TRANSACTIONAL_ID => &[8, 4],
        _ => &[],
    }
}

fn operation_enum(code: i8) -> String {
    OPERATIONS
        .iter()
        .find(|o| o.0 == code)
        .map_or_else(|| "UNKNOWN".to_owned(), |o| o.1.to_owned())
}

fn operation_cli(code: i8) -> &'static str {
    OPERATIONS
        .iter()
        .find(|o| o.0 == code)
        .map_or("Unknown", |o| o.2)
}

/// Kafka's `SecurityUtils.operation`: the CLI name, any case, `_`/`-` ignored.
fn parse_operation(name: &str) -> Option<i8> {
    let norm: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    OPERATIONS
        .iter()
        .find(|o| o.2.to_ascii_lowercase() == norm)
        .map(|o| o.0)
}

fn resource_type_name(code: i8) -> &'static str {
    match code {
        1 => "ANY",
        TOPIC => "TOPIC",
        GROUP => "GROUP",
        CLUSTER => "CLUSTER",
        TRANSACTIONAL_ID => "TRANSACTIONAL_ID",
        6 => "DELEGATION_TOKEN",
        7 => "USER",
        _ => "UNKNOWN",
    }
}

fn pattern_name(code: i8) -> &'static str {
    match code {
        ANY => "ANY",
        MATCH => "MATCH",
        LITERAL => "LITERAL",
        PREFIXED => "PREFIXED",
        _ => "UNKNOWN",
    }
}

fn permission_name(code: i8) -> &'static str {
    match code {
        ANY => "ANY",
        DENY => "DENY",
        ALLOW => "ALLOW",
        _ => "UNKNOWN",
    }
}

/// A resource (pattern) filter: type, name, pattern type.
type ResourceFilter = (i8, String, i8);
/// An access-control entry: principal, host, operation, permission.
type Entry = (String, String, i8, i8);

/// `ResourcePattern.toString` / `ResourcePatternFilter.toString`.
pub fn resource_text(r: &ResourceFilter) -> String {
    format!(
        "ResourcePattern(resourceType={}, name={}, patternType={})",
        resource_type_name(r.0),
        r.1,
        pattern_name(r.2)
    )
}

/// `AccessControlEntry.toString`.
pub fn entry_text(e: &Entry) -> String {
    format!(
        "(principal={}, host={}, operation={}, permissionType={})",
        e.0,
        e.1,
        operation_enum(e.2),
        permission_name(e.3)
    )
}

/// Scala's `s"...: $Newline ${acls.map("\t" + _).mkString(Newline)} $Newline"` under println.
fn block(head: &str, entries: &BTreeSet<Entry>) -> String {
    let lines: Vec<String> = entries
        .iter()
        .map(|e| format!("\t{}", entry_text(e)))
        .collect();
    format!("{head}: \n {} \n\n", lines.join("\n"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Add,
    Remove,
    List,
}

#[derive(Debug)]
struct Options {
    action: Action,
    bootstrap: String,
    command_config: Option<String>,
    force: bool,
    resources: Vec<ResourceFilter>,
    entries: BTreeSet<Entry>,
    list_principals: Vec<String>,
}

type Checked = super::entry::Checked<Box<Options>>;

fn principal_ok(p: &str) -> bool {
    p.split_once(':')
        .is_some_and(|(t, n)| !t.is_empty() && !n.is_empty())
}

fn check(args: &[String]) -> Checked {
    let parsed: Parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::Failure(e.message()),
    };
    if parsed.arg_count == 0 || parsed.has("help") {
        return Checked::Usage("This tool helps to manage acls on kafka.".to_owned());
    }
    if parsed.has("version") {
        return Checked::Version;
    }
    let Some(bootstrap) = parsed.value("bootstrap-server").map(str::to_owned) else {
        return Checked::Usage(
            "One of --bootstrap-server or --bootstrap-controller must be specified".to_owned(),
        );
    };
    let actions = [
        (parsed.has("add"), Action::Add),
        (parsed.has("remove"), Action::Remove),
        (parsed.has("list"), Action::List),
    ];
    let chosen: Vec<Action> = actions.iter().filter(|a| a.0).map(|a| a.1).collect();
    let [action] = chosen.as_slice() else {
        return Checked::Usage(
            "Command must include exactly one action: --list, --add, --remove. ".to_owned(),
        );
    };
    let action = *action;
    if action == Action::List {
        for o in [
            "allow-host",
            "allow-principal",
            "deny-host",
            "deny-principal",
        ] {
            if parsed.has(o) {
                return Checked::Usage(format!(
                    "Option \"[list]\" can't be used with option \"[{o}]\""
                ));
            }
        }
    } else if parsed.has("principal") {
        return Checked::Usage("The --principal option is only available if --list is set".into());
    }
    let pattern = match parsed
        .value("resource-pattern-type")
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None | Some("LITERAL") => LITERAL,
        Some("PREFIXED") => PREFIXED,
        Some("ANY") => ANY,
        Some("MATCH") => MATCH,
        Some(other) => {
            return Checked::Failure(format!(
                "Cannot convert argument '{other}' of option ['resource-pattern-type']. \
                 Message: Unknown pattern type: {other}"
            ))
        }
    };
    if action == Action::Add && !matches!(pattern, LITERAL | PREFIXED) {
        return Checked::Usage(format!(
            "A '--resource-pattern-type' value of '{}' is not valid when adding acls.",
            pattern_name(pattern)
        ));
    }
    let mut resources = Vec::new();
    for t in parsed.values("topic") {
        resources.push((TOPIC, t.trim().to_owned(), pattern));
    }
    if pattern == LITERAL && parsed.has("cluster") {
        resources.push((CLUSTER, "kafka-cluster".to_owned(), LITERAL));
    }
    for g in parsed.values("group") {
        resources.push((GROUP, g.trim().to_owned(), pattern));
    }
    for x in parsed.values("transactional-id") {
        resources.push((TRANSACTIONAL_ID, x, pattern));
    }
    if resources.is_empty() && action != Action::List {
        return Checked::Usage(
            "You must provide at least one resource: --topic <topic> or --cluster or --group \
             <group> or --delegation-token <Delegation Token ID>"
                .to_owned(),
        );
    }
    let mut operations = Vec::new();
    let names = parsed.values("operation");
    let names = if names.is_empty() {
        vec!["All".to_owned()]
    } else {
        names
    };
    for name in names {
        match parse_operation(name.trim()) {
            Some(op) => operations.push(op),
            None => {
                return Checked::Failure(format!(
                    "java.lang.IllegalArgumentException: Unknown operation: {}",
                    name.trim()
                ))
            }
        }
    }
    let mut entries = BTreeSet::new();
    for (principals, hosts, permission) in [
        ("allow-principal", "allow-host", ALLOW),
        ("deny-principal", "deny-host", DENY),
    ] {
        let ps = parsed.values(principals);
        for p in &ps {
            if !principal_ok(p.trim()) {
                return Checked::Failure(format!(
                    "java.lang.IllegalArgumentException: expected a string in format \
                     principalType:principalName but got {}",
                    p.trim()
                ));
            }
        }
        let mut hs: Vec<String> = parsed
            .values(hosts)
            .iter()
            .map(|h| h.trim().to_owned())
            .collect();
        if hs.is_empty() && !ps.is_empty() {
            hs.push("*".to_owned());
        }
        for p in &ps {
            for op in &operations {
                for h in &hs {
                    entries.insert((p.trim().to_owned(), h.clone(), *op, permission));
                }
            }
        }
    }
    if action != Action::List {
        for r in &resources {
            let valid = supported_operations(r.0);
            if entries.iter().any(|e| e.2 != 2 && !valid.contains(&e.2)) {
                let names: Vec<&str> = std::iter::once(2)
                    .chain(valid.iter().copied())
                    .map(operation_cli)
                    .collect();
                return Checked::Usage(format!(
                    "ResourceType {} only supports operations {}",
                    resource_type_name(r.0),
                    names.join(", ")
                ));
            }
        }
    }
    if action == Action::Add && entries.is_empty() {
        return Checked::Usage(
            "You must specify one of: --allow-principal, --deny-principal when trying to add \
             ACLs."
                .to_owned(),
        );
    }
    let list_principals: Vec<String> = parsed
        .values("principal")
        .iter()
        .map(|p| p.trim().to_owned())
        .collect();
    Checked::Run(Box::new(Options {
        action,
        bootstrap,
        command_config: parsed.value("command-config").map(str::to_owned),
        force: parsed.has("force"),
        resources,
        entries,
        list_principals,
    }))
}

/// Runs `cohort acls` with `args` on the process's stdin, stdout and stderr.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(|mut out, mut err| async move {
        let mut input = std::io::stdin().lock();
        run(args, &mut input, &mut out, &mut err).await
    })
}

/// Runs `cohort acls` with `args`; returns the exit code.
pub async fn run(
    args: &[String],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let options = match check(args).or_exit(&jopt::help(SPECS), out, err) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let result = match admin_for(&options, err) {
        Ok(mut admin) => match options.action {
            Action::Add => add(&mut admin, &options, out).await,
            Action::Remove => remove(&mut admin, &options, input, out).await,
            Action::List => list(&mut admin, &options, out).await,
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => 0,
        Err(exception) => {
            let _ = writeln!(out, "Error while executing ACL command: {exception}");
            let _ = writeln!(out, "java.util.concurrent.ExecutionException: {exception}");
            1
        }
    }
}

fn admin_for(options: &Options, err: &mut dyn Write) -> Result<Admin, String> {
    let (config, unused) =
        ClientConfig::for_tool(&options.bootstrap, options.command_config.as_deref(), &[])
            .map_err(|e| e.java_message())?;
    super::entry::warn_unused(err, &unused);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    Ok(admin)
}

fn binding(r: &ResourceFilter, e: &Entry) -> AclEntry {
    AclEntry {
        resource_type: r.0,
        name: r.1.clone(),
        pattern: r.2,
        principal: e.0.clone(),
        host: e.1.clone(),
        operation: e.2,
        permission: e.3,
    }
}

async fn add(admin: &mut Admin, o: &Options, out: &mut dyn Write) -> Result<(), String> {
    for r in &o.resources {
        let head = format!("Adding ACLs for resource `{}`", resource_text(r));
        let _ = write!(out, "{}", block(&head, &o.entries));
        let acls: Vec<AclEntry> = o.entries.iter().map(|e| binding(r, e)).collect();
        let results = admin
            .create_acls(&acls)
            .await
            .map_err(|e| e.java_string())?;
        if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
            return Err(e.java_string());
        }
    }
    Ok(())
}

fn confirm(o: &Options, input: &mut dyn BufRead, out: &mut dyn Write, msg: &str) -> bool {
    if o.force {
        return true;
    }
    let _ = writeln!(out, "{msg}");
    let _ = out.flush();
    let mut line = String::new();
    input.read_line(&mut line).is_ok() && line.trim().eq_ignore_ascii_case("y")
}

async fn remove(
    admin: &mut Admin,
    o: &Options,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), String> {
    for r in &o.resources {
        let filters: Vec<AclEntryFilter> = if o.entries.is_empty() {
            let msg = format!(
                "Are you sure you want to delete all ACLs for resource filter `{}`? (y/n)",
                resource_text(r)
            );
            if !confirm(o, input, out, &msg) {
                continue;
            }
            vec![AclEntryFilter {
                resource_type: r.0,
                name: Some(r.1.clone()),
                pattern: r.2,
                principal: None,
                host: None,
                operation: ANY,
                permission: ANY,
            }]
        } else {
            let lines: Vec<String> = o
                .entries
                .iter()
                .map(|e| format!("\t{}", entry_text(e)))
                .collect();
            let msg = format!(
                "Are you sure you want to remove ACLs: \n {} \n from resource filter `{}`? (y/n)",
                lines.join("\n"),
                resource_text(r)
            );
            if !confirm(o, input, out, &msg) {
                continue;
            }
            o.entries
                .iter()
                .map(|e| AclEntryFilter {
                    resource_type: r.0,
                    name: Some(r.1.clone()),
                    pattern: r.2,
                    principal: Some(e.0.clone()),
                    host: Some(e.1.clone()),
                    operation: e.2,
                    permission: e.3,
                })
                .collect()
        };
        let results = admin
            .delete_acls(&filters)
            .await
            .map_err(|e| e.java_string())?;
        if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
            return Err(e.java_string());
        }
    }
    Ok(())
}

async fn list(admin: &mut Admin, o: &Options, out: &mut dyn Write) -> Result<(), String> {
    let filters: Vec<AclEntryFilter> = if o.resources.is_empty() {
        vec![AclEntryFilter {
            resource_type: ANY,
            name: None,
            pattern: ANY,
            principal: None,
            host: None,
            operation: ANY,
            permission: ANY,
        }]
    } else {
        o.resources
            .iter()
            .map(|r| AclEntryFilter {
                resource_type: r.0,
                name: Some(r.1.clone()),
                pattern: r.2,
                principal: None,
                host: None,
                operation: ANY,
                permission: ANY,
            })
            .collect()
    };
    let mut by_resource: BTreeMap<ResourceFilter, BTreeSet<Entry>> = BTreeMap::new();
    for f in &filters {
        for a in admin.describe_acls(f).await.map_err(|e| e.java_string())? {
            by_resource
                .entry((a.resource_type, a.name, a.pattern))
                .or_default()
                .insert((a.principal, a.host, a.operation, a.permission));
        }
    }
    if o.list_principals.is_empty() {
        print_resources(out, &by_resource);
    } else {
        for p in &o.list_principals {
            let _ = writeln!(out, "ACLs for principal `{p}`");
            let filtered: BTreeMap<ResourceFilter, BTreeSet<Entry>> = by_resource
                .iter()
                .map(|(r, es)| {
                    (
                        r.clone(),
                        es.iter()
                            .filter(|e| &e.0 == p)
                            .cloned()
                            .collect::<BTreeSet<_>>(),
                    )
                })
                .filter(|(_, es)| !es.is_empty())
                .collect();
            print_resources(out, &filtered);
        }
    }
    Ok(())
}

fn print_resources(out: &mut dyn Write, map: &BTreeMap<ResourceFilter, BTreeSet<Entry>>) {
    for (r, entries) in map {
        let head = format!("Current ACLs for resource `{}`", resource_text(r));
        let _ = write!(out, "{}", block(&head, entries));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn lines_are_kafkas() {
        let r = (TOPIC, "t".to_owned(), LITERAL);
        assert_eq!(
            resource_text(&r),
            "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
        );
        let entries = BTreeSet::from([
            ("User:alice".to_owned(), "*".to_owned(), 3, ALLOW),
            ("User:bob".to_owned(), "10.0.0.1".to_owned(), 10, DENY),
        ]);
        assert_eq!(
            block("Current ACLs for resource `x`", &entries),
            "Current ACLs for resource `x`: \n \t(principal=User:alice, host=*, operation=READ, \
             permissionType=ALLOW)\n\t(principal=User:bob, host=10.0.0.1, \
             operation=DESCRIBE_CONFIGS, permissionType=DENY) \n\n"
        );
    }

    #[test]
    fn options_are_checked_as_kafkas_acl_command_checks_them() {
        let base = ["--bootstrap-server", "h:1"];
        let with = |more: &[&str]| {
            let mut v = base.to_vec();
            v.extend_from_slice(more);
            check(&args(&v))
        };
        assert!(
            matches!(with(&["--add", "--list"]), Checked::Usage(m) if m.contains("exactly one action"))
        );
        assert!(
            matches!(with(&["--add", "--topic", "t"]), Checked::Usage(m) if m.contains("--allow-principal, --deny-principal"))
        );
        assert!(
            matches!(with(&["--add", "--allow-principal", "User:a"]), Checked::Usage(m) if m.contains("at least one resource"))
        );
        assert!(
            matches!(with(&["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"]), Checked::Usage(m) if m.contains("'MATCH' is not valid"))
        );
        assert!(
            matches!(with(&["--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Write"]), Checked::Usage(m) if m.starts_with("ResourceType GROUP only supports operations All, Read, Describe, Delete"))
        );
        assert!(matches!(
            with(&["--list", "--allow-principal", "User:a"]),
            Checked::Usage(_)
        ));
        assert!(matches!(
            with(&["--add", "--allow-principal", "alice", "--topic", "t"]),
            Checked::Failure(_)
        ));
        let Checked::Run(o) = with(&[
            "--add",
            "--allow-principal",
            "User:a",
            "--allow-principal",
            "User:b",
            "--allow-host",
            "10.0.0.1",
            "--deny-principal",
            "User:c",
            "--operation",
            "read",
            "--operation",
            "DESCRIBE",
            "--topic",
            "t",
            "--group",
            "g",
        ]) else {
            panic!("not run")
        };
        assert_eq!(o.action, Action::Add);
        assert_eq!(
            o.resources,
            vec![
                (TOPIC, "t".to_owned(), LITERAL),
                (GROUP, "g".to_owned(), LITERAL),
            ]
        );
        // Read is no CLUSTER operation (Kafka's validateOperation).
        assert!(
            matches!(with(&["--add", "--allow-principal", "User:a", "--cluster", "--operation", "Read"]), Checked::Usage(m) if m.starts_with("ResourceType CLUSTER only supports operations All, Create, ClusterAction"))
        );
        // (a, b) x (Read, Describe) x 10.0.0.1 ALLOW + c x (Read, Describe) x * DENY.
        assert_eq!(o.entries.len(), 6);
        assert!(o
            .entries
            .contains(&("User:c".to_owned(), "*".to_owned(), 8, DENY)));
        let Checked::Run(o) = with(&["--remove", "--topic", "t", "--force"]) else {
            panic!("not run")
        };
        assert!(
            o.entries.iter().all(|e| e.2 == 2),
            "operation defaults to All"
        );
        assert!(o.entries.is_empty());
    }
}
