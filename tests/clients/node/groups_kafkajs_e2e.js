// End to end with kafkajs: three consumers in one group share 6 partitions, then 300 records
// are consumed (a commit after each processed message, autoCommit off); one disconnects half way
// and the others take over. Every record is consumed exactly once.
//
// usage: node groups_kafkajs_e2e.js BOOTSTRAP — prints one JSON object (tests/groups_clients.rs).
const { Kafka, logLevel } = require('kafkajs');

const TOTAL = 300;
const PARTS = 6;

async function main() {
  const kafka = new Kafka({ brokers: [process.argv[2]], clientId: 'kjs-e2e', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'kjs-e2e', numPartitions: PARTS }] });

  const seen = [];
  const consumers = [];
  const assigned = new Map();
  const busy = new Map();
  for (const name of ['j1', 'j2', 'j3']) {
    const c = kafka.consumer({ groupId: 'kjs-e2e-group', sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000 });
    c.on(c.events.GROUP_JOIN, (e) => {
      const parts = e.payload.memberAssignment['kjs-e2e'] || [];
      assigned.set(name, parts.length);
    });
    await c.connect();
    await c.subscribe({ topic: 'kjs-e2e', fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        busy.set(name, (busy.get(name) || 0) + 1);
        try {
          // Slow processing, so the leave below happens with records still to consume.
          await new Promise((r) => setTimeout(r, 10));
          await c.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          // Counted once committed: a record whose commit failed is redelivered, which is
          // at-least-once working, not a duplicate delivery.
          seen.push(`${partition}:${message.offset}`);
        } finally {
          busy.set(name, busy.get(name) - 1);
        }
      },
    });
    consumers.push([name, c]);
  }
  // Produce only once the three share the topic: kafkajs caches committed offsets per
  // consumer across generations, so a partition that moved between members while records
  // flowed would be resumed from a stale cached offset (a client quirk, not the broker's).
  const joinDeadline = Date.now() + 60000;
  while (!([...assigned.values()].length === 3 && [...assigned.values()].every((n) => n === 2))) {
    if (Date.now() > joinDeadline) throw new Error(`never balanced: ${JSON.stringify([...assigned])}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < TOTAL; i++) messages.push({ value: String(i), partition: i % PARTS });
  await producer.send({ topic: 'kjs-e2e', messages });
  await producer.disconnect();
  let left = false;
  const deadline = Date.now() + 90000;
  while (Date.now() < deadline && new Set(seen).size < TOTAL) {
    if (!left && seen.length >= TOTAL / 2) {
      // Leave between two records: kafkajs drops a commit issued while it disconnects
      // (it resolves without sending it), which would look like a redelivery.
      const [gone, c] = consumers.pop();
      c.pause([{ topic: 'kjs-e2e' }]);
      while ((busy.get(gone) || 0) > 0) await new Promise((r) => setTimeout(r, 5));
      await c.disconnect();
      assigned.delete(gone);
      left = true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const offsets = await admin.fetchOffsets({ groupId: 'kjs-e2e-group', topics: ['kjs-e2e'] });
  const out = {
    consumed: seen.length,
    distinct: new Set(seen).size,
    left,
    after_leave: [...assigned.values()].sort(),
    committed: offsets[0].partitions.map((p) => [p.partition, Number(p.offset)]).sort((a, b) => a[0] - b[0]),
  };
  for (const [, c] of consumers) await c.disconnect();
  await admin.disconnect();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
