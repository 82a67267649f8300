/** UUIDv7 ids for the Fastify peers of the records benchmark, made as rvm makes its own. */
import { randomFillSync } from 'node:crypto';

const bytes = Buffer.alloc(16);

/** A UUIDv7 (RFC 9562 §5.7): 48 bits of Unix ms, then random bits with version and variant set. */
export function uuidv7(ms: number): string {
  randomFillSync(bytes, 6, 10);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
