"""Cohort's group count limits as librdkafka (confluent-kafka) meets them.

usage: group_count_limits.py BOOTSTRAP TOPIC
The broker runs with --groups-max 2 --offsets-per-group-max 2 and TOPIC has 3 partitions.
Prints one JSON line: the error name each step got ("" = none):
{"g1_two_offsets": e, "g1_third_offset": e, "g1_update_at_limit": e, "g2_first": e,
 "g3_commit": e, "g4_subscribe": e, "g4_fatal": bool,
 "g5_consumer_protocol": [error name, error text]}
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

bootstrap, topic = sys.argv[1], sys.argv[2]


def consumer(group):
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )


def commit(group, offsets):
    """A simple consumer's synchronous commit (no subscription: generation -1)."""
    c = consumer(group)
    try:
        parts = [TopicPartition(topic, p, o) for p, o in offsets]
        done = c.commit(offsets=parts, asynchronous=False)
        errors = [tp.error.name() for tp in done if tp.error is not None]
        return errors[0] if errors else ""
    except KafkaException as e:
        return e.args[0].name()
    finally:
        c.close()


out = {
    "g1_two_offsets": commit("g1", [(0, 1), (1, 2)]),
    "g1_third_offset": commit("g1", [(2, 3)]),
    "g1_update_at_limit": commit("g1", [(0, 4), (1, 5)]),
    "g2_first": commit("g2", [(0, 1)]),
    "g3_commit": commit("g3", [(0, 1)]),
}

# A subscribing consumer of a third group: its JoinGroup is refused, and librdkafka hands
# the error to the application through poll() (a permanent error: it does not retry in
# silence).
c = consumer("g4")
c.subscribe([topic])
seen, fatal = "", False
deadline = time.monotonic() + 15
while time.monotonic() < deadline and not seen:
    msg = c.poll(0.5)
    if msg is not None and msg.error() is not None:
        seen, fatal = msg.error().name(), msg.error().fatal()
c.close()
out["g4_subscribe"] = seen
out["g4_fatal"] = fatal

# A KIP-848 consumer (group.protocol=consumer) of a new group: its ConsumerGroupHeartbeat is
# refused; librdkafka treats a non-retriable heartbeat error as fatal.
c = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "g5",
        "group.protocol": "consumer",
        "enable.auto.commit": False,
        "log_level": 3,
    }
)
c.subscribe([topic])
seen = ""
deadline = time.monotonic() + 15
while time.monotonic() < deadline and not seen:
    msg = c.poll(0.5)
    if msg is not None and msg.error() is not None:
        seen = [msg.error().name(), msg.error().str()]
c.close()
out["g5_consumer_protocol"] = seen
print(json.dumps(out))
