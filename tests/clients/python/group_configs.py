"""GROUP config resources through confluent-kafka's AdminClient: IncrementalAlterConfigs,
DescribeConfigs, refused values, validate_only and the legacy AlterConfigs.

usage: group_configs.py BOOTSTRAP GROUP first|again|deleted
Prints one JSON object; the Rust test (tests/group_configs.rs) checks it.
"""
import json
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)

bootstrap, group, phase = sys.argv[1], sys.argv[2], sys.argv[3]
c = AdminClient({"bootstrap.servers": bootstrap, "client.id": "group-configs"})
KEYS = ["consumer.heartbeat.interval.ms", "consumer.session.timeout.ms"]
out = {}


def resource(entries=None):
    return ConfigResource(ResourceType.GROUP, group, incremental_configs=entries or [])


def incremental(entries, validate_only=False):
    r = resource(entries)
    try:
        c.incremental_alter_configs([r], validate_only=validate_only, request_timeout=10)[r].result()
        return "ok"
    except KafkaException as e:
        return [e.args[0].name(), e.args[0].str()]


def described():
    r = ConfigResource(ResourceType.GROUP, group)
    try:
        entries = c.describe_configs([r], request_timeout=10)[r].result()
    except KafkaException as e:
        return [e.args[0].name(), e.args[0].str()]
    return {
        k: [e.value, ConfigSource(e.source).name, e.is_read_only, e.is_sensitive]
        for k, e in sorted(entries.items())
    }


def setting(key, value, op=AlterConfigOpType.SET):
    return ConfigEntry(key, value, incremental_operation=op)


if phase == "first":
    out["defaults"] = described()
    out["set"] = incremental(
        [
            setting("consumer.session.timeout.ms", "50000"),
            setting("consumer.heartbeat.interval.ms", "7000"),
        ]
    )
    out["described"] = described()
    out["too_small"] = incremental([setting("consumer.heartbeat.interval.ms", "1000")])
    out["too_large"] = incremental([setting("consumer.session.timeout.ms", "600000")])
    out["not_int"] = incremental([setting("consumer.session.timeout.ms", "soon")])
    out["unknown"] = incremental([setting("consumer.rebalance.timeout.ms", "1")])
    out["validate_only_bad"] = incremental(
        [setting("consumer.heartbeat.interval.ms", "20000")], validate_only=True
    )
    out["validate_only_good"] = incremental(
        [setting("consumer.heartbeat.interval.ms", "9000")], validate_only=True
    )
    out["after_refusals"] = described()
    # Legacy AlterConfigs: the given configs replace the overrides.
    legacy = ConfigResource(
        ResourceType.GROUP, group, set_config={"consumer.session.timeout.ms": "55000"}
    )
    try:
        c.alter_configs([legacy], request_timeout=10)[legacy].result()
        out["legacy"] = "ok"
    except KafkaException as e:
        out["legacy"] = [e.args[0].name(), e.args[0].str()]
    out["after_legacy"] = described()
    out["reset"] = incremental(
        [
            setting("consumer.session.timeout.ms", "50000"),
            setting("consumer.heartbeat.interval.ms", "7000"),
        ]
    )
else:
    out["described"] = described()

print(json.dumps(out, sort_keys=True))
