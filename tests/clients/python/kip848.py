"""Shared by the KIP-848 (consumer group protocol) scripts: librdkafka consumers with
`group.protocol=consumer` wrapped with an ownership ledger built from their assign/revoke
callbacks, batch commits of what they consumed, and the broker settings that make a test's
rebalances take seconds instead of minutes.
"""
import faulthandler
import os
import subprocess
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

# A crash inside librdkafka or its binding prints the Python stack that led to it.
faulthandler.enable()


def fast_heartbeats(bootstrap, interval_ms=500):
    """The broker owns the consumer protocol's heartbeat interval (5 s by default, at least 5 s):
    lower the cluster-wide floor and the interval (replicated BROKER "" settings) so that
    reconciliations step every half second. `cohort configs --broker-defaults` sends it, as
    `kafka-configs.sh --entity-default` would: confluent-kafka and kafka-python both refuse the
    empty broker name. COHORT_BIN is the broker binary under test."""
    subprocess.run(
        [os.environ["COHORT_BIN"], "configs", "--bootstrap-server", bootstrap.split(",")[0],
         "--alter", "--broker-defaults", "--add-config",
         f"group.consumer.min.heartbeat.interval.ms=100,"
         f"group.consumer.heartbeat.interval.ms={interval_ms}"],
        check=True, capture_output=True, timeout=60,
    )


class Ledger:
    """Who owns which partition, as the consumers' own callbacks report it. A partition given to
    a member while another still holds it is a violation (KIP-848: never before revocation)."""

    def __init__(self):
        self.owner = {}
        self.violations = []

    def assign(self, name, tps):
        for tp in tps:
            key = (tp.topic, tp.partition)
            held = self.owner.get(key)
            if held is not None and held != name:
                self.violations.append([tp.topic, tp.partition, held, name])
            self.owner[key] = name

    def revoke(self, name, tps):
        for tp in tps:
            key = (tp.topic, tp.partition)
            if self.owner.get(key) == name:
                del self.owner[key]

    def counts(self, names, topic=None):
        return sorted(
            sum(1 for (t, _), n in self.owner.items() if n == name and topic in (None, t))
            for name in names
        )


class Member:
    """One consumer-protocol consumer. Everything it consumes is committed (synchronously,
    with the member epoch librdkafka holds) before its next poll, so a partition it gives away
    carries its last record's offset to the next owner."""

    def __init__(self, bootstrap, group, name, ledger, topics, extra=None):
        self.name = name
        self.ledger = ledger
        self.seen = []
        self.commit_errors = []
        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
            "log_level": 3,
        }
        conf.update(extra or {})
        self.c = Consumer(conf)
        self.c.subscribe(
            topics,
            on_assign=lambda _c, tps: ledger.assign(name, tps),
            on_revoke=lambda _c, tps: ledger.revoke(name, tps),
            on_lost=lambda _c, tps: ledger.revoke(name, tps),
        )

    def poll(self, timeout=0.05):
        msgs = self.c.consume(num_messages=200, timeout=timeout)
        last = {}
        for m in msgs:
            if m.error():
                continue
            self.seen.append((m.topic(), m.partition(), m.offset(), m.key()))
            last[(m.topic(), m.partition())] = m.offset()
        if last:
            offsets = [TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
            try:
                for tp in self.c.commit(offsets=offsets, asynchronous=False) or []:
                    if tp.error is not None:
                        self.commit_errors.append(tp.error.name())
            except KafkaException as e:
                self.commit_errors.append(e.args[0].name())

    def close(self):
        self.c.close()


def poll_until(members, done, seconds):
    """Polls every member in turn until `done()` or `seconds` pass; whether it got there."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        for m in members:
            m.poll()
        if done():
            return True
    return False


def produce(bootstrap, topic, partitions, first, count):
    """Records first..first+count-1, record i to partition i % partitions with key k-i; the
    producer stamps them with the wall clock."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    for i in range(first, first + count):
        p.produce(topic, key=f"k-{i}".encode(), value=str(i).encode(), partition=i % partitions)
    assert p.flush(30) == 0, "records left unsent"


def distinct(members):
    return len({(t, p, o) for m in members for (t, p, o, _) in m.seen})


def admin_client(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})
