"""Three librdkafka consumers in one group read a topic of a three-node cluster while the test
kills the Raft leader (the group coordinator) with SIGKILL and restarts it.

Each consumer commits synchronously after every record. The script produces PER_PARTITION
records into each partition once the three share the topic, prints "ready", then
"progress N" (distinct records consumed) as it goes, so the test knows when to kill, and ends
with one JSON object: what was consumed (every record must be, none skipped), the highest
acknowledged commit per partition (each must be readable from the new coordinator), and how
many commits failed while the coordinator moved.

usage: cluster_failover_consumers.py BOOTSTRAP TOPIC GROUP PARTITIONS PER_PARTITION
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
parts, per_partition = int(sys.argv[4]), int(sys.argv[5])
total = parts * per_partition


def consumer(name, assigned):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "socket.timeout.ms": 10000,
        "reconnect.backoff.max.ms": 500,
        "log_level": 3,
    })
    c.subscribe([topic], on_assign=lambda _c, ps: assigned.__setitem__(name, len(ps)))
    return c


assigned = {}
consumers = {n: consumer(n, assigned) for n in ("c1", "c2", "c3")}
seen = []
acked = {}
commit_errors = 0


def poll_all():
    global commit_errors
    for c in consumers.values():
        msg = c.poll(0.02)
        if msg is None or msg.error():
            continue
        seen.append((msg.partition(), msg.offset()))
        time.sleep(0.005)  # "processing"
        try:
            result = c.commit(message=msg, asynchronous=False)
        except KafkaException:
            commit_errors += 1
            continue
        for tp in result or []:
            if tp.error is None:
                acked[tp.partition] = max(acked.get(tp.partition, -1), tp.offset)
            else:
                commit_errors += 1


deadline = time.time() + 60
while time.time() < deadline and not (
    len(assigned) == 3 and sum(assigned.values()) == parts and min(assigned.values()) > 0
):
    poll_all()
print("ready", flush=True)

producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
for i in range(total):
    producer.produce(topic, value=str(i).encode(), partition=i % parts)
assert producer.flush(30) == 0, "records left unsent"

reported = 0
deadline = time.time() + 90
while time.time() < deadline and len(set(seen)) < total:
    poll_all()
    distinct = len(set(seen))
    if distinct >= reported + 25:
        reported = distinct
        print("progress", distinct, flush=True)

distinct = set(seen)
missing = [
    [p, o] for p in range(parts) for o in range(per_partition) if (p, o) not in distinct
]
for c in consumers.values():
    c.close()
print(json.dumps({
    "total": total,
    "distinct": len(distinct),
    "missing": missing[:20],
    "duplicates": len(seen) - len(distinct),
    "acked": {str(p): o for p, o in sorted(acked.items())},
    "commit_errors": commit_errors,
}), flush=True)
