/**
 * The `core` standard plugin: text, regex, list, object, math, JSON, encodings, time, dates, logging, request and HTTP natives, and the
 * `response.*` helpers, and the `ip`, `time` and `method` guards. Written only against the plugin
 * SDK, like any third-party plugin.
 */
import { definePlugin } from '../../plugins/sdk.js';
import { registerConvert } from './convert.js';
import { registerDates } from './dates.js';
import { registerEncodings } from './encodings.js';
import { registerGuards } from './guards.js';
import { registerHigherOrder } from './higher-order.js';
import { registerHttp } from './http.js';
import { registerJson } from './json.js';
import { registerLists } from './lists.js';
import { registerLog } from './log.js';
import { registerMath } from './math.js';
import { registerObjects } from './objects.js';
import { registerRegex } from './regex.js';
import { registerRequest } from './request.js';
import { registerResponses } from './responses.js';
import { registerSequences } from './sequences.js';
import { registerText } from './text.js';
import { registerTime } from './time.js';

/** The core plugin definition. */
export const core = definePlugin({
  name: 'core',
  version: '1.0.0',
  setup(rvm) {
    registerLists(rvm);
    registerSequences(rvm);
    registerObjects(rvm);
    registerHigherOrder(rvm);
    registerText(rvm);
    registerRegex(rvm);
    registerJson(rvm);
    registerEncodings(rvm);
    registerTime(rvm);
    registerDates(rvm);
    registerConvert(rvm);
    registerMath(rvm);
    registerLog(rvm);
    registerHttp(rvm);
    registerRequest(rvm);
    registerResponses(rvm);
    registerGuards(rvm);
  },
});

export default core;
