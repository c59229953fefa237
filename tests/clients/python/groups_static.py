"""Static membership through librdkafka: two static consumers share a topic; one is closed and
a new process-like consumer with the same group.instance.id comes back within the session
timeout: it gets the same partitions and the other member sees no rebalance.

usage: groups_static.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import time

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group = "static-topic", "static-group"
out = {}
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 4, 1)])[topic].result(30)

assigned = {}
calls = {}


def consumer(instance):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.instance.id": instance,
        "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "partition.assignment.strategy": "range",
        "log_level": 3,
    })

    def on_assign(_c, parts):
        assigned[instance] = sorted(p.partition for p in parts)
        calls[instance] = calls.get(instance, 0) + 1

    def on_revoke(_c, parts):
        calls[instance] = calls.get(instance, 0) + 1

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    return c


def poll_until(consumers, done, limit_s=60):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        for c in consumers:
            c.poll(0.05)
        if done():
            return True
    return False


a, b = consumer("a"), consumer("b")
out["balanced"] = poll_until(
    [a, b], lambda: sorted(len(assigned.get(i, [])) for i in ("a", "b")) == [2, 2]
)
before = dict(assigned)
b_calls = calls.get("b")
# Let both settle on the same generation, then "restart" a: close without LeaveGroup (static).
poll_until([a, b], lambda: False, limit_s=1)
a.close()
assigned.pop("a", None)
a2 = consumer("a")
out["rejoined"] = poll_until([a2, b], lambda: assigned.get("a") is not None)
# Keep b polling a while: a rebalance would show up as revoke/assign calls on b.
poll_until([a2, b], lambda: False, limit_s=3)
out["same_partitions"] = assigned.get("a") == before.get("a")
out["b_untouched"] = calls.get("b") == b_calls and assigned.get("b") == before.get("b")
a2.close()
b.close()
print(json.dumps(out))
