/**
 * Core time natives: now and timestamp.
 */
import type { PluginApi } from '../../plugins/sdk.js';

/** Registers now and timestamp. */
export function registerTime(rvm: PluginApi): void {
  rvm.native('now', () => new Date().toISOString(), {
    params: [],
    returns: 'text',
    doc: "The current time as ISO-8601 UTC text with milliseconds, e.g. '2025-01-31T09:30:00.000Z'.",
  });

  rvm.native('timestamp', () => Date.now() / 1000, {
    params: [],
    returns: 'number',
    doc: 'The current time as Unix seconds, a number with millisecond precision (e.g. 1738315800.123).',
  });
}
