/**
 * Overall health (spec "States and transitions"): healthy only when every enabled component is
 * healthy. Components: the cache backend, the configuration (only when
 * HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED), and the termination signal.
 */
export type Component = 'backend' | 'config' | 'sigterm';

export class Health {
  private readonly unhealthy = new Set<Component>();
  private readonly listeners: ((healthy: boolean) => void)[] = [];

  set(component: Component, healthy: boolean): void {
    const before = this.healthy();
    if (healthy) this.unhealthy.delete(component);
    else this.unhealthy.add(component);
    const after = this.healthy();
    if (before !== after) for (const l of this.listeners) l(after);
  }

  healthy(): boolean {
    return this.unhealthy.size === 0;
  }

  /** The unhealthy components, for logs and the health body. */
  failing(): Component[] {
    return [...this.unhealthy];
  }

  onChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
  }
}
