"""Produces, consumes in a group and commits with confluent-kafka (librdkafka) over a secured
listener, then reads the committed offsets back.

usage: secure_e2e.py BOOTSTRAP TOPIC GROUP COUNT [--value-bytes N] [-X key=value ...]
The -X settings (security.protocol, sasl.mechanism, sasl.username, ssl.ca.location, ...) go to
the producer, the consumer and the admin client alike. Prints one JSON line:
{"acked": n, "consumed": n, "committed": offset, "errors": [...]}.
"""
import argparse
import json
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("group")
ap.add_argument("count", type=int)
ap.add_argument("--value-bytes", type=int, default=0)
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

security = dict(s.split("=", 1) for s in args.settings)
base = {"bootstrap.servers": args.bootstrap, **security}
errors = []

admin = AdminClient(base)
for f in admin.create_topics([NewTopic(args.topic, 1, 1)]).values():
    try:
        f.result(30)
    except Exception as e:  # an existing topic is fine
        if "TOPIC_ALREADY_EXISTS" not in str(e):
            errors.append(f"create: {e}")

acked = 0


def value(i):
    """Record i's value, padded to --value-bytes (large batches leave the broker's segment
    files through the TLS copy path instead of memory)."""
    return f"v{i}".ljust(args.value_bytes, "x").encode()



def on_delivery(err, msg):
    global acked
    if err is not None:
        errors.append(str(err))
    else:
        acked += 1


p = Producer({**base, "acks": "all", "linger.ms": 5, "message.timeout.ms": 30000})
for i in range(args.count):
    p.produce(args.topic, key=f"k{i}".encode(), value=value(i), on_delivery=on_delivery)
    p.poll(0)
p.flush(60)

c = Consumer(
    {
        **base,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 10000,
    }
)
c.subscribe([args.topic])
consumed = 0
last = None
deadline = time.time() + 60
while consumed < args.count and time.time() < deadline:
    m = c.poll(1.0)
    if m is None:
        continue
    if m.error():
        errors.append(str(m.error()))
        continue
    if m.value() != value(consumed):
        errors.append(f"record {consumed} is {m.value()[:20]!r}... ({len(m.value())} bytes)")
    consumed += 1
    last = m
if last is not None:
    c.commit(message=last, asynchronous=False)
committed = c.committed([TopicPartition(args.topic, 0)], timeout=30)[0].offset
c.close()
print(json.dumps({"acked": acked, "consumed": consumed, "committed": committed, "errors": errors}))
