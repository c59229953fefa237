"""A librdkafka (confluent-kafka) transactional producer that opens a transaction, writes to it
and then hangs: the Rust test (tests/transactions_admin.rs) SIGKILLs it by PID mid-transaction
and watches the coordinator abort it when transaction.timeout.ms passes.

usage: txn_hang.py BOOTSTRAP TOPIC TRANSACTIONAL_ID TIMEOUT_MS
Prints one JSON line once the records are acknowledged ({"produced": n}), then sleeps.
"""
import json
import sys
import time

from confluent_kafka import Producer

bootstrap, topic, tid, timeout_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = Producer({
    "bootstrap.servers": bootstrap,
    "transactional.id": tid,
    "transaction.timeout.ms": timeout_ms,
    "socket.timeout.ms": min(timeout_ms, 60000),
})
p.init_transactions(30)
p.begin_transaction()
for i in range(3):
    p.produce(topic, value=f"hanging-{i}".encode(), partition=0)
assert p.flush(30) == 0
print(json.dumps({"produced": 3}), flush=True)
while True:
    time.sleep(60)
