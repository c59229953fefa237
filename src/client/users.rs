//! SCRAM credential operations of the Admin client (KIP-554), as `kafka-configs.sh
//! --entity-type users` uses them: DescribeUserScramCredentials and
//! AlterUserScramCredentials, sent to any broker (a KRaft broker forwards the alteration to
//! its controller; Cohort's writes through its Raft leader).
//!
//! The caller passes the salted password (`Hi(password, salt, iterations)`), never the
//! password: that is what the request carries, as Kafka's Admin computes it client-side.

use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::describe_user_scram_credentials_request::UserName;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, DescribeUserScramCredentialsRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{ClientResult, KafkaError, NONE};

/// Kafka's `RESOURCE_NOT_FOUND`, which `DescribeUserScramCredentialsResult.users()` leaves out.
const RESOURCE_NOT_FOUND: i16 = 91;

/// One credential a user has: the mechanism's type (1 SCRAM-SHA-256, 2 SCRAM-SHA-512) and its
/// iteration count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScramCredentialInfo {
    pub mechanism: i8,
    pub iterations: i32,
}

/// One change of `alter_user_scram_credentials`.
#[derive(Clone, PartialEq, Eq)]
pub enum ScramAlteration {
    Upsert {
        user: String,
        mechanism: i8,
        iterations: i32,
        salt: Vec<u8>,
        salted_password: Vec<u8>,
    },
    Delete {
        user: String,
        mechanism: i8,
    },
}

impl std::fmt::Debug for ScramAlteration {
    // The salted password is as good as the password against a SCRAM server: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScramAlteration::Upsert {
                user,
                mechanism,
                iterations,
                ..
            } => write!(f, "Upsert({user:?}, {mechanism}, {iterations})"),
            ScramAlteration::Delete { user, mechanism } => {
                write!(f, "Delete({user:?}, {mechanism})")
            }
        }
    }
}

/// A user's description, or the error the broker answered for it.
pub type UserDescription = (String, Result<Vec<ScramCredentialInfo>, KafkaError>);

impl Admin {
    /// The SCRAM credentials of `users` (`None`: of every user), in the broker's order; users
    /// the broker says do not exist are left out, as Kafka's `users()` leaves them out.
    pub async fn describe_user_scram_credentials(
        &mut self,
        users: Option<&[String]>,
    ) -> ClientResult<Vec<UserDescription>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeUserScramCredentials", async {
            let addr = self.any_broker().await?;
            let request =
                DescribeUserScramCredentialsRequest::default().with_users(users.map(|names| {
                    names
                        .iter()
                        .map(|n| UserName::default().with_name(StrBytes::from_string(n.clone())))
                        .collect()
                }));
            let response = self.send(&addr, &request).await?;
            if response.error_code != NONE {
                return Err(KafkaError::with_message(
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                )
                .into());
            }
            Ok(response
                .results
                .into_iter()
                .filter(|r| r.error_code != RESOURCE_NOT_FOUND)
                .map(|r| {
                    let outcome = if r.error_code == NONE {
                        Ok(r.credential_infos
                            .iter()
                            .map(|c| ScramCredentialInfo {
                                mechanism: c.mechanism,
                                iterations: c.iterations,
                            })
                            .collect())
                    } else {
                        Err(KafkaError::with_message(
                            r.error_code,
                            r.error_message.map(|m| m.to_string()),
                        ))
                    };
                    (r.user.to_string(), outcome)
                })
                .collect())
        })
        .await
    }

    /// Applies `changes` (deletions are sent before upsertions, as the Admin sends them);
    /// one answer per user, as the broker gave them.
    pub async fn alter_user_scram_credentials(
        &mut self,
        changes: &[ScramAlteration],
    ) -> ClientResult<Vec<(String, Result<(), KafkaError>)>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "alterUserScramCredentials", async {
            let mut request = AlterUserScramCredentialsRequest::default();
            for c in changes {
                match c {
                    ScramAlteration::Delete { user, mechanism } => request.deletions.push(
                        ScramCredentialDeletion::default()
                            .with_name(StrBytes::from_string(user.clone()))
                            .with_mechanism(*mechanism),
                    ),
                    ScramAlteration::Upsert {
                        user,
                        mechanism,
                        iterations,
                        salt,
                        salted_password,
                    } => request.upsertions.push(
                        ScramCredentialUpsertion::default()
                            .with_name(StrBytes::from_string(user.clone()))
                            .with_mechanism(*mechanism)
                            .with_iterations(*iterations)
                            .with_salt(bytes::Bytes::from(salt.clone()))
                            .with_salted_password(bytes::Bytes::from(salted_password.clone())),
                    ),
                }
            }
            let addr = self.any_broker().await?;
            let response = self.send(&addr, &request).await?;
            Ok(response
                .results
                .into_iter()
                .map(|r| {
                    let outcome = if r.error_code == NONE {
                        Ok(())
                    } else {
                        Err(KafkaError::with_message(
                            r.error_code,
                            r.error_message.map(|m| m.to_string()),
                        ))
                    };
                    (r.user.to_string(), outcome)
                })
                .collect())
        })
        .await
    }
}
