"""librdkafka (confluent-kafka) transactions against Cohort: a consume-transform-produce step
committed with send_offsets_to_transaction, an aborted one, the log as a read_uncommitted
consumer sees it (control batches take offsets but are never returned), and a second producer
with the same transactional.id fencing the first.

usage: txn_confluent.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/transactions_clients.rs) checks it.
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
IN, OUT, GROUP = "txn-in", "txn-out", "eos"
result = {}

admin = AdminClient({"bootstrap.servers": bootstrap})
for f in admin.create_topics([NewTopic(IN, 1, 1), NewTopic(OUT, 1, 1)]).values():
    f.result(30)

plain = Producer({"bootstrap.servers": bootstrap})
for i in range(10):
    plain.produce(IN, value=f"in-{i}".encode(), partition=0)
assert plain.flush(30) == 0

consumer = Consumer({
    "bootstrap.servers": bootstrap,
    "group.id": GROUP,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "isolation.level": "read_committed",
})
consumer.subscribe([IN])
inputs = []
deadline = time.time() + 60
while len(inputs) < 10 and time.time() < deadline:
    m = consumer.poll(1.0)
    if m is not None and m.error() is None:
        inputs.append(m.value().decode())
result["inputs"] = len(inputs)

producer = Producer({
    "bootstrap.servers": bootstrap,
    "transactional.id": "txn-1",
    "transaction.timeout.ms": 30000,
})
producer.init_transactions(30)

# Committed: ten transformed records and the group's position, atomically.
producer.begin_transaction()
for v in inputs:
    producer.produce(OUT, value=v.upper().encode(), partition=0)
positions = consumer.position([TopicPartition(IN, 0)])
producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
producer.commit_transaction(30)
result["sent_offsets"] = [[p.topic, p.partition, p.offset] for p in positions]
committed = consumer.committed([TopicPartition(IN, 0)], timeout=30)
result["committed_after_commit"] = [[p.topic, p.partition, p.offset] for p in committed]

# Aborted: three records and an offset that must not become the group's.
producer.begin_transaction()
for i in range(3):
    producer.produce(OUT, value=f"aborted-{i}".encode(), partition=0)
producer.send_offsets_to_transaction(
    [TopicPartition(IN, 0, 3)], consumer.consumer_group_metadata(), 30
)
# abort_transaction purges what librdkafka has not sent yet: flush so the aborted records are
# in the log (where read_committed must not see them), as the test expects.
assert producer.flush(30) == 0
producer.abort_transaction(30)
committed = consumer.committed([TopicPartition(IN, 0)], timeout=30)
result["committed_after_abort"] = [[p.topic, p.partition, p.offset] for p in committed]
consumer.close()


def read_all(isolation):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"reader-{isolation}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": isolation,
        "enable.partition.eof": True,
    })
    c.assign([TopicPartition(OUT, 0, 0)])
    got = []
    deadline = time.time() + 30
    while time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error() is not None:
            if m.error().code() == -191:  # _PARTITION_EOF
                break
            continue
        got.append([m.offset(), m.value().decode()])
    low, high = c.get_watermark_offsets(TopicPartition(OUT, 0), timeout=10)
    c.close()
    return got, high


got, high = read_all("read_uncommitted")
result["uncommitted_offsets"] = [o for o, _ in got]
result["uncommitted_values"] = [v for _, v in got]
result["high_watermark"] = high
got, _ = read_all("read_committed")
result["committed_values"] = [v for _, v in got]

# Fencing: a second producer with the same transactional.id aborts the first one's open
# transaction and bumps the epoch; the first one's next operation is fatal.
first = Producer({"bootstrap.servers": bootstrap, "transactional.id": "txn-fence"})
first.init_transactions(30)
first.begin_transaction()
first.produce(OUT, value=b"zombie", partition=0)
first.flush(30)
second = Producer({"bootstrap.servers": bootstrap, "transactional.id": "txn-fence"})
second.init_transactions(60)
try:
    first.commit_transaction(30)
    result["zombie_commit"] = "committed"
except KafkaException as e:
    err = e.args[0]
    result["zombie_commit"] = err.name()
    result["zombie_fatal"] = err.fatal()
second.begin_transaction()
second.produce(OUT, value=b"survivor", partition=0)
second.commit_transaction(30)
result["survivor_committed"] = True

got, high = read_all("read_uncommitted")
result["final_values"] = [v for _, v in got]
result["final_high_watermark"] = high
got, _ = read_all("read_committed")
result["final_committed_values"] = [v for _, v in got]

print(json.dumps(result))
