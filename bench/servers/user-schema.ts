/**
 * The example user-creation rules as JSON Schema, for the Fastify peers: what rvm's
 * `validate {}` block of the same route checks (ajv-formats' `email`, as Fastify validates it).
 */
export const USER_SCHEMA = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email' },
    name: { type: 'string', minLength: 2 },
    role: { type: 'string', enum: ['user', 'admin'], default: 'user' },
  },
  required: ['email', 'name'],
} as const;
