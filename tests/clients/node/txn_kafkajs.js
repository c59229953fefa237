// kafkajs transactions against Cohort: transaction() with send and sendOffsets committed, then
// one aborted; the group's committed offsets read back with the admin client, the output read
// by a read_uncommitted consumer.
//
// usage: node txn_kafkajs.js BOOTSTRAP
// Prints one JSON line; the Rust test (tests/transactions_clients.rs) checks it.
const { Kafka, logLevel } = require('kafkajs');

const [bootstrap] = process.argv.slice(2);
const OUT = 'kjs-txn-out';
const GROUP = 'kjs-eos';
const SOURCE = 'kjs-txn-in';

(async () => {
  const kafka = new Kafka({ clientId: 'cohort-kafkajs-txn', brokers: [bootstrap], logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: OUT, numPartitions: 1 }, { topic: SOURCE, numPartitions: 1 }],
    waitForLeaders: true,
  });

  const producer = kafka.producer({
    transactionalId: 'kjs-txn-1',
    maxInFlightRequests: 1,
    idempotent: true,
  });
  await producer.connect();

  const committed = await producer.transaction();
  await committed.send({ topic: OUT, messages: [0, 1, 2, 3, 4].map((i) => ({ value: `v-${i}` })) });
  await committed.sendOffsets({
    consumerGroupId: GROUP,
    topics: [{ topic: SOURCE, partitions: [{ partition: 0, offset: '5' }] }],
  });
  await committed.commit();

  const aborted = await producer.transaction();
  await aborted.send({ topic: OUT, messages: [{ value: 'gone' }] });
  await aborted.sendOffsets({
    consumerGroupId: GROUP,
    topics: [{ topic: SOURCE, partitions: [{ partition: 0, offset: '9' }] }],
  });
  await aborted.abort();
  await producer.disconnect();

  const offsets = await admin.fetchOffsets({ groupId: GROUP, topics: [SOURCE] });
  const groupOffsets = offsets.flatMap((t) => t.partitions.map((p) => [t.topic, p.partition, p.offset]));

  const consumer = kafka.consumer({ groupId: 'kjs-reader', readUncommitted: true });
  await consumer.connect();
  await consumer.subscribe({ topic: OUT, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen.length} records`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        seen.push([Number(message.offset), message.value.toString()]);
        if (seen.length === 6) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  await admin.disconnect();
  console.log(JSON.stringify({ group_offsets: groupOffsets, seen }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
