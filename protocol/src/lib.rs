//! Kafka wire protocol: framing, request headers, the supported-API table, error codes.
