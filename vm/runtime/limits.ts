/**
 * The isolation limits (spec/language.md §7.3) that an app can set in `rvm.config.json` under `limits`,
 * with their defaults and the reason for each (config.ts reads them). The VM's own limits (fuel,
 * call depth) and the per-request body limit live beside what they bound.
 */
import type { Limits } from '../host/context.js';
import { CPU_BUDGET_MS, TIME_SLICE_MS } from '../interp/budget.js';

/** Default body limit (`bodyLimit`): generous for JSON APIs, small enough that buffering it is harmless. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** From arrival to answer, awaits included: longer than any honest queue or outbound call, short enough to free the slot. */
export const DEFAULT_WALL_TIME_MS = 30_000;
/**
 * Requests being served at once. A synchronous request holds its slot for one tick; what fills
 * the slots is requests waiting on bodies, queues or outbound calls. Far above what 2 cores serve
 * honestly, far below what exhausts the heap.
 */
export const DEFAULT_MAX_IN_FLIGHT = 1024;
/**
 * Request bodies in memory at once, raw and parsed (admission.ts charges them). Measured with the
 * reliability bench: at 256 MiB, 300 parallel 1 MiB bodies of empty objects took the process to
 * 1.2 GB (V8 grows its heap ahead of collection) and a probe's p99 to 740 ms; at 128 MiB, 780 MB and
 * 225 ms. It still admits over a thousand 4 KiB JSON bodies at once.
 */
export const DEFAULT_MAX_BODY_MEMORY = 128 * 1024 * 1024;
/**
 * Query results and large response bodies in memory at once (records charge rows as they are
 * read, the HTTP writer a body until it is sent). A sibling of the body budget rather than a share
 * of it: a flood of bodies and a flood of large listings each cost their own requests a 503, and
 * together the two bound what requests hold. Rows are charged about twice their text (the rows and
 * the JSON built of them, stdlib/records/ops.ts): 128 MiB holds a listing of 1,000 rows of 64 KB;
 * one of 1,000 rows of 100 KB is refused part-way, at ~640 rows (the reliability bench's attack).
 */
export const DEFAULT_MAX_RESULT_MEMORY = 128 * 1024 * 1024;
/**
 * The largest response body a handler may answer. More is a listing without paging or a bug; its
 * text is built whole in memory (and in the client's). 16 MiB is 1,000 records of 16 KB.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Open connections: half of a common 20,000 file-descriptor limit, leaving the rest to files, databases and logs. */
export const DEFAULT_MAX_CONNECTIONS = 10_000;
/**
 * Open connections from one address: a browser opens 6, a load balancer or a NAT of users more;
 * 256 leaves every other client the remaining connections (a trusted proxy is not counted).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;
/** Open server-sent event streams from one address: a few tabs, not every slot of the server. */
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 10;

/** Every limit at its default. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  cpuTimeMs: CPU_BUDGET_MS,
  timeSliceMs: TIME_SLICE_MS,
  wallTimeMs: DEFAULT_WALL_TIME_MS,
  maxInFlight: DEFAULT_MAX_IN_FLIGHT,
  maxBodyMemory: DEFAULT_MAX_BODY_MEMORY,
  maxResultMemory: DEFAULT_MAX_RESULT_MEMORY,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  maxConnectionsPerClient: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  maxStreamsPerClient: DEFAULT_MAX_STREAMS_PER_CLIENT,
});
