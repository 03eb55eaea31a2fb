// Drive the official RocketMQ 5 Node.js client (rocketmq-client-nodejs 1.0.8, npm) against a
// gRPC endpoint, for tests/interop/test_rmq5_node.py.
//
//   node node5_driver.js SCENARIO ENDPOINT TOPIC GROUP
//
// Scenarios: "roundtrip" (a producer sends 3 messages with tag, keys and properties; a
// SimpleConsumer receives and acks them) and "fifo" (two message groups of 3 on a FIFO topic;
// the first message's group is held back while it is in flight). Prints JSON lines; a failure
// prints {"event":"error"}; always ends with {"event":"end"}.
'use strict';

const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

const [scenario, endpoints, topic, group] = process.argv.slice(2);
const INVISIBLE_MS = 10000; // the proxy's minimum for a receive
const AWAIT_MS = 5000; // its minimum long polling
const DEADLINE_MS = 30000;

function emit(event, data) {
  process.stdout.write(JSON.stringify({ event, t_ms: Date.now(), ...data }) + '\n');
}

function describe(m) {
  return {
    topic: m.topic,
    body: m.body.toString(),
    tag: m.tag || null,
    keys: [...(m.keys || [])].sort(),
    properties: Object.fromEntries(m.properties || new Map()),
    message_id: m.messageId,
    message_group: m.messageGroup || null,
    delivery_attempt: m.deliveryAttempt,
    corrupted: m.corrupted === true, // set only on a digest mismatch
  };
}

async function withProducer(fn) {
  const producer = new Producer({ endpoints, topic });
  await producer.startup();
  try {
    await fn(producer);
  } finally {
    await producer.shutdown();
  }
}

async function withConsumer(fn) {
  const consumer = new SimpleConsumer({
    endpoints,
    consumerGroup: group,
    subscriptions: new Map().set(topic, '*'),
    awaitDuration: AWAIT_MS,
  });
  await consumer.startup();
  try {
    await fn(consumer);
  } finally {
    await consumer.shutdown();
  }
}

async function receiveUntil(consumer, count) {
  const seen = new Set();
  const end = Date.now() + DEADLINE_MS;
  while (seen.size < count && Date.now() < end) {
    for (const m of await consumer.receive(32, INVISIBLE_MS)) {
      emit('received', describe(m));
      seen.add(m.body.toString());
      await consumer.ack(m);
    }
  }
}

async function roundtrip() {
  await withProducer(async producer => {
    for (let i = 0; i < 3; i++) {
      const receipt = await producer.send({
        topic,
        tag: 'FromNode',
        keys: [`node-key-${i}`],
        properties: new Map([['n', String(i)]]),
        body: Buffer.from(`node-${i}`),
      });
      emit('sent', { body: `node-${i}`, message_id: receipt.messageId });
    }
  });
  await withConsumer(consumer => receiveUntil(consumer, 3));
}

async function fifo() {
  await withProducer(async producer => {
    for (let i = 0; i < 3; i++) {
      for (const g of ['g1', 'g2']) {
        await producer.send({ topic, messageGroup: g, body: Buffer.from(`${g}-${i}`) });
      }
    }
  });
  await withConsumer(async consumer => {
    const first = await consumer.receive(1, INVISIBLE_MS);
    for (const m of first) emit('received', describe(m));
    const held = await consumer.receive(32, INVISIBLE_MS);
    emit('while_in_flight', { bodies: held.map(m => m.body.toString()) });
    for (const m of held) emit('received', describe(m));
    for (const m of [ ...first, ...held ]) await consumer.ack(m);
    await receiveUntil(consumer, 6 - first.length - held.length);
  });
}

const SCENARIOS = { roundtrip, fifo };

(async () => {
  try {
    await SCENARIOS[scenario]();
  } catch (err) {
    emit('error', { error: String(err && err.stack ? err.stack : err) });
  }
  emit('end', {});
  process.exit(0);
})();
