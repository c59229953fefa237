"""End to end with kafka-python: 300 records over 6 partitions, three KafkaConsumers in one
group, each polled from its own thread, commits after processing each poll's records; one
consumer leaves half way and the others take over. Every record is consumed exactly once.

usage: groups_kafka_python_e2e.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group, total, parts = "kp-e2e", "kp-e2e-group", 300, 6
KafkaAdminClient(bootstrap_servers=bootstrap).create_topics([NewTopic(topic, parts, 1)])

producer = KafkaProducer(bootstrap_servers=bootstrap)
for i in range(total):
    producer.send(topic, value=str(i).encode(), partition=i % parts)
producer.flush(30)
producer.close()


def consumer(name):
    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    c.subscribe([topic])
    return c


# Each consumer is polled from its own thread, as applications run them: kafka-python 3.0
# drops a join-and-sync that completes between two polls and joins again, so a consumer polled
# only now and then (round-robin with others on a loaded machine) can keep rejoining.
lock = threading.Lock()
seen = []
assigned = {}
stop = threading.Event()
leave = {n: threading.Event() for n in ("k1", "k2", "k3")}
consumers = {n: consumer(n) for n in ("k1", "k2", "k3")}


def run(name, c):
    while not stop.is_set() and not leave[name].is_set():
        batch = c.poll(timeout_ms=100, max_records=5)
        records = [r for rs in batch.values() for r in rs]
        with lock:
            seen.extend((r.partition, r.offset) for r in records)
            assigned[name] = len(c.assignment())
        if records:
            c.commit()
    if leave[name].is_set():
        c.close(autocommit=False)


threads = {n: threading.Thread(target=run, args=(n, c), daemon=True) for n, c in consumers.items()}
for t in threads.values():
    t.start()


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with lock:
            if condition():
                return
        time.sleep(0.05)


wait_for(lambda: len(seen) >= total // 2, 90)
left = len(seen) >= total // 2
if left:
    leave["k3"].set()
    threads["k3"].join(30)
    consumers.pop("k3")
    with lock:
        assigned.pop("k3", None)
wait_for(lambda: len(set(seen)) >= total, 90)
# The two left must end up sharing all six partitions.
wait_for(lambda: sorted(assigned.get(n, 0) for n in consumers) == [3, 3], 30)
stop.set()
for n in consumers:
    threads[n].join(30)

k1 = consumers["k1"]
out = {
    "consumed": len(seen),
    "distinct": len(set(seen)),
    "left": left,
    "after_leave": sorted(assigned.get(n, 0) for n in consumers),
    "committed": sorted((p, k1.committed(TopicPartition(topic, p))) for p in range(parts)),
}
for c in consumers.values():
    c.close(autocommit=False)
print(json.dumps(out))
