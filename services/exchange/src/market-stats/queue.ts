/**
 * A first-in first-out queue that can also drop from its back (a deque without pushFront), over one
 * array and a head index: O(1) amortised per operation, and the dead prefix is cut off once it is
 * both large and more than half of the array, so memory follows what the queue holds.
 */
export class Deque<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  /** The oldest element; undefined when empty. */
  front(): T | undefined {
    return this.items[this.head];
  }

  /** The newest element; undefined when empty. */
  back(): T | undefined {
    return this.size > 0 ? this.items[this.items.length - 1] : undefined;
  }

  pushBack(item: T): void {
    this.items.push(item);
  }

  popBack(): void {
    if (this.size > 0) this.items.pop();
  }

  popFront(): void {
    if (this.size === 0) return;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
