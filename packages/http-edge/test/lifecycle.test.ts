import { describe, expect, it } from 'vitest';
import { closeInOrder } from '../src/lifecycle.js';

describe('closeInOrder', () => {
  it('closes the steps in order, the members of one step at once', async () => {
    const events: string[] = [];
    const closable = (name: string, ms: number) => ({
      async close() {
        events.push(`${name} start`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        events.push(`${name} end`);
      },
    });
    const exporter = {
      async shutdown() {
        events.push('exporter');
      },
    };
    await closeInOrder([closable('app', 20), closable('metrics', 5)], exporter)();
    expect(events).toEqual(['app start', 'metrics start', 'metrics end', 'app end', 'exporter']);
  });

  it('stops at a step that throws, and rejects with its error', async () => {
    const events: string[] = [];
    const failing = {
      async close() {
        throw new Error('pool gone');
      },
    };
    const later = {
      async close() {
        events.push('later');
      },
    };
    await expect(closeInOrder(failing, later)()).rejects.toThrow('pool gone');
    expect(events).toEqual([]);
  });
});
