"""A consumer crash: three librdkafka consumers share 6 partitions; one of them runs in a child
process that this script kills with SIGKILL (by its pid) half way through. The survivors take
its partitions once its session expires and resume from its last commits: every record is
consumed, and the only records seen twice are ones the killed consumer processed but had not
committed (at most one per partition it owned, since it commits after each record).

usage: groups_crash_consumer.py BOOTSTRAP            (the test's entry point)
       groups_crash_consumer.py BOOTSTRAP --child    (the consumer that gets killed)
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import atexit
import json
import os
import signal
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group, total, parts = "crash", "crash-group", 600, 6


def consumer(name, on_assign=None):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 3,
    })
    if on_assign:
        c.subscribe([topic], on_assign=on_assign)
    else:
        c.subscribe([topic])
    return c


if len(sys.argv) > 2 and sys.argv[2] == "--child":
    # Processes slowly and reports each record after processing, before committing it.
    c = consumer("victim", on_assign=lambda _c, ps: print("assigned", len(ps), flush=True))
    while True:
        msg = c.poll(0.05)
        if msg is None or msg.error():
            continue
        print("seen", msg.partition(), msg.offset(), flush=True)
        time.sleep(0.01)
        c.commit(message=msg, asynchronous=False)

admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)

assigned = {}
survivors = {
    n: consumer(n, on_assign=lambda _c, ps, n=n: assigned.__setitem__(n, len(ps)))
    for n in ("s1", "s2")
}
child = subprocess.Popen(
    [sys.executable, __file__, bootstrap, "--child"], stdout=subprocess.PIPE
)
os.set_blocking(child.stdout.fileno(), False)


def stop_child():
    # Whatever happens to this script, the child it started does not outlive it.
    if child.poll() is None:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()


atexit.register(stop_child)
seen, victim_seen, victim_assigned = [], [], 0


pending = b""


def drain_child():
    # Raw non-blocking reads with our own line buffer: a text wrapper over a non-blocking
    # pipe may raise instead of returning what it has.
    global victim_assigned, pending
    while True:
        try:
            chunk = os.read(child.stdout.fileno(), 65536)
        except BlockingIOError:
            chunk = None
        if not chunk:
            break
        pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in lines:
        words = line.decode().split()
        if words and words[0] == "assigned":
            victim_assigned = int(words[1])
        elif words and words[0] == "seen":
            victim_seen.append((int(words[1]), int(words[2])))


def poll_survivors():
    for c in survivors.values():
        msg = c.poll(0.05)
        if msg is not None and not msg.error():
            seen.append((msg.partition(), msg.offset()))
            c.commit(message=msg, asynchronous=False)


# Produce once the three share the topic.
deadline = time.time() + 60
while time.time() < deadline and not (victim_assigned == 2 and sorted(assigned.values()) == [2, 2]):
    poll_survivors()
    drain_child()
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
for i in range(total):
    producer.produce(topic, value=str(i).encode(), partition=i % parts)
assert producer.flush(30) == 0

killed = False
deadline = time.time() + 90
while time.time() < deadline and len(set(seen) | set(victim_seen)) < total:
    poll_survivors()
    drain_child()
    if not killed and len(victim_seen) >= 40:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        drain_child()
        killed = True

everything = seen + victim_seen
dups = len(everything) - len(set(everything))
victim_parts = {p for p, _ in victim_seen}
out = {
    "killed": killed,
    "distinct": len(set(everything)),
    "duplicates_within_bound": dups <= len(victim_parts),
    "duplicates_only_from_victim": all(
        rec in set(victim_seen) for rec in {r for r in everything if everything.count(r) > 1}
    ),
    "after_crash": sorted(assigned.values()),
}
for c in survivors.values():
    c.close()
print(json.dumps(out))
