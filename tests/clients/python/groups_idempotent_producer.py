"""An idempotent librdkafka producer (enable.idempotence) bootstrapped at one broker of a
cluster, producing to one partition: InitProducerId is answered by whichever broker
librdkafka asks, and the partition's leader accepts the sequenced batches.

usage: groups_idempotent_producer.py BOOTSTRAP TOPIC PARTITION COUNT
Prints one JSON object; the Rust test (tests/groups_cluster.rs) checks it.
"""
import json
import sys

from confluent_kafka import Producer

bootstrap, topic, partition, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
errors = []
offsets = []


def delivered(err, msg):
    if err is not None:
        errors.append(str(err))
    else:
        offsets.append(msg.offset())


producer = Producer({
    "bootstrap.servers": bootstrap,
    "enable.idempotence": True,
    "message.timeout.ms": 60000,
})
for i in range(count):
    producer.produce(topic, value=str(i).encode(), partition=partition, on_delivery=delivered)
    producer.poll(0)
left = producer.flush(60)
print(json.dumps({
    "undelivered": left,
    "errors": errors,
    "offsets": sorted(offsets),
}))
