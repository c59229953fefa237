"""Static membership with the consumer group protocol (librdkafka, `group.protocol=consumer`,
`group.instance.id`): two static members share a 6-partition topic; one closes (a temporary
leave, member epoch -2) and a new process with the same instance id starts within the session.
While it is away its partitions stay with it (nothing moves to the other member, which sees no
assign or revoke); back, it owns exactly the partitions it had, the group epoch has not moved
and its member epoch continues where it was, as `cohort groups --describe --members --verbose`
and `--state --verbose` (ConsumerGroupDescribe) report. Every record is consumed once.

usage: groups_kip848_static.py BOOTSTRAP TOPIC GROUP
Prints one JSON object; tests/groups_clients.rs checks it. COHORT_BIN is the broker binary.
"""
import json
import os
import subprocess
import sys
import time

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import NewTopic

from kip848 import Ledger, Member, admin_client, distinct, fast_heartbeats, poll_until, produce

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
parts, batch = 6, 120

admin = admin_client(bootstrap)
fast_heartbeats(bootstrap)
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)


def groups_tool(*view):
    """The rows of `cohort groups --describe --group G VIEW --verbose`, as header -> value."""
    out = subprocess.run(
        [os.environ["COHORT_BIN"], "groups", "--bootstrap-server", bootstrap.split(",")[0],
         "--describe", "--group", group, *view, "--verbose"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header = lines[0]
    return [dict(zip(header, row)) for row in lines[1:]]


def epochs():
    state = groups_tool("--state")[0]
    members = {
        r["GROUP-INSTANCE-ID"]: [int(r["CURRENT-EPOCH"]), r["CURRENT-ASSIGNMENT"]]
        for r in groups_tool("--members")
    }
    return int(state["GROUP-EPOCH"]), members


class Events(Ledger):
    """The ledger, also counting each member's assign/revoke callbacks."""

    def __init__(self):
        super().__init__()
        self.events = {}

    def assign(self, name, tps):
        if tps:
            self.events[name] = self.events.get(name, 0) + 1
        super().assign(name, tps)

    def revoke(self, name, tps):
        if tps:
            self.events[name] = self.events.get(name, 0) + 1
        super().revoke(name, tps)


ledger = Events()
out = {}


def static(name, instance):
    return Member(bootstrap, group, name, ledger, [topic], {"group.instance.id": instance})


a = static("a1", "inst-a")
b = static("b", "inst-b")
everyone = [a, b]
out["balanced"] = poll_until([a, b], lambda: ledger.counts(["a1", "b"]) == [3, 3], 60)
produce(bootstrap, topic, parts, 0, batch)
poll_until([a, b], lambda: distinct(everyone) >= batch, 60)
a_before = sorted(p for (_, p), n in ledger.owner.items() if n == "a1")
b_before = sorted(p for (_, p), n in ledger.owner.items() if n == "b")
b_events = ledger.events.get("b", 0)
group_epoch_before, members_before = epochs()

# a1 closes: a static member's leave is temporary (epoch -2), its partitions wait for it.
a.close()
produce(bootstrap, topic, parts, batch, batch)
away_until = time.time() + 3  # six heartbeat intervals of b
while time.time() < away_until:
    b.poll()
out["b_kept_only_its_own"] = sorted(p for (_, p), n in ledger.owner.items() if n == "b") == b_before
out["a_partitions_unowned_while_away"] = all(
    ledger.owner.get((topic, p)) is None for p in a_before
)

a2 = static("a2", "inst-a")
everyone.append(a2)
out["rejoined"] = poll_until([a2, b], lambda: ledger.counts(["a2", "b"]) == [3, 3], 60)
a_after = sorted(p for (_, p), n in ledger.owner.items() if n == "a2")
out["same_partitions"] = a_after == a_before
out["b_untouched"] = ledger.events.get("b", 0) == b_events
out["all_consumed"] = poll_until([a2, b], lambda: distinct(everyone) >= 2 * batch, 60)
group_epoch_after, members_after = epochs()
out["group_epoch_unchanged"] = group_epoch_after == group_epoch_before
out["member_epoch_continues"] = members_after["inst-a"][0] == members_before["inst-a"][0]
out["assignment_listed_same"] = members_after["inst-a"][1] == members_before["inst-a"][1]
out["epochs"] = {
    "group": [group_epoch_before, group_epoch_after],
    "inst-a": [members_before["inst-a"][0], members_after["inst-a"][0]],
}
a2.close()
b.close()

seen = [(t, p, o) for m in everyone for (t, p, o, _) in m.seen]
out["consumed"] = len(seen)
out["distinct"] = len(set(seen))
out["commit_errors"] = sorted({e for m in everyone for e in m.commit_errors})
out["violations"] = ledger.violations
offsets = admin.list_consumer_group_offsets(
    [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(parts)])]
)[group].result(30)
out["committed"] = sorted([tp.partition, tp.offset] for tp in offsets.topic_partitions)
print(json.dumps(out))
