"""Client calls of tests/cluster_node_auth.rs with confluent-kafka (librdkafka).

usage: node_auth.py BOOTSTRAP ACTION... [-X key=value ...]
ACTION: topic:NAME:PARTITIONS (create it; result: the partitions' leaders, in order)
        | txn:NAME:PARTITIONS (one transaction writing "v-P" to each partition, committed;
          result: "OK" or the error's name)
        | read:NAME:PARTITIONS (read_committed from the beginning until idle; result: the values,
          sorted)
        | commit:GROUP:NAME:PARTITIONS:OFFSET (the group commits OFFSET on every partition)
        | brokers (Metadata's brokers: {"ID": "HOST:PORT"})
        | coordinator:GROUP (the group's coordinator as DescribeGroups names it: "ID@HOST:PORT")
        | allow-describe:PRINCIPAL:GROUP (an ACL letting PRINCIPAL describe the group)
Every action runs with the -X settings (security.protocol, sasl.*, ssl.*). Prints one JSON
line: a list with one result per action.
"""
import argparse
import json
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka import OFFSET_BEGINNING
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                  NewTopic, ResourcePatternType, ResourceType)

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("actions", nargs="+")
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

base = {"bootstrap.servers": args.bootstrap, **dict(s.split("=", 1) for s in args.settings)}


def error_name(e):
    if isinstance(e, KafkaException) and e.args and isinstance(e.args[0], KafkaError):
        return e.args[0].name()
    return f"{type(e).__name__}: {e}"


def topic(name, partitions):
    admin = AdminClient(base)
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    deadline = time.time() + 30
    while True:
        meta = admin.list_topics(name, timeout=10).topics.get(name)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions:
            return [meta.partitions[p].leader for p in range(partitions)]
        if time.time() > deadline:
            raise RuntimeError(f"no metadata for {name}: {meta}")
        time.sleep(0.2)


def txn(name, partitions):
    producer = Producer({**base, "transactional.id": f"node-auth-{name}",
                         "transaction.timeout.ms": 60000})
    producer.init_transactions(30)
    producer.begin_transaction()
    for p in range(partitions):
        producer.produce(name, value=f"v-{p}".encode(), partition=p)
    try:
        producer.commit_transaction(30)
        return "OK"
    except KafkaException as e:
        return error_name(e)


def read(name, partitions):
    c = Consumer({**base, "group.id": "node-auth-reader", "enable.auto.commit": False,
                  "isolation.level": "read_committed", "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(name, p, OFFSET_BEGINNING) for p in range(partitions)])
    values = []
    deadline = time.time() + 30
    last = time.time()
    while time.time() < deadline and time.time() - last < 3:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        values.append(m.value().decode())
        last = time.time()
    c.close()
    return sorted(values)


def commit(group, name, partitions, offset):
    c = Consumer({**base, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(name, p, offset) for p in range(partitions)],
             asynchronous=False)
    c.close()
    return "OK"


def brokers():
    meta = AdminClient(base).list_topics(timeout=10)
    return {str(b.id): f"{b.host}:{b.port}" for b in meta.brokers.values()}


def coordinator(group):
    admin = AdminClient(base)
    d = admin.describe_consumer_groups([group])[group].result(30)
    c = d.coordinator
    return f"{c.id}@{c.host}:{c.port}"


def allow_describe(principal, group):
    b = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL, principal, "*",
                   AclOperation.DESCRIBE, AclPermissionType.ALLOW)
    admin = AdminClient(base)  # kept alive until the result: a dropped client fails it
    admin.create_acls([b])[b].result(30)
    return "OK"


results = []
for action in args.actions:
    kind, *rest = action.split(":")
    try:
        if kind == "topic":
            results.append(topic(rest[0], int(rest[1])))
        elif kind == "txn":
            results.append(txn(rest[0], int(rest[1])))
        elif kind == "read":
            results.append(read(rest[0], int(rest[1])))
        elif kind == "brokers":
            results.append(brokers())
        elif kind == "coordinator":
            results.append(coordinator(rest[0]))
        elif kind == "allow-describe":
            # PRINCIPAL is User:NAME: the action's own ':' split cut it in two.
            results.append(allow_describe(f"{rest[0]}:{rest[1]}", rest[2]))
        elif kind == "commit":
            results.append(commit(rest[0], rest[1], int(rest[2]), int(rest[3])))
        else:
            raise ValueError(f"unknown action {action}")
    except Exception as e:  # reported to the Rust test, which decides
        results.append(error_name(e))
print(json.dumps(results))
