//! AlterUserScramCredentials (51), v0: creates, replaces and deletes users' SCRAM credentials
//! in the replicated state (decision 0133).
//!
//! The client sends a salt, an iteration count and the salted password (`Hi(password, salt,
//! i)`), never the password; this node derives StoredKey and ServerKey from it (Kafka's
//! `ScramControlManager.finishUpsertion`) and only those, with the salt and the count, are
//! replicated. The checks are Kafka's `ScramControlManager.alterCredentials`, with its codes
//! and messages: a user named twice in one request (deletions and upsertions together) is
//! DUPLICATE_RESOURCE; an empty name UNACCEPTABLE_CREDENTIAL; a mechanism other than
//! SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2) UNSUPPORTED_SASL_MECHANISM; iterations outside
//! 4096..=16384 UNACCEPTABLE_CREDENTIAL; deleting a credential that does not exist
//! RESOURCE_NOT_FOUND (checked when the command is applied, so two racing requests cannot both
//! delete it). One result per user, in the order the users first appear (deletions first).

use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;
use raft_meta::cohort_app::{
    check_scram_change, ScramChangeError, ScramMechanismType, ScramOp, UserScramChange,
};

use super::RequestContext;
use crate::errors::code_and_message;
use crate::replicated::scram::{mechanism_type, stored, ReplicatedScram};
use crate::security::scram::{ScramCredential, ScramMechanism};

const DUPLICATE: &str = "A user credential cannot be altered twice in the same request";

/// One user's fate while the request is read.
enum Slot {
    Change(UserScramChange),
    Refused(ErrorCode, String),
}

fn refusal(e: &ScramChangeError) -> (ErrorCode, String) {
    let code = match e {
        ScramChangeError::NotFound => ErrorCode::ResourceNotFound,
        ScramChangeError::Unacceptable(_) => ErrorCode::UnacceptableCredential,
        ScramChangeError::Duplicate => ErrorCode::DuplicateResource,
    };
    (code, e.to_string())
}

fn mechanism(t: i8) -> Option<ScramMechanism> {
    match ScramMechanismType::from_kafka_type(t)? {
        ScramMechanismType::Sha256 => Some(ScramMechanism::Sha256),
        ScramMechanismType::Sha512 => Some(ScramMechanism::Sha512),
    }
}

/// Kafka's `validateScramUsernameAndMechanism`: the name first, then the mechanism.
fn name_and_mechanism(name: &str, t: i8) -> Result<ScramMechanism, (ErrorCode, String)> {
    if name.is_empty() {
        return Err((
            ErrorCode::UnacceptableCredential,
            "Username must not be empty".to_owned(),
        ));
    }
    mechanism(t).ok_or((
        ErrorCode::UnsupportedSaslMechanism,
        "Unknown SCRAM mechanism".to_owned(),
    ))
}

/// Reads the request into one slot per user, in first-appearance order.
fn slots(req: &AlterUserScramCredentialsRequest) -> Vec<(String, Slot)> {
    let mut out: Vec<(String, Slot)> = Vec::new();
    let mut put = |user: &str, slot: Slot| match out.iter_mut().find(|(u, _)| u == user) {
        // Named again: the user's earlier entry is dropped, the user refused.
        Some((_, existing)) => {
            if !matches!(existing, Slot::Refused(..)) {
                *existing = Slot::Refused(ErrorCode::DuplicateResource, DUPLICATE.to_owned());
            }
        }
        None => out.push((user.to_owned(), slot)),
    };
    for d in &req.deletions {
        let slot = match name_and_mechanism(&d.name, d.mechanism) {
            Ok(m) => Slot::Change(UserScramChange {
                user: d.name.to_string(),
                op: ScramOp::Delete {
                    mechanism: mechanism_type(m),
                },
            }),
            Err((code, message)) => Slot::Refused(code, message),
        };
        put(&d.name, slot);
    }
    for u in &req.upsertions {
        let slot = match name_and_mechanism(&u.name, u.mechanism) {
            Ok(m) => {
                let iterations = u32::try_from(u.iterations).unwrap_or(0);
                let credential = ScramCredential::from_salted_password(
                    m,
                    &u.salted_password,
                    u.salt.to_vec(),
                    iterations,
                );
                let change = UserScramChange {
                    user: u.name.to_string(),
                    op: ScramOp::Upsert {
                        mechanism: mechanism_type(m),
                        credential: stored(&credential),
                    },
                };
                match check_scram_change(&change) {
                    Ok(()) => Slot::Change(change),
                    Err(e) => {
                        let (code, message) = refusal(&e);
                        Slot::Refused(code, message)
                    }
                }
            }
            Err((code, message)) => Slot::Refused(code, message),
        };
        put(&u.name, slot);
    }
    out
}

/// Applies the request's valid changes on every replica.
pub async fn handle(
    ctx: &RequestContext,
    req: AlterUserScramCredentialsRequest,
) -> AlterUserScramCredentialsResponse {
    let slots = slots(&req);
    let changes: Vec<UserScramChange> = slots
        .iter()
        .filter_map(|(_, s)| match s {
            Slot::Change(c) => Some(c.clone()),
            Slot::Refused(..) => None,
        })
        .collect();
    let applied: Result<Vec<Result<(), ScramChangeError>>, (ErrorCode, String)> =
        if changes.is_empty() {
            Ok(Vec::new())
        } else {
            match &ctx.broker.groups {
                None => Err((
                    ErrorCode::NotController,
                    "no replicated state on this node".to_owned(),
                )),
                Some(groups) => ReplicatedScram::new(groups.node().clone())
                    .alter(changes)
                    .await
                    .map_err(code_and_message),
            }
        };
    let mut answers = match &applied {
        Ok(results) => results.iter(),
        Err(_) => [].iter(),
    };
    let results = slots
        .into_iter()
        .map(|(user, slot)| {
            let outcome = match slot {
                Slot::Refused(code, message) => Err((code, message)),
                Slot::Change(_) => match &applied {
                    Err(failure) => Err(failure.clone()),
                    Ok(_) => match answers.next() {
                        Some(Ok(())) => Ok(()),
                        Some(Err(e)) => Err(refusal(e)),
                        None => Err((
                            ErrorCode::UnknownServerError,
                            "the change was not answered".to_owned(),
                        )),
                    },
                },
            };
            let result =
                AlterUserScramCredentialsResult::default().with_user(StrBytes::from_string(user));
            match outcome {
                Ok(()) => result,
                Err((code, message)) => result
                    .with_error_code(ctx.error(code))
                    .with_error_message(Some(StrBytes::from_string(message))),
            }
        })
        .collect();
    AlterUserScramCredentialsResponse::default().with_results(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::alter_user_scram_credentials_request::{
        ScramCredentialDeletion, ScramCredentialUpsertion,
    };

    fn upsert(name: &str, mechanism: i8, iterations: i32) -> ScramCredentialUpsertion {
        ScramCredentialUpsertion::default()
            .with_name(StrBytes::from_string(name.to_owned()))
            .with_mechanism(mechanism)
            .with_iterations(iterations)
            .with_salt(bytes::Bytes::from_static(b"salt"))
            .with_salted_password(bytes::Bytes::from_static(&[7; 32]))
    }

    fn delete(name: &str, mechanism: i8) -> ScramCredentialDeletion {
        ScramCredentialDeletion::default()
            .with_name(StrBytes::from_string(name.to_owned()))
            .with_mechanism(mechanism)
    }

    fn codes(slots: &[(String, Slot)]) -> Vec<(&str, Option<ErrorCode>)> {
        slots
            .iter()
            .map(|(u, s)| {
                (
                    u.as_str(),
                    match s {
                        Slot::Change(_) => None,
                        Slot::Refused(c, _) => Some(*c),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn requests_are_checked_as_kafkas_controller_checks_them() {
        let req = AlterUserScramCredentialsRequest::default()
            .with_deletions(vec![
                delete("gone", 1),
                delete("twice", 2),
                delete("odd", 3),
            ])
            .with_upsertions(vec![
                upsert("ok", 1, 8192),
                upsert("twice", 1, 8192),
                upsert("", 1, 8192),
                upsert("few", 2, 4095),
                upsert("many", 2, 16_385),
                upsert("odd2", 0, 8192),
            ]);
        let s = slots(&req);
        assert_eq!(
            codes(&s),
            vec![
                ("gone", None),
                ("twice", Some(ErrorCode::DuplicateResource)),
                ("odd", Some(ErrorCode::UnsupportedSaslMechanism)),
                ("ok", None),
                ("", Some(ErrorCode::UnacceptableCredential)),
                ("few", Some(ErrorCode::UnacceptableCredential)),
                ("many", Some(ErrorCode::UnacceptableCredential)),
                ("odd2", Some(ErrorCode::UnsupportedSaslMechanism)),
            ]
        );
        // The keys are derived from the salted password: the same ones a SCRAM exchange checks.
        let Some((_, Slot::Change(c))) = s.iter().find(|(u, _)| u == "ok") else {
            panic!("ok refused")
        };
        let ScramOp::Upsert { credential, .. } = &c.op else {
            panic!("not an upsert")
        };
        let expected = ScramCredential::from_salted_password(
            ScramMechanism::Sha256,
            &[7; 32],
            b"salt".to_vec(),
            8192,
        );
        assert_eq!(credential.stored_key, expected.stored_key);
        assert_eq!(credential.server_key, expected.server_key);
        assert_eq!(credential.salt, b"salt");
    }
}
