// Produces, consumes in a group and commits with kafkajs over SASL_SSL (SCRAM), then reads the
// group's committed offset back with the admin client.
//
// usage: node secure_kafkajs.js BOOTSTRAP TOPIC GROUP COUNT MECHANISM USER PASSWORD CAFILE
// Prints one JSON object: {"acked": n, "consumed": n, "committed": "offset"}.
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [bootstrap, topic, groupId, countArg, mechanism, username, password, cafile] =
    process.argv.slice(2);
  const count = Number(countArg);
  const kafka = new Kafka({
    brokers: [bootstrap],
    clientId: 'kjs-secure',
    logLevel: logLevel.NOTHING,
    ssl: { ca: [fs.readFileSync(cafile, 'utf-8')] },
    sasl: { mechanism: mechanism.toLowerCase(), username, password },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ key: `k${i}`, value: `v${i}` });
  const sent = await producer.send({ topic, messages });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let consumed = 0;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed only ${consumed}`)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value.toString() !== `v${consumed}`) reject(new Error(`record ${consumed}`));
        consumed += 1;
        if (consumed === count) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
  await admin.disconnect();
  console.log(JSON.stringify({
    acked: sent.length ? count : 0,
    consumed,
    committed: offsets[0].partitions[0].offset,
  }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
