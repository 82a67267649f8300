/**
 * A third party's answer read under a ceiling: the WhatsApp Cloud API, the sign-in providers and
 * `http_fetch` must not hold in memory whole what a misbehaving or hostile server sends. One
 * reader for undici's bodies and fetch's alike (both are async iterables).
 */

/**
 * The bytes of `body` when there are at most `maxBytes` of them, else null: reading stops at the
 * chunk that passes the cap, and leaving the loop ends the body (undici's is destroyed, a fetch
 * body cancelled), so the rest is never received into memory. `onChunk` is told each chunk's
 * size before it is kept (to charge it to a budget); what it throws ends the read the same way.
 */
export async function readCapped(body: AsyncIterable<Uint8Array>, maxBytes: number, onChunk?: (bytes: number) => void): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) return null;
    onChunk?.(chunk.byteLength);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
