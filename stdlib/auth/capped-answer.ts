/**
 * A third party's answer read under a ceiling: the WhatsApp Cloud API and the sign-in providers
 * answer a few KiB, and one that sends more (a misbehaving or hostile endpoint) must not be held
 * in memory whole. One reader for undici's bodies and fetch's alike (both are async iterables).
 */

/**
 * The bytes of `body` when there are at most `maxBytes` of them, else null: reading stops at the
 * chunk that passes the cap, and leaving the loop ends the body (undici's is destroyed, a fetch
 * body cancelled), so the rest is never received into memory.
 */
export async function readCapped(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
