//! `cohort users`: the SCRAM half of Kafka 4.0's `kafka-configs.sh --entity-type users`, over
//! Cohort's pure Kafka client (decision 0133):
//!
//! ```text
//!  --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]' --entity-type users --entity-name alice
//!      ─► salt (random) + Hi(password, salt, i) ─► AlterUserScramCredentials
//!      Completed updating config for user alice.
//!  --alter --delete-config 'SCRAM-SHA-256' --entity-type users --entity-name alice
//!  --describe --entity-type users [--entity-name alice]
//!      SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192
//! ```
//!
//! As with Kafka's tool, every mechanism given for the user goes in one request, so adding or
//! deleting two mechanisms at once is refused by the broker (DUPLICATE_RESOURCE: a user may be
//! altered once per request). The password never leaves this process; only the salted
//! password does. Client quotas (the other user configs of `kafka-configs.sh`) are not served
//! by Cohort and are refused here. A failed alteration prints Kafka's
//! `Error while executing config command with args '…'` line and the exception, exit 1.

pub mod options;

use std::io::Write;

use ring::rand::{SecureRandom, SystemRandom};

use super::entry::warn_unused;
use crate::client::users::ScramAlteration;
use crate::client::{Admin, ClientConfig};
use crate::security::scram::{salted_password, ScramMechanism};
use options::{Action, UsersOptions};

/// How long each Admin call may take (ConfigCommand waits 30 s for describe, 60 s for alter).
const CALL_TIMEOUT_MS: u64 = 60_000;
/// Kafka's `ConfigCommand.DefaultScramIterations`.
const DEFAULT_ITERATIONS: u32 = 4096;
/// Salt bytes (Kafka's `ScramFormatter.secureRandomBytes` gives about 26).
const SALT_BYTES: usize = 32;

/// Runs `cohort users` with `args` on the process's stdout and stderr; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// Runs `cohort users` with `args`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let options = match options::check(args).or_exit(&options::help(), out, err) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let result = match options.action {
        Action::Describe => describe(&options, out, err).await,
        Action::Alter => alter(&options, out, err).await,
    };
    match result {
        Ok(()) => 0,
        Err(exception) => {
            let _ = writeln!(
                out,
                "Error while executing config command with args '{}'",
                args.join(" ")
            );
            let _ = writeln!(err, "{exception}");
            1
        }
    }
}

fn admin_for(options: &UsersOptions, err: &mut dyn Write) -> Result<Admin, String> {
    let (config, unused) =
        ClientConfig::for_tool(&options.bootstrap, options.command_config.as_deref(), &[])
            .map_err(|e| e.java_message())?;
    warn_unused(err, &unused);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    Ok(admin)
}

fn mechanism_name(t: i8) -> String {
    match t {
        1 => "SCRAM-SHA-256".to_owned(),
        2 => "SCRAM-SHA-512".to_owned(),
        _ => "UNKNOWN".to_owned(),
    }
}

fn mechanism_type(m: ScramMechanism) -> i8 {
    match m {
        ScramMechanism::Sha256 => 1,
        ScramMechanism::Sha512 => 2,
    }
}

/// `describeClientQuotaAndUserScramCredentialConfigs`: one line per user with credentials.
async fn describe(
    options: &UsersOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let mut admin = admin_for(options, err)?;
    let names: Vec<String> = options.entity_name.iter().cloned().collect();
    let users = admin
        .describe_user_scram_credentials(Some(&names))
        .await
        .map_err(|e| {
            format!(
                "java.util.concurrent.ExecutionException: {}",
                e.java_string()
            )
        })?;
    for (user, outcome) in users {
        match outcome {
            Ok(infos) => {
                let text = infos
                    .iter()
                    .map(|i| {
                        format!(
                            "{}=iterations={}",
                            mechanism_name(i.mechanism),
                            i.iterations
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let _ = writeln!(
                    out,
                    "SCRAM credential configs for user-principal '{user}' are {text}"
                );
            }
            Err(e) => {
                let _ = writeln!(
                    out,
                    "Error retrieving SCRAM credential configs for user-principal '{user}': \
                     ExecutionException: {}",
                    e.java_string()
                );
            }
        }
    }
    Ok(())
}

/// `alterUserScramCredentialConfigs`: the deletions and upsertions of one user, one request.
async fn alter(
    options: &UsersOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let user = options.entity_name.clone().unwrap_or_default();
    let mut changes = Vec::new();
    for name in &options.delete {
        let m = ScramMechanism::from_name(name).ok_or_else(|| {
            format!("java.lang.IllegalArgumentException: Invalid config(s): {name}")
        })?;
        changes.push(ScramAlteration::Delete {
            user: user.clone(),
            mechanism: mechanism_type(m),
        });
    }
    let rng = SystemRandom::new();
    for (name, value) in &options.add {
        let m = ScramMechanism::from_name(name).ok_or_else(|| {
            format!(
                "java.lang.IllegalArgumentException: Only SCRAM-SHA-256 and SCRAM-SHA-512 \
                 user configs are served by Cohort (got {name})"
            )
        })?;
        let (iterations, password) = options::iterations_and_password(value).ok_or_else(|| {
            format!(
                "java.lang.IllegalArgumentException: Invalid credential property {name}=[hidden]"
            )
        })?;
        let iterations = iterations.unwrap_or(i64::from(DEFAULT_ITERATIONS));
        if iterations < i64::from(DEFAULT_ITERATIONS) {
            return Err(format!(
                "java.lang.IllegalArgumentException: Iterations {iterations} is less than the \
                 minimum {DEFAULT_ITERATIONS} required for {name}"
            ));
        }
        let iterations = i32::try_from(iterations).unwrap_or(i32::MAX);
        let mut salt = vec![0u8; SALT_BYTES];
        rng.fill(&mut salt)
            .map_err(|_| "java.lang.IllegalStateException: no randomness for a salt".to_owned())?;
        let salted = salted_password(
            m,
            password.as_bytes(),
            &salt,
            u32::try_from(iterations).unwrap_or(u32::MAX),
        );
        changes.push(ScramAlteration::Upsert {
            user: user.clone(),
            mechanism: mechanism_type(m),
            iterations,
            salt,
            salted_password: salted,
        });
    }
    let mut admin = admin_for(options, err)?;
    let results = admin
        .alter_user_scram_credentials(&changes)
        .await
        .map_err(|e| {
            format!(
                "java.util.concurrent.ExecutionException: {}",
                e.java_string()
            )
        })?;
    if let Some((_, Err(e))) = results.iter().find(|(_, r)| r.is_err()) {
        return Err(format!(
            "java.util.concurrent.ExecutionException: {}",
            e.java_string()
        ));
    }
    let _ = writeln!(out, "Completed updating config for user {user}.");
    Ok(())
}
