/**
 * The subscribers of bench/feed.ts, run as a child process (plain JavaScript) so that they share
 * neither the server's event loop nor its CPU accounting. Opens `count` WebSocket connections to the
 * feed and, on command, subscribes them all to the trades and book channels of one market or
 * unsubscribes them. While subscribed, each `trades` frame's arrival time is recorded with the id of
 * its first trade (the oldest of the frame, so the latency counted is the frame's largest); on
 * `report` the parent sends the commit time of every trade and the child answers with the latencies.
 * Times on both sides are `performance.timeOrigin + performance.now()`: the same system clock.
 *
 * Only `sample` of the connections (every count/sample-th) parse their frames (latency, book gaps);
 * the others count what they receive. Parsing every frame of 1,000 connections took this process a
 * whole core (4.0-4.5 s of CPU in a 4 s phase): the delays it measured were its own backlog, and on
 * a 2-core machine it took the CPU the server's order entry then lacked. Real subscribers are not on
 * the server's machine.
 *
 * The counting connections are plain TCP sockets that did the WebSocket handshake themselves
 * (`openCounting`): they read every byte the server writes (so the server sees a reader that keeps
 * up, as with `ws`) and count the frames by their headers, without `ws`'s per-message buffers,
 * UTF-8 check and events. With `ws` on all 900 of them this process still used 1.5-2.2 s of CPU in
 * a 4 s phase, half a core taken from the server on this 2-core machine.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { WebSocket } from 'ws';

const now = () => performance.timeOrigin + performance.now();

/** @type {{ url: string, count: number, market: string, sample?: number }} */
const job = await new Promise((resolve) => process.once('message', resolve));
/** First trade id and arrival time of every trades frame, all subscribers together. */
let ids = [];
let times = [];
let bookFrames = 0;
let gaps = 0;
/** Messages received by the connections that do not parse them. */
let counted = 0;
let recording = false;
/** Per connection: forgets its book's position (a new subscription waits for its snapshot). */
const resets = [];
let cpuStart = process.cpuUsage();

/**
 * Counts the data messages of a server's frame stream (unmasked frames: a 2, 4 or 10 byte header,
 * then the payload) as its bytes come, whatever the chunking.
 */
function frameCounter(onMessage) {
  let skip = 0;
  let rest;
  return (chunk) => {
    let buf = chunk;
    if (rest !== undefined) {
      buf = Buffer.concat([rest, chunk]);
      rest = undefined;
    }
    let i = 0;
    while (i < buf.length) {
      if (skip > 0) {
        const n = Math.min(skip, buf.length - i);
        skip -= n;
        i += n;
        continue;
      }
      const b1 = buf.length - i >= 2 ? buf[i + 1] & 0x7f : -1;
      const header = b1 === 126 ? 4 : b1 === 127 ? 10 : 2;
      if (b1 < 0 || buf.length - i < header) {
        rest = Buffer.from(buf.subarray(i));
        return;
      }
      const b0 = buf[i];
      skip = b1 === 126 ? buf.readUInt16BE(i + 2) : b1 === 127 ? Number(buf.readBigUInt64BE(i + 2)) : b1;
      i += header;
      // A final frame of a text, binary or continued message (not close, ping or pong).
      if ((b0 & 0x80) !== 0 && (b0 & 0x0f) < 3) onMessage();
    }
  };
}

/** A client frame: text, masked as RFC 6455 requires (the bench's frames are under 126 bytes). */
function maskedText(text) {
  const payload = Buffer.from(text);
  if (payload.length > 125) throw new Error('bench frame too long');
  const mask = randomBytes(4);
  const frame = Buffer.alloc(6 + payload.length);
  frame[0] = 0x81;
  frame[1] = 0x80 | payload.length;
  mask.copy(frame, 2);
  for (let i = 0; i < payload.length; i++) frame[6 + i] = payload[i] ^ mask[i % 4];
  return frame;
}

/** A counting connection (see the header): resolves once the server accepted the upgrade. */
function openCounting() {
  const url = new URL(job.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const count = frameCounter(() => {
      if (recording) counted += 1;
    });
    let head = Buffer.alloc(0);
    const onHandshake = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onHandshake);
      if (!head.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
        reject(new Error(`upgrade refused: ${head.subarray(0, head.indexOf('\r\n')).toString()}`));
        socket.destroy();
        return;
      }
      socket.on('data', count);
      if (head.length > end + 4) count(head.subarray(end + 4));
      resolve({
        send: (text) => socket.write(maskedText(text)),
        terminate: () => socket.destroy(),
      });
    };
    socket.on('data', onHandshake);
    socket.once('error', reject);
    socket.once('connect', () =>
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
  });
}

/** Opens one connection and resolves when it is open. */
function open(index) {
  const every = Math.max(1, Math.round(job.count / (job.sample ?? job.count)));
  const parses = index % every === 0;
  if (!parses) return openCounting();
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(job.url);
    let seq;
    resets.push(() => {
      seq = undefined;
    });
    socket.on('message', (data) => {
      if (!recording) return;
      const frame = JSON.parse(data.toString());
      if (frame.event === 'trades') {
        ids.push(frame.trades[0].id);
        times.push(now());
      } else if (frame.event === 'snapshot') {
        seq = frame.seq;
      } else if (frame.event === 'diff') {
        if (seq === undefined) return;
        // Diffs queued before the snapshot and written after it are already in it.
        if (frame.seq <= seq) return;
        bookFrames += 1;
        // The log's numbers: each diff starts (prev_seq) where the frame before it ended.
        if (seq !== undefined && frame.prev_seq > seq) gaps += 1;
        seq = frame.seq;
      }
    });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

const sockets = [];
// A few at a time: the server's accept queue and the handshake cost stay small.
for (let i = 0; i < job.count; i += 50) {
  sockets.push(
    ...(await Promise.all(Array.from({ length: Math.min(50, job.count - i) }, (_, j) => open(i + j)))),
  );
}
process.send({ ready: sockets.length });

process.on('message', (command) => {
  if (command.op === 'subscribe' || command.op === 'unsubscribe') {
    recording = command.op === 'subscribe';
    if (recording) cpuStart = process.cpuUsage();
    // Frames of the subscription before still on their way: each book waits for its next snapshot.
    for (const reset of resets) reset();
    for (const socket of sockets) {
      socket.send(JSON.stringify({ op: command.op, channel: 'trades', market: job.market }));
      socket.send(JSON.stringify({ op: command.op, channel: 'book', market: job.market }));
    }
    process.send({ done: command.op });
  } else if (command.op === 'report') {
    const committed = new Map(command.commits);
    const latencies = [];
    let unknown = 0;
    for (let i = 0; i < ids.length; i += 1) {
      const at = committed.get(ids[i]);
      if (at === undefined) unknown += 1;
      else latencies.push(times[i] - at);
    }
    latencies.sort((a, b) => a - b);
    const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
    const cpu = process.cpuUsage(cpuStart);
    process.send({
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      frames: ids.length,
      unknown,
      bookFrames,
      gaps,
      counted,
      p50: q(0.5),
      p99: q(0.99),
      max: latencies.at(-1) ?? 0,
    });
    ids = [];
    times = [];
    bookFrames = 0;
    gaps = 0;
    counted = 0;
  } else if (command.op === 'close') {
    for (const socket of sockets) socket.terminate();
    process.disconnect();
  }
});
