"""A librdkafka producer (acks=all) for the chaos test: paced records into every partition of a
topic of a three-node cluster whose nodes the test kills and restarts.

Record i: key b"NAME-<i>", value (b"NAME-<i>;" repeated) cut to 20 + (i * 37) % 500 bytes,
partition i % PARTITIONS, so the test can check any record from its index alone. It prints
"ack <partition> <offset> <i>" for every delivery report without an error (the ledger: each
such record must be readable at that offset after the run), then one JSON line
{"acked": n, "failed": n, "errors": [...]} once SECONDS have passed and it flushed.

usage: chaos_producer.py BOOTSTRAP TOPIC NAME PARTITIONS RATE SECONDS
"""
import json
import sys
import time

from confluent_kafka import Producer

bootstrap, topic, name = sys.argv[1], sys.argv[2], sys.argv[3]
partitions, rate, seconds = int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])


def key(i):
    return f"{name}-{i}".encode()


def value(i):
    unit = f"{name}-{i};".encode()
    length = 20 + (i * 37) % 500
    return (unit * (length // len(unit) + 1))[:length]


acked = 0
failed = 0
errors = []


def on_delivery(err, msg):
    global acked, failed
    i = int(msg.key().decode().rsplit("-", 1)[1])
    if err is not None:
        failed += 1
        if len(errors) < 5:
            errors.append(str(err))
        return
    acked += 1
    print(f"ack {msg.partition()} {msg.offset()} {i}", flush=True)


p = Producer({
    "bootstrap.servers": bootstrap,
    "acks": "all",
    "linger.ms": 5,
    # A record whose node is down fails after this; the test only counts delivered ones.
    "message.timeout.ms": 4000,
    "socket.timeout.ms": 3000,
    "reconnect.backoff.max.ms": 500,
    "topic.metadata.refresh.interval.ms": 1000,
    "log_level": 2,
})
start = time.monotonic()
i = 0
while time.monotonic() - start < seconds:
    # Paced: record i leaves at start + i / rate.
    ahead = start + i / rate - time.monotonic()
    if ahead > 0:
        p.poll(ahead)
        continue
    try:
        p.produce(topic, key=key(i), value=value(i), partition=i % partitions,
                  on_delivery=on_delivery)
        i += 1
    except BufferError:
        p.poll(0.05)
    p.poll(0)
left = p.flush(30)
print(json.dumps({"sent": i, "acked": acked, "failed": failed, "undelivered": left,
                  "errors": errors}), flush=True)
