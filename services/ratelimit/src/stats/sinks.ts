import { createSocket, type Socket } from 'node:dgram';
import type { StatsSettings } from '../settings/observability.js';
import type { StatsRegistry } from './registry.js';
import { formatStat, type StatsdFormat } from './statsd-format.js';

/** Where flushed statsd lines go. */
export interface StatsSink {
  send(lines: readonly string[]): void;
  close(): Promise<void>;
}

/** A conservative UDP payload that fits an Ethernet MTU with IP/UDP headers. */
const MAX_PACKET_BYTES = 1_432;

/** Sends lines to a statsd server over UDP, several lines per datagram separated by newlines. */
export class UdpStatsSink implements StatsSink {
  private readonly socket: Socket;
  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.socket = createSocket('udp4');
    // A statsd server that is down must not crash the service: datagrams are fire-and-forget.
    this.socket.on('error', () => {});
    this.socket.unref();
  }

  send(lines: readonly string[]): void {
    let packet = '';
    for (const line of lines) {
      if (packet.length > 0 && Buffer.byteLength(packet) + 1 + Buffer.byteLength(line) > MAX_PACKET_BYTES) {
        this.socket.send(packet, this.port, this.host);
        packet = '';
      }
      packet = packet.length > 0 ? `${packet}\n${line}` : line;
    }
    if (packet.length > 0) this.socket.send(packet, this.port, this.host);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** `USE_STATSD=false`: the same lines, one per line, to standard output (or any writer). */
export class StdoutStatsSink implements StatsSink {
  constructor(private readonly write: (text: string) => void) {}
  send(lines: readonly string[]): void {
    if (lines.length > 0) this.write(`${lines.join('\n')}\n`);
  }
  async close(): Promise<void> {}
}

/**
 * Reads the registry every flush: counters are sent as the difference since the previous flush
 * (unchanged ones are skipped), gauges as their current value, timers as every sample recorded
 * since the previous flush, in milliseconds.
 */
export class StatsFlusher {
  private readonly sent = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: StatsRegistry,
    private readonly sink: StatsSink,
    private readonly format: StatsdFormat,
  ) {}

  flush(): void {
    const snapshot = this.registry.snapshot();
    const lines: string[] = [];
    for (const [name, total] of snapshot.counters) {
      const delta = total - (this.sent.get(name) ?? 0);
      if (delta === 0) continue;
      this.sent.set(name, total);
      lines.push(formatStat(name, delta, 'c', this.format));
    }
    for (const [name, value] of snapshot.gauges) lines.push(formatStat(name, value, 'g', this.format));
    for (const [name, samples] of this.registry.drainTimers()) {
      for (const ms of samples) lines.push(formatStat(name, ms, 'ms', this.format));
    }
    this.sink.send(lines);
  }

  start(intervalMs: number): void {
    this.stop();
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export interface RunningStats {
  readonly flusher: StatsFlusher | undefined;
  /** Stops the loop, sends a last flush and closes the sink. */
  close(): Promise<void>;
}

/**
 * Starts the flush loop chosen by the settings: nothing when `DISABLE_STATS`, statsd over UDP when
 * `USE_STATSD` (plain or extended), standard output otherwise.
 */
export function startStatsSinks(
  settings: StatsSettings,
  registry: StatsRegistry,
  writeStdout: (text: string) => void = (text) => process.stdout.write(text),
): RunningStats {
  if (settings.disabled) return { flusher: undefined, close: async () => {} };
  const sink: StatsSink = settings.useStatsd
    ? new UdpStatsSink(settings.statsdHost, settings.statsdPort)
    : new StdoutStatsSink(writeStdout);
  const flusher = new StatsFlusher(registry, sink, {
    extended: settings.useExtStatsd,
    extraTags: settings.extraTags,
    mogrifiers: settings.useExtStatsd ? settings.mogrifiers : [],
  });
  flusher.start(settings.flushIntervalMs);
  return {
    flusher,
    async close() {
      flusher.stop();
      flusher.flush();
      await sink.close();
    },
  };
}
