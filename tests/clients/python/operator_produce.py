"""Appends records to one partition (confluent-kafka).

usage: operator_produce.py BOOTSTRAP TOPIC PARTITION COUNT
"""
import sys

from confluent_kafka import Producer

bootstrap, topic, partition, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
for i in range(count):
    producer.produce(topic, value=b"x%d" % i, partition=partition)
assert producer.flush(15) == 0
