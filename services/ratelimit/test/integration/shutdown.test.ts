import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/backends/memory.js';
import type { AlgorithmOp, AlgorithmReply, CounterBackend, CounterOp } from '../../src/backends/types.js';
import { callShouldRateLimit } from '../../src/cli/client.js';
import { Code } from '../../src/proto/messages.js';
import { startApp, THREE_PER_MINUTE } from './app-harness.js';

/**
 * An in-process store seen only through its asynchronous interface (no `incrementSync`), whose
 * increments wait until released, to hold calls in flight.
 */
class GatedBackend implements CounterBackend {
  private readonly store = new MemoryBackend();
  readonly description = 'gated in-process store';
  readonly algorithms = this.store.algorithms;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  entered = 0;
  hold(): void {
    this.gate = new Promise((r) => {
      this.open = r;
    });
  }
  release(): void {
    this.open();
  }
  async increment(ops: readonly CounterOp[]): Promise<number[]> {
    this.entered += 1;
    await this.gate;
    return this.store.increment(ops);
  }
  read(ops: readonly CounterOp[]): Promise<number[]> {
    return this.store.read(ops);
  }
  admit(ops: readonly AlgorithmOp[], nowMs: number): Promise<AlgorithmReply[]> {
    return this.store.admit(ops, nowMs);
  }
  healthy(): boolean {
    return true;
  }
  onHealthChange(): void {}
  ready(): Promise<boolean> {
    return this.store.ready();
  }
  close(): Promise<void> {
    return this.store.close();
  }
}

describe('graceful shutdown', () => {
  it('on termination: unhealthy, stops accepting, finishes in-flight gRPC and HTTP calls', async () => {
    const backend = new GatedBackend();
    const s = await startApp({ 'rules.yaml': THREE_PER_MINUTE }, {}, { backend });
    const request = {
      domain: 'example',
      descriptors: [{ entries: [{ key: 'user', value: randomUUID() }] }],
      hitsAddend: 0,
    };
    backend.hold();
    const inFlightGrpc = callShouldRateLimit(s.grpc, request);
    const inFlightHttp = fetch(`${s.http}/json`, { method: 'POST', body: JSON.stringify(request) });
    while (backend.entered < 2) await sleep(10);

    s.app.markTerminating();
    expect(s.app.health.healthy()).toBe(false);
    const closing = s.app.close(5000);
    await sleep(50);
    // New connections are refused while the in-flight calls are still waiting.
    await expect(fetch(`${s.http}/healthcheck`)).rejects.toThrow();
    backend.release();
    expect((await inFlightGrpc).overallCode).toBe(Code.OK);
    const http = await inFlightHttp;
    expect(http.status).toBe(200);
    await http.text();
    await closing;
  });
});
