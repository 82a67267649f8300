/**
 * The `headers` standard plugin (spec/plugins/headers.md): security_headers, set_csp, set_cors_headers,
 * set_hsts and x_frame_options, acting on the response being built.
 */
import { definePlugin } from '../../plugins/sdk.js';
import { registerCors } from './cors.js';
import { registerCsp } from './csp.js';
import { registerSecurityHeaders } from './security.js';

/** The headers plugin definition. */
export const headers = definePlugin({
  name: 'headers',
  version: '1.0.0',
  dependencies: ['core'],
  setup(rvm) {
    registerSecurityHeaders(rvm);
    registerCsp(rvm);
    registerCors(rvm);
  },
});

export default headers;
