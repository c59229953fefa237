//! ApiVersions (18): the served table, straight from `protocol::SUPPORTED_APIS`.
//!
//! A version newer than served never gets here: the connection answers it with Kafka's v0
//! fallback (`protocol::response::api_versions_too_new_response`).

use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use protocol::{ErrorCode, SUPPORTED_APIS};

use super::RequestContext;

/// Answers with every served API and version range; v3+ first checks the client software
/// name and version the way Kafka does (`ApiVersionsRequest.isValid`).
pub fn handle(ctx: &RequestContext, req: ApiVersionsRequest) -> ApiVersionsResponse {
    let mut body = answer(ctx.version, &req);
    if body.error_code != 0 {
        body.error_code = ctx.error(ErrorCode::InvalidRequest);
    }
    body
}

/// The answer at `version`, with no broker state involved (also served while the node loads).
pub fn answer(version: i16, req: &ApiVersionsRequest) -> ApiVersionsResponse {
    if version >= 3
        && !(valid_software_field(&req.client_software_name)
            && valid_software_field(&req.client_software_version))
    {
        tracing::info!(
            software = %req.client_software_name,
            software_version = %req.client_software_version,
            "ApiVersions with an invalid client software name or version"
        );
        return protocol::response::api_versions_body(&[], ErrorCode::InvalidRequest);
    }
    protocol::response::api_versions_body(SUPPORTED_APIS, ErrorCode::None)
}

/// Kafka's rule: `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
fn valid_software_field(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: &u8| c.is_ascii_alphanumeric();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            edge(first)
                && edge(last)
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'.')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use kafka_protocol::messages::{ApiKey, ResponseKind};
    use kafka_protocol::protocol::StrBytes;

    #[tokio::test]
    async fn lists_the_served_table_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for v in 0..=4 {
            let c = ctx(&b, ApiKey::ApiVersions, v);
            let req = ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("librdkafka"))
                .with_client_software_version(StrBytes::from_static_str("2.16.0"));
            let resp = handle(&c, req);
            assert_eq!(resp.error_code, 0);
            assert_eq!(resp.api_keys.len(), SUPPORTED_APIS.len());
            let own = resp.api_keys.iter().find(|k| k.api_key == 18).unwrap();
            assert_eq!((own.min_version, own.max_version), (0, 4));
            assert_encodes(&c, &ResponseKind::ApiVersions(resp));
        }
    }

    #[tokio::test]
    async fn invalid_software_names_are_refused_from_v3() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let req = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("-bad"))
            .with_client_software_version(StrBytes::from_static_str("1.0"));
        assert_eq!(
            handle(&ctx(&b, ApiKey::ApiVersions, 3), req.clone()).error_code,
            42
        );
        assert_eq!(handle(&ctx(&b, ApiKey::ApiVersions, 2), req).error_code, 0);
        assert!(valid_software_field("kafka-python"));
        assert!(valid_software_field("3.0.12"));
        assert!(!valid_software_field(""));
        assert!(!valid_software_field("a b"));
    }
}
