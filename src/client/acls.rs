//! ACL operations of the Admin client, as `kafka-acls.sh` uses them: CreateAcls, DescribeAcls
//! and DeleteAcls, sent to any broker (Cohort writes through its Raft leader). Codes are
//! Kafka's wire codes (resource type, pattern type, operation, permission).

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{ClientResult, KafkaError, NONE};

/// One ACL binding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclEntry {
    pub resource_type: i8,
    pub name: String,
    pub pattern: i8,
    pub principal: String,
    pub host: String,
    pub operation: i8,
    pub permission: i8,
}

/// An `AclBindingFilter` (`None`: any name, principal or host; codes 1 are ANY).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclEntryFilter {
    pub resource_type: i8,
    pub name: Option<String>,
    pub pattern: i8,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: i8,
    pub permission: i8,
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn outcome(code: i16, message: Option<StrBytes>) -> Result<(), KafkaError> {
    if code == NONE {
        Ok(())
    } else {
        Err(KafkaError::with_message(
            code,
            message.map(|m| m.to_string()),
        ))
    }
}

impl Admin {
    /// Creates `acls`; one answer per ACL, in order.
    pub async fn create_acls(
        &mut self,
        acls: &[AclEntry],
    ) -> ClientResult<Vec<Result<(), KafkaError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "createAcls", async {
            let request = CreateAclsRequest::default().with_creations(
                acls.iter()
                    .map(|a| {
                        AclCreation::default()
                            .with_resource_type(a.resource_type)
                            .with_resource_name(s(&a.name))
                            .with_resource_pattern_type(a.pattern)
                            .with_principal(s(&a.principal))
                            .with_host(s(&a.host))
                            .with_operation(a.operation)
                            .with_permission_type(a.permission)
                    })
                    .collect(),
            );
            let addr = self.any_broker().await?;
            let response = self.send(&addr, &request).await?;
            Ok(response
                .results
                .into_iter()
                .map(|r| outcome(r.error_code, r.error_message))
                .collect())
        })
        .await
    }

    /// The ACLs `filter` matches.
    pub async fn describe_acls(&mut self, filter: &AclEntryFilter) -> ClientResult<Vec<AclEntry>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeAcls", async {
            let request = DescribeAclsRequest::default()
                .with_resource_type_filter(filter.resource_type)
                .with_resource_name_filter(filter.name.as_deref().map(s))
                .with_pattern_type_filter(filter.pattern)
                .with_principal_filter(filter.principal.as_deref().map(s))
                .with_host_filter(filter.host.as_deref().map(s))
                .with_operation(filter.operation)
                .with_permission_type(filter.permission);
            let addr = self.any_broker().await?;
            let response = self.send(&addr, &request).await?;
            outcome(response.error_code, response.error_message)?;
            let mut out = Vec::new();
            for r in response.resources {
                for a in r.acls {
                    out.push(AclEntry {
                        resource_type: r.resource_type,
                        name: r.resource_name.to_string(),
                        pattern: r.pattern_type,
                        principal: a.principal.to_string(),
                        host: a.host.to_string(),
                        operation: a.operation,
                        permission: a.permission_type,
                    });
                }
            }
            Ok(out)
        })
        .await
    }

    /// Deletes what `filters` match; per filter, the ACLs it removed or its error.
    pub async fn delete_acls(
        &mut self,
        filters: &[AclEntryFilter],
    ) -> ClientResult<Vec<Result<Vec<AclEntry>, KafkaError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "deleteAcls", async {
            let request = DeleteAclsRequest::default().with_filters(
                filters
                    .iter()
                    .map(|f| {
                        DeleteAclsFilter::default()
                            .with_resource_type_filter(f.resource_type)
                            .with_resource_name_filter(f.name.as_deref().map(s))
                            .with_pattern_type_filter(f.pattern)
                            .with_principal_filter(f.principal.as_deref().map(s))
                            .with_host_filter(f.host.as_deref().map(s))
                            .with_operation(f.operation)
                            .with_permission_type(f.permission)
                    })
                    .collect(),
            );
            let addr = self.any_broker().await?;
            let response = self.send(&addr, &request).await?;
            Ok(response
                .filter_results
                .into_iter()
                .map(|r| {
                    outcome(r.error_code, r.error_message).map(|()| {
                        r.matching_acls
                            .into_iter()
                            .map(|m| AclEntry {
                                resource_type: m.resource_type,
                                name: m.resource_name.to_string(),
                                pattern: m.pattern_type,
                                principal: m.principal.to_string(),
                                host: m.host.to_string(),
                                operation: m.operation,
                                permission: m.permission_type,
                            })
                            .collect()
                    })
                })
                .collect())
        })
        .await
    }
}
