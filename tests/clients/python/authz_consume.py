"""Consumes in a group with confluent-kafka (librdkafka) as an authenticated user, committing
what it reads, until COUNT records arrive, an error is reported, or the deadline passes.

usage: authz_consume.py BOOTSTRAP TOPIC GROUP COUNT [--seconds N] [-X key=value ...]
Prints one JSON line: {"consumed": n, "committed": offset or null, "errors": ["NAME", ...]}
where NAME is librdkafka's error name (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED).
"""
import argparse
import json
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("group")
ap.add_argument("count", type=int)
ap.add_argument("--seconds", type=float, default=30)
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

settings = dict(s.split("=", 1) for s in args.settings)
errors = []


def on_error(err):
    errors.append(err.name())


c = Consumer(
    {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "error_cb": on_error,
        **settings,
    }
)
c.subscribe([args.topic])
consumed = 0
committed = None
deadline = time.time() + args.seconds
while consumed < args.count and not errors and time.time() < deadline:
    msg = c.poll(0.5)
    if msg is None:
        continue
    if msg.error():
        errors.append(msg.error().name())
        break
    consumed += 1
if consumed:
    try:
        c.commit(asynchronous=False)
        got = c.committed([TopicPartition(args.topic, 0)], timeout=10)
        committed = got[0].offset
    except KafkaException as e:
        errors.append(e.args[0].name())
c.close()
print(json.dumps({"consumed": consumed, "committed": committed, "errors": errors}))
