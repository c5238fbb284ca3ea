import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import type { AlgorithmOp, AlgorithmReply, CounterBackend, CounterOp } from '../backends/types.js';
import { type CallSpan, currentCallSpan, runInCallSpan, type Tracing } from './tracing.js';

/**
 * Tracing plugged in around the core without touching its handlers: a grpc-js server interceptor
 * and an HTTP request-listener wrapper open the call span (continuing the caller's W3C trace
 * context) and run the handler inside it; the backend decorator opens a child span for each
 * round trip to the counter store.
 */

/** gRPC: one SERVER span per call, named after the method (`ShouldRateLimit`), ended with the status. */
export function tracingInterceptor(tracing: Tracing): ServerInterceptor {
  return (method, call) => {
    let span: CallSpan | undefined;
    const name = method.path.slice(method.path.lastIndexOf('/') + 1);
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, mdNext) {
            span = tracing.startCallSpan(name, metadata);
            span.setAttributes({
              'rpc.system': 'grpc',
              'rpc.method': name,
              'rpc.service': method.path.split('/')[1] ?? '',
            });
            mdNext(metadata);
          },
          onReceiveMessage(message, msgNext) {
            if (span) runInCallSpan(span, () => msgNext(message));
            else msgNext(message);
          },
          // grpc-js runs a unary handler from the half-close: the handler starts inside the span.
          onReceiveHalfClose(halfNext) {
            if (span) runInCallSpan(span, halfNext);
            else halfNext();
          },
          onCancel() {
            span?.end(new Error('cancelled'));
          },
        });
      },
      sendStatus(statusObject, statusNext) {
        span?.setAttributes({ 'rpc.grpc.status_code': statusObject.code ?? status.OK });
        span?.end(
          statusObject.code === status.OK
            ? undefined
            : new Error(statusObject.details ?? `status ${statusObject.code}`),
        );
        statusNext(statusObject);
      },
    });
  };
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * HTTP: wraps the server's request listeners so every request under one of `paths` (default
 * `/json`) runs inside a SERVER span named `<METHOD> <path>`, ended when the response is sent.
 */
export function instrumentHttpServer(
  server: HttpServer,
  tracing: Tracing,
  paths: readonly string[] = ['/json'],
): void {
  if (!tracing.enabled) return;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  for (const listener of listeners) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (!paths.includes(path)) return listener(req, res);
      const span = tracing.startCallSpan(`${req.method ?? 'GET'} ${path}`, req.headers);
      span.setAttributes({ 'http.request.method': req.method ?? '', 'url.path': path });
      res.once('finish', () => {
        span.setAttributes({ 'http.response.status_code': res.statusCode });
        span.end(res.statusCode >= 500 ? new Error(`HTTP ${res.statusCode}`) : undefined);
      });
      res.once('close', () => span.end());
      runInCallSpan(span, () => listener(req, res));
    });
  }
}

/** The counter store with a CLIENT span around each round trip made during a traced call. */
export function traceBackend(backend: CounterBackend, tracing: Tracing): CounterBackend {
  if (!tracing.enabled) return backend;
  const traced =
    (op: 'increment' | 'read') =>
    (ops: readonly CounterOp[]): Promise<number[]> => {
      const call = currentCallSpan();
      const run = (): Promise<number[]> => backend[op](ops);
      if (!call) return run();
      return call.child(`backend ${op}`, run, {
        'ratelimit.backend': backend.description,
        'ratelimit.keys': ops.length,
      });
    };
  const admit = (ops: readonly AlgorithmOp[], nowMs: number): Promise<AlgorithmReply[]> => {
    const call = currentCallSpan();
    const run = (): Promise<AlgorithmReply[]> => backend.admit(ops, nowMs);
    if (!call) return run();
    return call.child('backend admit', run, {
      'ratelimit.backend': backend.description,
      'ratelimit.keys': ops.length,
    });
  };
  return {
    get description() {
      return backend.description;
    },
    algorithms: backend.algorithms,
    increment: traced('increment'),
    read: traced('read'),
    admit,
    healthy: () => backend.healthy(),
    onHealthChange: (listener) => backend.onHealthChange(listener),
    ready: () => backend.ready(),
    close: () => backend.close(),
  };
}
