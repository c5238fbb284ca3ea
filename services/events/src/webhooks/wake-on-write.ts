import type { EventStore } from '../storage/event-store.js';

/**
 * The store, calling `wake` after each write that changed something (the trigger logged it in the
 * same transaction), so this instance's webhook sender sends it at once instead of at its next poll.
 */
export function wakeOnWrite(store: EventStore, wake: () => void): EventStore {
  return {
    ...store,
    insert: async (...args) => {
      const written = await store.insert(...args);
      if (written !== undefined) wake();
      return written;
    },
    replace: async (...args) => {
      const written = await store.replace(...args);
      if (written !== undefined) wake();
      return written;
    },
    remove: async (...args) => {
      const removed = await store.remove(...args);
      if (removed) wake();
      return removed;
    },
  };
}
