'use strict';
// Drive ali-ons 3.12.0 (npm, pure JavaScript) for one interop scenario; see ali_runner.py.
//
// Every line on stdout is one JSON object with an "event" key: "sent" / "send_error"
// (produce), "started", "msg" (consume), "error", "done". Nothing else is printed there:
// ali-ons logs go to stderr.
//
//   node ali_driver.js produce --namesrv 127.0.0.1:9876 --topic T --count 10 [--tags A,B]
//        [--props '{"k":"v"}'] [--delay-level 2] [--sharding-keys k1,k2] [--body-size N]
//        [--compressible] [--keys-prefix key-]
//   node ali_driver.js consume --namesrv ... --topic T --group G --expect 10
//        [--expr "A || B" | --sql "a > 1"] [--broadcast] [--from-first] [--idle-ms 1500]
//        [--max-ms 60000]

const crypto = require('crypto');
const { Producer, Consumer, Message } = require('ali-ons');

// ali-ons requires an HTTP client for its address service; with nameSrv set it is never used
const httpclient = { request: async () => { throw new Error('no address service'); } };

function emit(event, fields) {
  process.stdout.write(JSON.stringify(Object.assign({ event }, fields || {})) + '\n');
}

function parseArgs(argv) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const name = a.slice(2);
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        args[name] = true;
      } else {
        args[name] = next;
        i++;
      }
    } else {
      args._.push(a);
    }
  }
  return args;
}

const quietLogger = {
  info() {}, debug() {}, warn() {},
  error(...xs) { process.stderr.write(xs.map(String).join(' ') + '\n'); },
};

function makeBody(i, size, compressible) {
  if (!size) return Buffer.from(`body-${i}`);
  if (compressible) {
    const unit = `compressible-${i}-`;
    return Buffer.from(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));
  }
  return crypto.randomBytes(size); // binary, incompressible: zlib cannot shrink it
}

function sha256(buf) {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

async function produce(args) {
  const producer = new Producer({
    httpclient,
    nameSrv: args.namesrv,
    producerGroup: args.group || 'ali-pg',
    logger: quietLogger,
  });
  await producer.ready();
  const count = parseInt(args.count || '1', 10);
  const tags = args.tags ? String(args.tags).split(',') : [ null ];
  const props = args.props ? JSON.parse(args.props) : {};
  const shardingKeys = args['sharding-keys'] ? String(args['sharding-keys']).split(',') : null;
  const size = parseInt(args['body-size'] || '0', 10);
  for (let i = 0; i < count; i++) {
    const body = makeBody(i, size, !!args.compressible);
    const msg = new Message(args.topic, tags[i % tags.length], body);
    msg.keys = [ `${args['keys-prefix'] || 'key-'}${i}` ];
    Object.assign(msg.properties, props, { seq: String(i) });
    if (args['delay-level']) msg.delayTimeLevel = parseInt(args['delay-level'], 10);
    if (shardingKeys) msg.shardingKey = shardingKeys[i % shardingKeys.length];
    try {
      const r = await producer.send(msg);
      emit('sent', {
        seq: i, status: r.sendStatus, msg_id: r.msgId,
        queue_id: Number(r.messageQueue.queueId), queue_offset: Number(r.queueOffset),
        sharding_key: shardingKeys ? msg.shardingKey : null, body_sha256: sha256(body),
      });
    } catch (err) {
      emit('send_error', { seq: i, error: String(err && err.message || err) });
    }
  }
  await producer.close();
}

function describe(msg) {
  const body = msg.body || Buffer.alloc(0);
  const props = Object.assign({}, msg.properties);
  return {
    topic: msg.topic, tags: msg.tags || '', keys: msg.keys || [], msg_id: msg.msgId,
    seq: props.seq === undefined ? null : parseInt(props.seq, 10), props,
    queue_id: Number(msg.queueId), queue_offset: Number(msg.queueOffset),
    reconsume_times: msg.reconsumeTimes, body_len: body.length, body_sha256: sha256(body),
    born_ts: Number(msg.bornTimestamp), store_ts: Number(msg.storeTimestamp),
  };
}

async function consume(args) {
  const options = {
    httpclient,
    nameSrv: args.namesrv,
    consumerGroup: args.group,
    isBroadcast: !!args.broadcast,
    logger: quietLogger,
    rebalanceInterval: 2000,
    persistConsumerOffsetInterval: 1000,
    brokerSuspendMaxTimeMillis: 2000,
    consumerTimeoutMillisWhenSuspend: 6000,
    pullTimeDelayMillsWhenException: 500,
  };
  if (args['from-first']) options.consumeFromWhere = 'CONSUME_FROM_FIRST_OFFSET';
  if (args['instance-name']) options.instanceName = args['instance-name'];
  const consumer = new Consumer(options);
  consumer.on('error', err => emit('error', { error: String(err && err.message || err) }));
  const expect = parseInt(args.expect || '0', 10);
  const idleMs = parseInt(args['idle-ms'] || '1500', 10);
  const maxMs = parseInt(args['max-ms'] || '60000', 10);
  let received = 0;
  let reached = null;
  let finish;
  const finished = new Promise(resolve => { finish = resolve; });
  const expression = args.sql ? { expressionType: 'SQL92', subString: String(args.sql) } :
    (args.expr ? String(args.expr) : '*');
  consumer.subscribe(args.topic, expression, async msg => {
    emit('msg', describe(msg));
    received++;
    if (expect && received >= expect && !reached) {
      reached = setTimeout(finish, idleMs); // stay a little to see anything unexpected
    }
  });
  await consumer.ready();
  emit('started', {});
  const deadline = setTimeout(finish, maxMs);
  await finished;
  clearTimeout(deadline);
  await consumer.close();
  emit('done', { received });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const command = args._[0];
  if (command === 'produce') await produce(args);
  else if (command === 'consume') await consume(args);
  else throw new Error(`unknown command ${command}`);
  if (command === 'produce') emit('done', {});
}

main().then(() => process.exit(0), err => {
  emit('error', { error: String(err && err.stack || err) });
  process.exit(1);
});
