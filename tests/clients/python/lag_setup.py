"""Known lag for the lag tests, made with confluent-kafka (librdkafka).

usage: lag_setup.py BOOTSTRAP setup
  Topic `lagged` (3 partitions) gets 30, 20 and 10 records. Group `lag-reader` (a consumer that
  joins, reads and commits, then leaves) commits lagged-0 at 12, lagged-1 at 20 and lagged-2 at
  3. Group `lag-done` reads everything and commits it: no lag.
usage: lag_setup.py BOOTSTRAP produce PARTITION COUNT
  COUNT more records to lagged-PARTITION.
usage: lag_setup.py BOOTSTRAP hold
  A consumer of group `lag-live` (client id `lag-live-client`) takes all of `lagged`, commits
  offset 1 on each partition, prints {"assigned": [...]} and stays in the group until killed.
Prints {"ok": true}.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "lagged"
RECORDS = [30, 20, 10]
COMMITS = {0: 12, 1: 20, 2: 3}


def produce(bootstrap, counts):
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for p, n in counts.items():
        for i in range(n):
            producer.produce(TOPIC, value=b"r%d-%d" % (p, i), partition=p)
    left = producer.flush(20)
    assert left == 0, f"{left} records not delivered"


def consumer(bootstrap, group):
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": group + "-client",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.subscribe([TOPIC])
    # The poll that brings the assignment may already return a record: keep it.
    early = []
    deadline = time.time() + 30
    while len(c.assignment()) < len(RECORDS) and time.time() < deadline:
        msg = c.poll(0.2)
        if msg is not None and not msg.error():
            early.append(msg)
    assert len(c.assignment()) == len(RECORDS), f"assignment {c.assignment()}"
    return c, early


def setup(bootstrap):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, len(RECORDS), 1)], operation_timeout=10).values():
        f.result()
    produce(bootstrap, dict(enumerate(RECORDS)))

    reader, _ = consumer(bootstrap, "lag-reader")
    reader.commit(
        offsets=[TopicPartition(TOPIC, p, o) for p, o in COMMITS.items()], asynchronous=False
    )
    reader.close()

    done, early = consumer(bootstrap, "lag-done")
    read = len(early)
    deadline = time.time() + 30
    while read < sum(RECORDS) and time.time() < deadline:
        msg = done.poll(0.2)
        if msg is not None and not msg.error():
            read += 1
    assert read == sum(RECORDS), f"read {read}"
    done.commit(asynchronous=False)
    done.close()


def hold(bootstrap):
    c, _ = consumer(bootstrap, "lag-live")
    c.commit(offsets=[TopicPartition(TOPIC, p, 1) for p in range(len(RECORDS))], asynchronous=False)
    print(json.dumps({"assigned": sorted(f"{tp.topic}:{tp.partition}" for tp in c.assignment())}), flush=True)
    while True:
        c.poll(0.5)


bootstrap, command = sys.argv[1], sys.argv[2]
if command == "hold":
    hold(bootstrap)
elif command == "setup":
    setup(bootstrap)
elif command == "produce":
    produce(bootstrap, {int(sys.argv[3]): int(sys.argv[4])})
else:
    sys.exit(f"unknown command {command}")
print(json.dumps({"ok": True}), flush=True)
