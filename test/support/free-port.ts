/** A free TCP port on loopback, for the servers tests and benchmarks start. */
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1, chosen by the kernel (listen on port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
