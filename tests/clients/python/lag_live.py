"""A producer and a consumer group member that keeps up, driven from stdin (confluent-kafka).

usage: lag_live.py BOOTSTRAP TOPIC GROUP
A producer thread writes a burst of 5 records to TOPIC every 300 ms. The consumer (group GROUP)
reads and commits what it read right away, so its lag keeps dropping to zero. Commands, one per
line on stdin:
  pause   stop fetching and committing (Consumer.pause: the member stays in the group)
  stall   stop fetching but keep committing the same offsets every 100 ms
  resume  fetch and commit again
  quit    (or end of input) close and exit
It prints READY once it has committed once, and PAUSED / STALLED / RESUMED when a command took
effect.
"""
import queue
import sys
import threading
import time

from confluent_kafka import Consumer, Producer

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
stop = threading.Event()


def produce():
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    i = 0
    while not stop.is_set():
        for _ in range(5):
            producer.produce(topic, value=b"live-%d" % i)
            i += 1
        producer.poll(0)
        time.sleep(0.3)
    producer.flush(10)


commands = queue.Queue()


def read_commands():
    for line in sys.stdin:
        commands.put(line.strip())
    commands.put("quit")


consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": group + "-live",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 50,
        "session.timeout.ms": 10000,
    }
)
consumer.subscribe([topic])
threading.Thread(target=produce, daemon=True).start()
threading.Thread(target=read_commands, daemon=True).start()

paused = False
stalled = False
last_stall_commit = 0.0
ready = False
deadline = time.time() + 30
while True:
    try:
        command = commands.get_nowait()
    except queue.Empty:
        command = None
    if command == "quit":
        break
    if command == "pause":
        consumer.pause(consumer.assignment())
        paused = True
        print("PAUSED", flush=True)
    elif command == "stall":
        consumer.pause(consumer.assignment())
        paused = stalled = True
        print("STALLED", flush=True)
    elif command == "resume":
        consumer.resume(consumer.assignment())
        paused = stalled = False
        print("RESUMED", flush=True)
    if stalled and time.time() - last_stall_commit > 0.1:
        # Explicit offsets: librdkafka sends the commit even though nothing moved.
        consumer.commit(offsets=consumer.position(consumer.assignment()), asynchronous=False)
        last_stall_commit = time.time()
    msgs = consumer.consume(num_messages=100, timeout=0.05)
    got = any(m.error() is None for m in msgs)
    if got and not paused:
        consumer.commit(asynchronous=False)
        if not ready:
            ready = True
            print("READY", flush=True)
    if not ready and time.time() > deadline:
        sys.exit("never consumed anything")
stop.set()
consumer.close()
