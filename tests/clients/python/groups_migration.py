"""Online migration between the classic and the consumer protocol with real clients: a
librdkafka classic consumer and a kafka-python classic consumer form a classic group on a
6-partition topic; a librdkafka consumer with `group.protocol=consumer` joins (the group is
upgraded: it becomes a consumer group whose classic members are served from the broker's
assignment); `cohort groups` describes it; the consumer-protocol member leaves (the group is
downgraded to classic) and the classic members consume what is produced next. Every consumer
commits after each record it processes, from its own thread.

usage: groups_migration.py BOOTSTRAP COHORT_BINARY
Prints one JSON object; the Rust test (tests/groups_migration.rs) checks it.
"""
import json
import subprocess
import sys
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic
from kafka import KafkaConsumer
from kafka.errors import KafkaError

bootstrap, cohort = sys.argv[1], sys.argv[2]
topic, group, parts = "mig", "mig-group", 6
batch = 300
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})


def produce(start, count):
    # Records carry the wall clock (librdkafka's default CreateTime).
    for i in range(start, start + count):
        producer.produce(topic, value=str(i).encode(), partition=i % parts)
    assert producer.flush(30) == 0


produce(0, batch)

lock = threading.Lock()
seen = []
by_consumer = {}
assigned = {}
errors = []
stop = {n: threading.Event() for n in ("rd-classic", "kp-classic", "rd-consumer")}


def record_error(name, what):
    with lock:
        errors.append(f"{name}: {what}")


def confluent(name, protocol):
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
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

    c.subscribe([topic])

    def run():
        while not stop[name].is_set():
            msg = c.poll(0.1)
            # What the client holds now (for the consumer protocol, incremental callbacks
            # only give the change).
            with lock:
                assigned[name] = sorted(tp.partition for tp in c.assignment())
            if msg is None:
                continue
            if msg.error():
                record_error(name, msg.error().name())
                continue
            try:
                c.commit(message=msg, asynchronous=False)
            except Exception as e:  # noqa: BLE001 - the test reports every failure
                record_error(name, f"commit {e}")
                continue
            with lock:
                seen.append((msg.partition(), msg.offset()))
                by_consumer[name] = by_consumer.get(name, 0) + 1
        c.close()

    return run


def kafka_python(name):
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

    def run():
        while not stop[name].is_set():
            batch = c.poll(timeout_ms=100, max_records=1)
            with lock:
                assigned[name] = sorted(tp.partition for tp in c.assignment())
            for tp, records in batch.items():
                for r in records:
                    try:
                        c.commit({tp: _offset(r.offset + 1)})
                    except KafkaError as e:
                        record_error(name, f"commit {type(e).__name__}")
                        continue
                    with lock:
                        seen.append((r.partition, r.offset))
                        by_consumer[name] = by_consumer.get(name, 0) + 1
        c.close(autocommit=False)

    return run


def _offset(offset):
    from kafka.structs import OffsetAndMetadata

    return OffsetAndMetadata(offset, "", -1)


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with lock:
            if condition():
                return True
        time.sleep(0.1)
    return False


def covers_all(names):
    held = [p for n in names for p in assigned.get(n, [])]
    return sorted(held) == list(range(parts))


def group_type():
    d = admin.describe_consumer_groups([group])[group].result(30)
    return [d.type.name, d.state.name, len(d.members)]


def cli(*args):
    out = subprocess.run(
        [cohort, "groups", "--bootstrap-server", bootstrap, "--describe", "--group", group, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout


threads = {}


def start(name, run):
    threads[name] = threading.Thread(target=run, daemon=True)
    threads[name].start()


out = {}
start("rd-classic", confluent("rd-classic", "classic"))
start("kp-classic", kafka_python("kp-classic"))
out["classic_formed"] = wait_for(
    lambda: covers_all(["rd-classic", "kp-classic"])
    and all(assigned.get(n) for n in ("rd-classic", "kp-classic"))
    and len(set(seen)) >= batch,
    90,
)
out["type_before"] = group_type()

# Upgrade: a consumer-protocol member joins the classic group; then records for all three.
start("rd-consumer", confluent("rd-consumer", "consumer"))
three = ["rd-classic", "kp-classic", "rd-consumer"]
out["mixed_formed"] = wait_for(
    lambda: covers_all(three) and all(assigned.get(n) for n in three), 90
)
out["type_mixed"] = group_type()
out["cli_state"] = cli("--state", "--verbose")
out["cli_members"] = cli("--members", "--verbose")
produce(batch, batch)
out["consumed_mixed"] = wait_for(lambda: len(set(seen)) >= 2 * batch, 90)

# Downgrade: the consumer-protocol member leaves; the classic members take everything.
stop["rd-consumer"].set()
threads["rd-consumer"].join(30)
with lock:
    assigned.pop("rd-consumer", None)
out["classic_again"] = wait_for(lambda: covers_all(["rd-classic", "kp-classic"]), 90)
out["type_after"] = group_type()
produce(2 * batch, batch)
out["consumed_after"] = wait_for(lambda: len(set(seen)) >= 3 * batch, 90)
for n in ("rd-classic", "kp-classic"):
    stop[n].set()
for n in ("rd-classic", "kp-classic"):
    threads[n].join(30)

check = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
committed = check.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
check.close()
out["consumed"] = len(seen)
out["distinct"] = len(set(seen))
out["committed"] = sorted((tp.partition, tp.offset) for tp in committed)
out["errors"] = sorted(set(errors))
out["every_consumer_consumed"] = sorted(n for n, k in by_consumer.items() if k > 0)


# The policy as DescribeConfigs shows it, and changed cluster-wide by name.
def policy():
    r = ConfigResource("BROKER", "1")
    entries = admin.describe_configs([r], request_timeout=10)[r].result()
    e = entries["group.consumer.migration.policy"]
    return [e.value, ConfigSource(e.source).name]


def alter_policy(value):
    # librdkafka's AdminClient cannot name the cluster-wide default (an empty broker name):
    # `cohort configs`, Kafka's kafka-configs.sh, does.
    done = subprocess.run(
        [
            cohort, "configs", "--bootstrap-server", bootstrap, "--entity-type", "brokers",
            "--entity-default", "--alter", "--add-config",
            f"group.consumer.migration.policy={value}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [done.returncode, done.stderr.strip().splitlines()[-1:]]


out["policy_flag"] = policy()
out["policy_bad"] = alter_policy("sideways")
out["policy_set"] = alter_policy("Upgrade")
out["policy_after"] = policy()
print(json.dumps(out))
