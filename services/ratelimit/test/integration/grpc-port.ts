import * as grpc from '@grpc/grpc-js';
import { findListeningPort } from '@platform/testkit/listening';

/** Resolves when the gRPC health service on `port` answers (rejects on any failure, within 3 s). */
export function grpcHealthCheck(
  port: number,
  creds: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
): Promise<Buffer> {
  const client = new grpc.Client(`127.0.0.1:${port}`, creds);
  const id = (b: Buffer): Buffer => b;
  return new Promise<Buffer>((resolve, reject) =>
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      id,
      id,
      Buffer.alloc(0),
      { deadline: Date.now() + 3_000 },
      (error, response) => {
        client.close();
        if (error) reject(error);
        else resolve(response ?? Buffer.alloc(0));
      },
    ),
  );
}

/**
 * The port of a service process started with GRPC_PORT=0: the one of its listening ports (other than
 * `exclude`, e.g. its HTTP port) whose gRPC health check answers.
 */
export function findGrpcPort(
  proc: { pid: number | undefined },
  exclude: readonly number[],
  creds?: grpc.ChannelCredentials,
): Promise<number> {
  return findListeningPort(proc.pid ?? -1, async (port) => (await grpcHealthCheck(port, creds)).length > 0, {
    exclude,
  });
}
