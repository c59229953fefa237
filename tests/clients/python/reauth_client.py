"""Keeps a confluent-kafka (librdkafka) producer and group consumer busy over a SASL listener
for a while, so that a broker with connections.max.reauth.ms set sees them re-authenticate
(KIP-368) on their open connections, then reports what got through.

usage: reauth_client.py BOOTSTRAP TOPIC GROUP SECONDS [-X key=value ...]
Prints one JSON line: {"acked": n, "consumed": n, "errors": [...]}.
"""
import argparse
import json
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("group")
ap.add_argument("seconds", type=float)
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

base = {"bootstrap.servers": args.bootstrap, **dict(s.split("=", 1) for s in args.settings)}
errors = []

admin = AdminClient(base)
for f in admin.create_topics([NewTopic(args.topic, 1, 1)]).values():
    try:
        f.result(30)
    except Exception as e:
        if "TOPIC_ALREADY_EXISTS" not in str(e):
            errors.append(f"create: {e}")

acked = 0


def on_delivery(err, msg):
    global acked
    if err is not None:
        errors.append(f"delivery: {err}")
    else:
        acked += 1


def on_error(err):
    errors.append(f"client: {err}")


p = Producer({**base, "acks": "all", "linger.ms": 0, "error_cb": on_error})
c = Consumer(
    {
        **base,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 200,
        "fetch.wait.max.ms": 100,
        "error_cb": on_error,
    }
)
c.subscribe([args.topic])
sent = 0
consumed = 0
end = time.time() + args.seconds
while time.time() < end:
    p.produce(args.topic, value=f"v{sent}".encode(), on_delivery=on_delivery)
    sent += 1
    p.poll(0)
    m = c.poll(0.1)
    if m is not None:
        if m.error():
            errors.append(f"consume: {m.error()}")
        else:
            consumed += 1
p.flush(30)
deadline = time.time() + 30
while consumed < sent and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and not m.error():
        consumed += 1
c.close()
print(json.dumps({"sent": sent, "acked": acked, "consumed": consumed, "errors": errors}))
