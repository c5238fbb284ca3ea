import * as grpc from '@grpc/grpc-js';
import { responseToJson } from '../proto/json.js';
import type { RateLimitRequest, RateLimitResponse, RequestDescriptor } from '../proto/messages.js';
import { RATE_LIMIT_SERVICE } from '../transport/grpc-services.js';

/**
 * Command-line client (spec "Command line client"): sends one ShouldRateLimit call and prints the
 * response as protobuf-JSON.
 *   tsx src/cli/client.ts -dial_string localhost:8081 -domain example -descriptors user=alice [-descriptors k=v,k2=v2]
 * Exit status: 0 when the call succeeded (whatever the decision), 1 on a call error, 2 on bad flags.
 */
export interface ClientFlags {
  dialString: string;
  domain: string;
  descriptors: RequestDescriptor[];
}

/** Go `flag`-style parsing: `-name value`, `-name=value`, `--name value`; `-descriptors` repeats. */
export function parseClientFlags(argv: readonly string[]): ClientFlags {
  const flags: ClientFlags = { dialString: 'localhost:8081', domain: '', descriptors: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?([a-z_]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unexpected argument '${arg}'`);
    const name = m[1]!;
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`flag needs an argument: -${name}`);
    switch (name) {
      case 'dial_string':
        flags.dialString = value;
        break;
      case 'domain':
        flags.domain = value;
        break;
      case 'descriptors':
        flags.descriptors.push({
          entries: value.split(',').map((pair) => {
            const eq = pair.indexOf('=');
            if (eq < 0) throw new Error(`descriptor entry '${pair}' is not name=value`);
            return { key: pair.slice(0, eq), value: pair.slice(eq + 1) };
          }),
        });
        break;
      default:
        throw new Error(`flag provided but not defined: -${name}`);
    }
  }
  return flags;
}

export function callShouldRateLimit(
  dialString: string,
  request: RateLimitRequest,
  timeoutMs = 5000,
): Promise<RateLimitResponse> {
  const Client = grpc.makeGenericClientConstructor(RATE_LIMIT_SERVICE, 'RateLimitService');
  const client = new Client(dialString, grpc.credentials.createInsecure());
  return new Promise<RateLimitResponse>((resolve, reject) => {
    // The generic client's methods are added at run time by name.
    const typed = client as unknown as {
      ShouldRateLimit(
        r: RateLimitRequest,
        o: grpc.CallOptions,
        cb: grpc.requestCallback<RateLimitResponse>,
      ): void;
    };
    typed.ShouldRateLimit(request, { deadline: Date.now() + timeoutMs }, (error, response) => {
      client.close();
      if (error || !response) reject(error ?? new Error('empty response'));
      else resolve(response);
    });
  });
}

async function main(): Promise<void> {
  let flags: ClientFlags;
  try {
    flags = parseClientFlags(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(
      `${(error as Error).message}\nusage: client -dial_string host:port -domain D -descriptors k=v[,k2=v2] [-descriptors ...]\n`,
    );
    process.exit(2);
  }
  process.stdout.write(`domain: ${flags.domain}\n`);
  for (const d of flags.descriptors) {
    process.stdout.write(`descriptor: ${d.entries.map((e) => `${e.key}=${e.value}`).join(',')}\n`);
  }
  try {
    const response = await callShouldRateLimit(flags.dialString, {
      domain: flags.domain,
      descriptors: flags.descriptors,
      hitsAddend: 0,
    });
    process.stdout.write(`response: ${responseToJson(response)}\n`);
  } catch (error) {
    process.stderr.write(`request error: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) void main();
