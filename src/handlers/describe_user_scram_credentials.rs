//! DescribeUserScramCredentials (50), v0: the mechanisms and iteration counts of users' SCRAM
//! credentials, from this node's applied state — never a salt or a key.
//!
//! Kafka's `ScramImage.describe`: no users (null or empty) lists every user with a
//! credential; a user named twice is answered DUPLICATE_RESOURCE (once), a user without any
//! credential RESOURCE_NOT_FOUND, with Kafka's messages. Users come back in request order
//! (every user: by name).

use kafka_protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use kafka_protocol::messages::{
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::RequestContext;
use crate::replicated::scram::ReplicatedScram;

const DUPLICATE_USER: &str =
    "Cannot describe SCRAM credentials for the same user twice in a single request: ";
const NO_SUCH_USER: &str = "Attempt to describe a user credential that does not exist: ";

/// Describes the credentials of the users asked for (or of all).
pub async fn handle(
    ctx: &RequestContext,
    req: DescribeUserScramCredentialsRequest,
) -> DescribeUserScramCredentialsResponse {
    let Some(groups) = &ctx.broker.groups else {
        return DescribeUserScramCredentialsResponse::default()
            .with_error_code(ctx.error(ErrorCode::CoordinatorNotAvailable));
    };
    let scram = ReplicatedScram::new(groups.node().clone());
    // (user, named more than once)
    let mut asked: Vec<(String, bool)> = Vec::new();
    match req.users.as_deref() {
        None | Some([]) => {
            asked = scram.read(|t| {
                t.users()
                    .into_iter()
                    .map(|u| (u.to_owned(), false))
                    .collect()
            });
        }
        Some(users) => {
            for u in users {
                match asked
                    .iter_mut()
                    .find(|(n, _)| n.as_str() == u.name.as_str())
                {
                    Some(entry) => entry.1 = true,
                    None => asked.push((u.name.to_string(), false)),
                }
            }
        }
    }
    let results = scram.read(|table| {
        asked
            .into_iter()
            .map(|(user, duplicate)| {
                let result = DescribeUserScramCredentialsResult::default()
                    .with_user(StrBytes::from_string(user.clone()));
                if duplicate {
                    return result
                        .with_error_code(ctx.error(ErrorCode::DuplicateResource))
                        .with_error_message(Some(StrBytes::from_string(format!(
                            "{DUPLICATE_USER}{user}"
                        ))));
                }
                let infos: Vec<CredentialInfo> = table
                    .describe(&user)
                    .into_iter()
                    .map(|(m, iterations)| {
                        CredentialInfo::default()
                            .with_mechanism(m.kafka_type())
                            .with_iterations(i32::try_from(iterations).unwrap_or(i32::MAX))
                    })
                    .collect();
                if infos.is_empty() {
                    result
                        .with_error_code(ctx.error(ErrorCode::ResourceNotFound))
                        .with_error_message(Some(StrBytes::from_string(format!(
                            "{NO_SUCH_USER}{user}"
                        ))))
                } else {
                    result.with_credential_infos(infos)
                }
            })
            .collect()
    });
    DescribeUserScramCredentialsResponse::default().with_results(results)
}
