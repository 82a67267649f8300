/**
 * The standard record provider's methods, as an app's load gives them to the compiler
 * (CompileOptions.recordMethods): what `T.find(...)` and the others are inferred to answer.
 */
import { recordProvider } from '../../stdlib/records/provider.js';
import { MemoryStore } from '../../stdlib/records/memory.js';

export const RECORD_METHODS = new Map(Object.entries(recordProvider(new MemoryStore()).methods));
