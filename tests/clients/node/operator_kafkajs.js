// A kafkajs consumer group: joins group GROUP on TOPIC, reads COUNT records, commits them,
// and leaves. Prints one JSON line with what it committed.
//
// usage: node operator_kafkajs.js BOOTSTRAP GROUP TOPIC COUNT
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, group, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);

async function main() {
  const kafka = new Kafka({ clientId: "kjs-client", brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  const committed = {};
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), 30000);
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (seen >= count) return;
          seen += 1;
          const next = (BigInt(message.offset) + 1n).toString();
          await consumer.commitOffsets([{ topic, partition, offset: next }]);
          committed[`${topic}:${partition}`] = Number(next);
          if (seen === count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  console.log(JSON.stringify({ committed }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
