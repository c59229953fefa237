"""Produces the deterministic records (records.py) with a real client library.

usage: produce.py CLIENT BOOTSTRAP TOPIC NAME COUNT PARTITIONS [--compression C] [--idempotent]
       [--stream]
CLIENT: confluent (librdkafka) or kafka-python. Prints one JSON line: {"acked": n, "errors": [...]}.
With --stream, prints "ack <partition> <offset> <i>" for every acknowledged record as it comes
and keeps producing until COUNT (for the kill -9 test).
"""
import argparse
import json
import sys

import records

ap = argparse.ArgumentParser()
ap.add_argument("client")
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("name")
ap.add_argument("count", type=int)
ap.add_argument("partitions", type=int)
ap.add_argument("--compression", default="none")
ap.add_argument("--idempotent", action="store_true")
ap.add_argument("--stream", action="store_true")
args = ap.parse_args()

acked = 0
errors = []


def report(partition, offset, i):
    if args.stream:
        print(f"ack {partition} {offset} {i}", flush=True)


if args.client == "confluent":
    from confluent_kafka import Producer

    conf = {
        "bootstrap.servers": args.bootstrap,
        "compression.type": args.compression,
        "enable.idempotence": args.idempotent,
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": 60000 if not args.stream else 5000,
    }
    p = Producer(conf)

    def on_delivery(err, msg, i=None):
        global acked
        if err is not None:
            errors.append(str(err))
            return
        acked += 1
        report(msg.partition(), msg.offset(), records.index_of(args.name, msg.key()))

    for i in range(args.count):
        while True:
            try:
                p.produce(
                    args.topic,
                    key=records.key(args.name, i),
                    value=records.value(args.name, i),
                    partition=i % args.partitions,
                    timestamp=records.timestamp(i),
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    if left:
        errors.append(f"{left} records not delivered")
elif args.client == "kafka-python":
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=args.bootstrap,
        compression_type=None if args.compression == "none" else args.compression,
        enable_idempotence=args.idempotent,
        acks="all",
        linger_ms=5,
    )
    futures = []
    for i in range(args.count):
        futures.append(
            (
                i,
                p.send(
                    args.topic,
                    key=records.key(args.name, i),
                    value=records.value(args.name, i),
                    partition=i % args.partitions,
                    timestamp_ms=records.timestamp(i),
                ),
            )
        )
    p.flush(60)
    for i, f in futures:
        try:
            md = f.get(timeout=60)
            acked += 1
            report(md.partition, md.offset, i)
        except Exception as e:  # noqa: BLE001 - reported to the test
            errors.append(repr(e))
    p.close()
else:
    sys.exit(f"unknown client {args.client}")

print(json.dumps({"acked": acked, "errors": errors[:5]}), flush=True)
