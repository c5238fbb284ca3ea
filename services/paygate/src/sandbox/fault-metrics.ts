import { Counter, type Registry } from 'prom-client';

/** A fault the sandbox applied to one callback attempt (src/sandbox/faults.ts names them the same). */
export type AppliedFault = 'drop' | 'delay' | 'reorder' | 'duplicate' | 'rotated';

/** Counts one applied fault of a merchant's callback. */
export type FaultCount = (merchantId: string, fault: AppliedFault) => void;

/**
 * `paygate_sandbox_callback_faults_total{merchant, fault}`: the faults the callback sandbox applied,
 * counted where each is applied (a drop when the attempt is not sent, a duplicate when the second
 * copy goes out, a rotated signature when a secret in its grace period signed the request), so an
 * operator of a test deployment sees the sandbox at work and at what rate. Only test merchants with
 * `callback_faults` ever move it.
 */
export function registerSandboxFaultMetric(registry: Registry): FaultCount {
  const faults = new Counter({
    name: 'paygate_sandbox_callback_faults_total',
    help: 'Faults the callback sandbox applied to the callbacks of test merchants, by merchant and fault.',
    labelNames: ['merchant', 'fault'] as const,
    registers: [registry],
  });
  return (merchant, fault) => faults.inc({ merchant, fault });
}
