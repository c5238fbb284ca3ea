/**
 * Issue 43's figure read as its words say it: the streams "with 10 % amends and mixed time-in-force
 * keep >= 0.9x of today's ops/s", today being the engine before that work. `bench:engine` prints
 * the variant against the plain stream on today's engine (both sides of that ratio got the same
 * engine); this prints today's engine on the variant stream against an earlier engine on the plain
 * stream, loaded from another checkout:
 *
 *   git worktree add /tmp/engine-before f07c69c~1   # the engine before issue 43 (time in force, amend)
 *   npx tsx bench/engine-against.ts --engine /tmp/engine-before/services/exchange/src/matching/engine.ts \
 *     [--stream shallow|deep --pairs 6 --commands 1000000 --levels 0]
 *
 * Each side runs in a child process of its own (its JIT sees its own stream's shapes only, as in
 * bench:engine), the sides alternate, and each child warms up on a stream of another seed, then
 * measures 3 runs over the same commands: ops per CPU second, its median. Printed: every pair's
 * ratio (today's on the variant / the earlier on the plain) and their median, with the load.
 */
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { median } from '@platform/testkit/stats';
import { type BookEngineClass, ours } from './engine-adapters.js';
import { medianRun, throughput } from './measure.js';
import { DEEP, generate, SHALLOW } from './streams.js';
import { numberOption, stringOption } from './support/options.js';

const enginePath = stringOption('engine', '');
const streamName = stringOption('stream', 'shallow');
const pairs = numberOption('pairs', 6);
const commands = numberOption('commands', 1_000_000);
const levelsEvery = numberOption('levels', 0);
const shape = streamName === 'deep' ? DEEP : SHALLOW;

interface Side {
  readonly side: 'before' | 'today';
}

/** In a child: one side's median ops per CPU second, sent to the parent. */
async function child(side: Side['side']): Promise<void> {
  const EngineClass =
    side === 'today'
      ? undefined
      : // A module of another checkout: its shape is checked by use (apply, followLevels...), not by type.
        ((await import(pathToFileURL(enginePath).href)) as { MatchingEngine: BookEngineClass })
          .MatchingEngine;
  const variant = side === 'today';
  const stream = generate(shape, commands, 7, variant);
  const warm = generate(shape, 300_000, 8, variant);
  const build = () => ours(levelsEvery, EngineClass);
  throughput(warm, warm.length, build);
  const runs = [0, 1, 2].map(() => throughput(stream, commands, build));
  const refused = runs.reduce((n, r) => n + r.refused, 0);
  process.send?.({ opsPerSecond: medianRun(runs).opsPerSecond, refused });
}

function runSide(side: Side['side']): Promise<{ opsPerSecond: number; refused: number }> {
  return new Promise((resolve, reject) => {
    const proc = fork(process.argv[1]!, [...process.argv.slice(2), '--child', side], {
      serialization: 'advanced',
      stdio: 'inherit',
    });
    let answer: { opsPerSecond: number; refused: number } | undefined;
    proc.once('message', (m) => {
      answer = m as { opsPerSecond: number; refused: number };
    });
    proc.once('error', reject);
    proc.once('exit', (code) =>
      answer !== undefined && code === 0 ? resolve(answer) : reject(new Error(`child exited with ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  if (enginePath === '') {
    console.error(
      '--engine <path to an earlier checkout: services/exchange/src/matching/engine.ts> is required',
    );
    process.exit(2);
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(
    `${streamName} stream, ${commands} commands: today's engine on the issue 43 variant against ${enginePath} on the plain stream, ${pairs} alternated pairs (load ${load()})`,
  );
  const ratios: number[] = [];
  for (let k = 0; k < pairs; k++) {
    // Alternate which side goes first, so a drift of the machine's speed falls on both.
    const order: Side['side'][] = k % 2 === 0 ? ['before', 'today'] : ['today', 'before'];
    const got: Record<string, { opsPerSecond: number; refused: number }> = {};
    for (const side of order) got[side] = await runSide(side);
    const before = got.before!;
    const today = got.today!;
    const ratio = today.opsPerSecond / before.opsPerSecond;
    ratios.push(ratio);
    console.log(
      `  pair ${k + 1}: before ${(before.opsPerSecond / 1e6).toFixed(2)}M (refused ${before.refused}), today on the variant ${(today.opsPerSecond / 1e6).toFixed(2)}M (refused ${today.refused}): ${ratio.toFixed(2)}x`,
    );
  }
  console.log(
    `  today's on the variant / before on the plain, median of ${pairs} pairs: ${median(ratios).toFixed(2)}x (target >= 0.9x; load ${load()})`,
  );
}

const at = process.argv.indexOf('--child');
if (at > 0) await child(process.argv[at + 1] as Side['side']);
else await main();
