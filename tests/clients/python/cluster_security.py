"""Admin and client calls of tests/cluster_security.rs with confluent-kafka (librdkafka).

usage: cluster_security.py BOOTSTRAP ACTION... [-X key=value ...]
ACTION: topic:NAME (create it, 1 partition) | acl:TYPE:NAME:PATTERN:PRINCIPAL:HOST:OPERATION:PERMISSION
        (create_acls) | produce:TOPIC (one record) | connect (authenticate, list topics)
Every action runs with the -X settings (security.protocol, sasl.*). Prints one JSON line: a
list with, per action, "OK" or the Kafka error's name (e.g. TOPIC_AUTHORIZATION_FAILED,
_AUTHENTICATION).
"""
import argparse
import json
import time

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("actions", nargs="+")
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

seen = []


def on_error(e):
    seen.append(e.name())


base = {"bootstrap.servers": args.bootstrap, "error_cb": on_error,
        **dict(s.split("=", 1) for s in args.settings)}


def error_name(e):
    if isinstance(e, KafkaException) and e.args and isinstance(e.args[0], KafkaError):
        return e.args[0].name()
    return f"{type(e).__name__}: {e}"


def topic(name):
    admin = AdminClient(base)
    for f in admin.create_topics([NewTopic(name, 1, 1)]).values():
        f.result(30)


def acl(spec):
    rtype, name, pattern, principal, host, operation, permission = spec.split(":", 6)
    # "User:alice" holds a colon: PRINCIPAL is written User=alice.
    binding = AclBinding(ResourceType[rtype], name, ResourcePatternType[pattern],
                         principal.replace("=", ":"), host, AclOperation[operation],
                         AclPermissionType[permission])
    admin = AdminClient(base)
    for f in admin.create_acls([binding]).values():
        f.result(30)


def produce(name):
    result = []
    p = Producer({**base, "message.timeout.ms": 15000})
    p.produce(name, b"cluster security", on_delivery=lambda err, _m: result.append(err))
    p.flush(30)
    if not result:
        raise RuntimeError("no delivery report")
    if result[0] is not None:
        raise KafkaException(result[0])


def connect():
    admin = AdminClient(base)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            admin.list_topics(timeout=5)
            return
        except KafkaException as e:
            admin.poll(0.5)  # serves error_cb
            if "_AUTHENTICATION" in seen:
                raise KafkaException(KafkaError(KafkaError._AUTHENTICATION)) from e
    raise RuntimeError(f"neither connected nor refused; errors seen: {seen}")


out = []
for action in args.actions:
    kind, _, rest = action.partition(":")
    try:
        {"topic": topic, "acl": acl, "produce": produce, "connect": lambda _r: connect()}[kind](rest)
        out.append("OK")
    except Exception as e:  # noqa: BLE001 - the error name is the answer
        out.append(error_name(e))
print(json.dumps(out))
