import dgram from 'node:dgram';

/**
 * A minimal UDP DNS responder for tests: answers SRV and A questions from mutable tables, NXDOMAIN
 * for unknown names, SERVFAIL while `failing` is set. Enough for Node's resolver (c-ares).
 */
export interface SrvRecord {
  target: string;
  port: number;
  priority?: number;
  weight?: number;
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for Resolver#setServers / MEMSTORE_SRV_DNS_SERVERS. */
  readonly address: string;
  readonly srv: Map<string, SrvRecord[]>;
  readonly a: Map<string, string>;
  failing: boolean;
  /** SRV questions answered so far. */
  srvQueries: number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_SRV = 33;

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.');
  return Buffer.concat([
    ...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'ascii')])),
    Buffer.from([0]),
  ]);
}

function readName(msg: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let pos = offset;
  for (;;) {
    const len = msg[pos]!;
    if (len === 0) return { name: labels.join('.').toLowerCase(), next: pos + 1 };
    labels.push(msg.toString('ascii', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
}

function answer(type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // pointer to the question name
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(1, 6); // ttl 1 s
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket = dgram.createSocket('udp4');
  const server: TestDnsServer = {
    address: '',
    srv: new Map(),
    a: new Map(),
    failing: false,
    srvQueries: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, peer) => {
    const { name, next } = readName(msg, 12);
    const qtype = msg.readUInt16BE(next);
    const question = msg.subarray(12, next + 4);
    const answers: Buffer[] = [];
    let rcode = 0;
    if (qtype === TYPE_SRV) server.srvQueries += 1;
    if (server.failing) rcode = 2;
    else if (qtype === TYPE_SRV && server.srv.has(name)) {
      for (const r of server.srv.get(name)!) {
        const fixed = Buffer.alloc(6);
        fixed.writeUInt16BE(r.priority ?? 10, 0);
        fixed.writeUInt16BE(r.weight ?? 10, 2);
        fixed.writeUInt16BE(r.port, 4);
        answers.push(answer(TYPE_SRV, Buffer.concat([fixed, encodeName(r.target)])));
      }
    } else if (qtype === TYPE_A && server.a.has(name)) {
      answers.push(answer(TYPE_A, Buffer.from(server.a.get(name)!.split('.').map(Number))));
    } else if (!server.srv.has(name) && !server.a.has(name)) rcode = 3;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, question, ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return Object.assign(server, { address: `127.0.0.1:${socket.address().port}` });
}
