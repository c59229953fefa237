"""Shared by the online-migration scripts (groups_migration.py on one node,
groups_migration_cluster.py on three): classic consumers (librdkafka, kafka-python) and
librdkafka consumer-protocol consumers of one group, each polling on its own thread and
committing every record it processes (synchronously) before it counts it as consumed, so the
consumers' own record of what they consumed says whether anything was consumed twice or
skipped; plus the group's type as DescribeGroups/ConsumerGroupDescribe show it and
`cohort groups --describe`.
"""
import subprocess
import threading
import time

from confluent_kafka import Consumer
from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata


class Consumers:
    """The group's consumers and what they consumed: `seen` holds (partition, offset) of every
    record consumed and committed, `assigned` what each consumer holds now."""

    def __init__(self, bootstrap, topic, group, parts):
        self.bootstrap, self.topic, self.group, self.parts = bootstrap, topic, group, parts
        self.lock = threading.Lock()
        self.seen = []
        self.by_consumer = {}
        self.assigned = {}
        self.errors = []
        self.stops = {}
        self.threads = {}

    def record_error(self, name, what):
        with self.lock:
            self.errors.append(f"{name}: {what}")

    def _consumed(self, name, partition, offset):
        with self.lock:
            self.seen.append((partition, offset))
            self.by_consumer[name] = self.by_consumer.get(name, 0) + 1

    def _holds(self, name, tps):
        with self.lock:
            self.assigned[name] = sorted(tp.partition for tp in tps)

    def start_confluent(self, name, protocol):
        """A librdkafka consumer, `group.protocol` = `protocol` (classic or consumer)."""
        conf = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "client.id": name,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
        if protocol == "consumer":
            conf["group.protocol"] = "consumer"
        else:
            conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
        c = Consumer(conf)
        c.subscribe([self.topic])
        stop = self.stops[name] = threading.Event()

        def run():
            while not stop.is_set():
                msg = c.poll(0.1)
                # What the client holds now (for the consumer protocol, incremental callbacks
                # only give the change).
                self._holds(name, c.assignment())
                if msg is None:
                    continue
                if msg.error():
                    self.record_error(name, msg.error().name())
                    continue
                try:
                    c.commit(message=msg, asynchronous=False)
                except Exception as e:  # noqa: BLE001 - the test reports every failure
                    self.record_error(name, f"commit {e}")
                    continue
                self._consumed(name, msg.partition(), msg.offset())
            c.close()

        self._start(name, run)

    def start_kafka_python(self, name):
        """A kafka-python (classic protocol) consumer."""
        c = KafkaConsumer(
            bootstrap_servers=self.bootstrap.split(","),
            group_id=self.group,
            client_id=name,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )
        c.subscribe([self.topic])
        stop = self.stops[name] = threading.Event()

        def run():
            while not stop.is_set():
                batch = c.poll(timeout_ms=100, max_records=1)
                self._holds(name, c.assignment())
                for tp, records in batch.items():
                    for r in records:
                        try:
                            c.commit({tp: OffsetAndMetadata(r.offset + 1, "", -1)})
                        except KafkaError as e:
                            self.record_error(name, f"commit {type(e).__name__}")
                            continue
                        self._consumed(name, r.partition, r.offset)
            c.close(autocommit=False)

        self._start(name, run)

    def _start(self, name, run):
        self.threads[name] = threading.Thread(target=run, daemon=True)
        self.threads[name].start()

    def stop(self, *names):
        """Closes the consumers (each leaves the group) and forgets what they held."""
        for n in names:
            self.stops[n].set()
        for n in names:
            self.threads[n].join(30)
            with self.lock:
                self.assigned.pop(n, None)

    def wait_for(self, condition, seconds):
        """Whether `condition()` (called under the lock) holds within `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            with self.lock:
                if condition():
                    return True
            time.sleep(0.1)
        return False

    def covers_all(self, names):
        """Every partition held, once, by the named consumers together."""
        held = [p for n in names for p in self.assigned.get(n, [])]
        return sorted(held) == list(range(self.parts))

    def each_holds(self, names):
        return all(self.assigned.get(n) for n in names)

    def distinct(self):
        return len(set(self.seen))

    def summary(self):
        return {
            "consumed": len(self.seen),
            "distinct": len(set(self.seen)),
            "errors": sorted(set(self.errors)),
            "every_consumer_consumed": sorted(n for n, k in self.by_consumer.items() if k > 0),
        }


def group_type(admin, group):
    """[type, state, members] as the AdminClient describes the group."""
    d = admin.describe_consumer_groups([group])[group].result(30)
    return [d.type.name, d.state.name, len(d.members)]


def cli(cohort, bootstrap, group, *args):
    """`cohort groups --describe --group G ARGS`' output."""
    out = subprocess.run(
        [cohort, "groups", "--bootstrap-server", bootstrap, "--describe", "--group", group, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout
