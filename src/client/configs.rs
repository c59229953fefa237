//! Config operations of the Admin client, as `kafka-configs.sh` uses them: DescribeConfigs (with
//! synonyms), IncrementalAlterConfigs and the older AlterConfigs. A BROKER resource named by a
//! broker id is sent to that broker, every other resource to any broker, as Kafka's Admin routes
//! them (`nodeFor`).

use kafka_protocol::messages::{
    alter_configs_request::{
        AlterConfigsRequest, AlterConfigsResource as WholeResource, AlterableConfig as WholeConfig,
    },
    describe_configs_request::{DescribeConfigsRequest, DescribeConfigsResource},
    incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig, IncrementalAlterConfigsRequest,
    },
    ApiKey,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{ClientError, ClientResult, KafkaError, NONE};
use super::types::NodeId;

/// The resource types the tools address (Kafka's `ConfigResource.Type` wire codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceType {
    /// `TOPIC` (2).
    Topic,
    /// `BROKER` (4); the empty name is the cluster-wide default.
    Broker,
    /// `GROUP` (32).
    Group,
}

impl ResourceType {
    /// The wire code.
    pub fn code(self) -> i8 {
        match self {
            ResourceType::Topic => 2,
            ResourceType::Broker => 4,
            ResourceType::Group => 32,
        }
    }
}

/// One config resource: a type and a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigResource {
    /// Its type.
    pub kind: ResourceType,
    /// Its name (a topic, a broker id, `""` for the broker default, a group id).
    pub name: String,
}

impl ConfigResource {
    /// The broker this resource must be sent to, if any (a BROKER resource with a numeric name).
    fn node(&self) -> Option<NodeId> {
        match self.kind {
            ResourceType::Broker => self.name.parse::<i32>().ok().map(NodeId),
            _ => None,
        }
    }
}

/// Kafka's `ConfigEntry.ConfigSource` name of a DescribeConfigs source code.
pub fn source_name(code: i8) -> &'static str {
    match code {
        1 => "DYNAMIC_TOPIC_CONFIG",
        2 => "DYNAMIC_BROKER_CONFIG",
        3 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        4 => "STATIC_BROKER_CONFIG",
        5 => "DEFAULT_CONFIG",
        6 => "DYNAMIC_BROKER_LOGGER_CONFIG",
        7 => "DYNAMIC_CLIENT_METRICS_CONFIG",
        8 => "DYNAMIC_GROUP_CONFIG",
        _ => "UNKNOWN",
    }
}

/// One synonym of a config entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSynonym {
    /// Its name (a broker key for broker-level synonyms).
    pub name: String,
    /// Its value (`None` when sensitive).
    pub value: Option<String>,
    /// Its source code.
    pub source: i8,
}

/// One config entry as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The key.
    pub name: String,
    /// The value (`None` when sensitive or unset).
    pub value: Option<String>,
    /// Where the value comes from (a DescribeConfigs source code).
    pub source: i8,
    /// Whether the broker hides the value.
    pub sensitive: bool,
    /// Whether it cannot be altered.
    pub read_only: bool,
    /// Synonyms in precedence order (the entry itself first, when synonyms were asked for).
    pub synonyms: Vec<ConfigSynonym>,
}

/// An IncrementalAlterConfigs operation (Kafka's `AlterConfigOp.OpType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlterOp {
    /// `SET` (0).
    Set,
    /// `DELETE` (1).
    Delete,
}

impl AlterOp {
    fn code(self) -> i8 {
        match self {
            AlterOp::Set => 0,
            AlterOp::Delete => 1,
        }
    }
}

fn kafka_result(code: i16, message: Option<StrBytes>) -> Result<(), KafkaError> {
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
    /// Where a request about `resource` goes.
    async fn config_address(&mut self, resource: &ConfigResource) -> ClientResult<String> {
        match resource.node() {
            Some(id) => self.node_address(id).await,
            None => self.any_broker().await,
        }
    }

    /// The config entries of one resource (the outer error is the call's, the inner the
    /// resource's, as Kafka's `DescribeConfigsResult` fails per resource).
    pub async fn describe_configs(
        &mut self,
        resource: &ConfigResource,
        include_synonyms: bool,
    ) -> ClientResult<Result<Vec<ConfigEntry>, KafkaError>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeConfigs", async {
            let addr = self.config_address(resource).await?;
            let version = self
                .broker_versions(&addr)
                .await?
                .pick(ApiKey::DescribeConfigs)?;
            let request = DescribeConfigsRequest::default()
                .with_include_synonyms(include_synonyms)
                .with_resources(vec![DescribeConfigsResource::default()
                    .with_resource_type(resource.kind.code())
                    .with_resource_name(StrBytes::from_string(resource.name.clone()))
                    .with_configuration_keys(None)]);
            let response = self.send_at(&addr, &request, version).await?;
            let Some(r) = response.results.into_iter().find(|r| {
                r.resource_type == resource.kind.code() && r.resource_name.as_str() == resource.name
            }) else {
                return Err(ClientError::Protocol {
                    addr,
                    detail: format!(
                        "DescribeConfigs response has no entry for {}",
                        resource.name
                    ),
                });
            };
            if let Err(e) = kafka_result(r.error_code, r.error_message) {
                return Ok(Err(e));
            }
            Ok(Ok(r
                .configs
                .into_iter()
                .map(|c| ConfigEntry {
                    name: c.name.to_string(),
                    value: c.value.map(|v| v.to_string()),
                    source: c.config_source,
                    sensitive: c.is_sensitive,
                    read_only: c.read_only,
                    synonyms: c
                        .synonyms
                        .into_iter()
                        .map(|s| ConfigSynonym {
                            name: s.name.to_string(),
                            value: s.value.map(|v| v.to_string()),
                            source: s.source,
                        })
                        .collect(),
                })
                .collect()))
        })
        .await
    }

    /// IncrementalAlterConfigs of one resource: `ops` as (key, operation, value).
    pub async fn incremental_alter_configs(
        &mut self,
        resource: &ConfigResource,
        ops: &[(String, AlterOp, Option<String>)],
    ) -> ClientResult<Result<(), KafkaError>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "incrementalAlterConfigs", async {
            let addr = self.config_address(resource).await?;
            let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
                AlterConfigsResource::default()
                    .with_resource_type(resource.kind.code())
                    .with_resource_name(StrBytes::from_string(resource.name.clone()))
                    .with_configs(
                        ops.iter()
                            .map(|(k, op, v)| {
                                AlterableConfig::default()
                                    .with_name(StrBytes::from_string(k.clone()))
                                    .with_config_operation(op.code())
                                    .with_value(v.clone().map(StrBytes::from_string))
                            })
                            .collect(),
                    ),
            ]);
            let response = self.send(&addr, &request).await?;
            match response.responses.into_iter().find(|r| {
                r.resource_type == resource.kind.code() && r.resource_name.as_str() == resource.name
            }) {
                Some(r) => Ok(kafka_result(r.error_code, r.error_message)),
                None => Err(ClientError::Protocol {
                    addr,
                    detail: format!(
                        "IncrementalAlterConfigs response has no entry for {}",
                        resource.name
                    ),
                }),
            }
        })
        .await
    }

    /// AlterConfigs of one resource: the whole new set of dynamic entries.
    pub async fn alter_configs(
        &mut self,
        resource: &ConfigResource,
        entries: &[(String, Option<String>)],
    ) -> ClientResult<Result<(), KafkaError>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "alterConfigs", async {
            let addr = self.config_address(resource).await?;
            let request =
                AlterConfigsRequest::default().with_resources(vec![WholeResource::default()
                    .with_resource_type(resource.kind.code())
                    .with_resource_name(StrBytes::from_string(resource.name.clone()))
                    .with_configs(
                        entries
                            .iter()
                            .map(|(k, v)| {
                                WholeConfig::default()
                                    .with_name(StrBytes::from_string(k.clone()))
                                    .with_value(v.clone().map(StrBytes::from_string))
                            })
                            .collect(),
                    )]);
            let response = self.send(&addr, &request).await?;
            match response.responses.into_iter().find(|r| {
                r.resource_type == resource.kind.code() && r.resource_name.as_str() == resource.name
            }) {
                Some(r) => Ok(kafka_result(r.error_code, r.error_message)),
                None => Err(ClientError::Protocol {
                    addr,
                    detail: format!("AlterConfigs response has no entry for {}", resource.name),
                }),
            }
        })
        .await
    }
}
