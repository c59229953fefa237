"""ListOffsets through both Python clients: earliest, latest, and by timestamp.

usage: offsets.py BOOTSTRAP TOPIC PARTITION TS [TS ...]
Prints one JSON line:
{"kafka-python": {"earliest": o, "latest": o, "by_ts": {"<ts>": [offset, timestamp] | null}},
 "confluent":    {... same ...}}
"""
import json
import sys

bootstrap, topic, partition = sys.argv[1], sys.argv[2], int(sys.argv[3])
stamps = [int(t) for t in sys.argv[4:]]
out = {}

from kafka import KafkaConsumer, TopicPartition as KTP  # noqa: E402

c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
tp = KTP(topic, partition)
kp = {
    "earliest": c.beginning_offsets([tp])[tp],
    "latest": c.end_offsets([tp])[tp],
    "by_ts": {},
}
for ts in stamps:
    found = c.offsets_for_times({tp: ts})[tp]
    kp["by_ts"][str(ts)] = None if found is None else [found.offset, found.timestamp]
c.close()
out["kafka-python"] = kp

from confluent_kafka import Consumer, TopicPartition  # noqa: E402

c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
low, high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
ck = {"earliest": low, "latest": high, "by_ts": {}}
for ts in stamps:
    [found] = c.offsets_for_times([TopicPartition(topic, partition, ts)], timeout=10)
    # librdkafka reports "no such record" as offset -1 (OFFSET_END).
    ck["by_ts"][str(ts)] = None if found.offset < 0 else [found.offset, None]
c.close()
out["confluent"] = ck
print(json.dumps(out))
