"""Produces COUNT records of SIZE bytes with confluent-kafka (librdkafka), acks=all and no
retries, and prints one JSON line: {"acked": n, "errors": {"ERROR_NAME": count, ...}} — the
disk-full test reads KAFKA_STORAGE_ERROR off it as librdkafka reports it to an application.

usage: disk_full_produce.py BOOTSTRAP TOPIC COUNT SIZE
"""
import json
import sys

from confluent_kafka import KafkaError, Producer

bootstrap, topic, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = Producer(
    {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        # One try per record: a retriable KAFKA_STORAGE_ERROR reaches the delivery report as
        # itself rather than as a timeout after retries.
        "retries": 0,
        "enable.idempotence": False,
        "linger.ms": 0,
        "message.timeout.ms": 20000,
    }
)
acked = 0
errors = {}


def on_delivery(err, msg):
    global acked
    if err is None:
        acked += 1
        return
    name = err.name() if isinstance(err, KafkaError) else str(err)
    errors[name] = errors.get(name, 0) + 1


for i in range(count):
    p.produce(topic, key=str(i).encode(), value=bytes([i % 251]) * size, on_delivery=on_delivery)
    p.poll(0)
p.flush(30)
print(json.dumps({"acked": acked, "errors": errors}), flush=True)
