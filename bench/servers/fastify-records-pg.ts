/**
 * The Fastify + pg peer of the records benchmark on PostgreSQL: the routes of bench/apps/records
 * written as a Fastify user would, with hand-written queries on a `pg` Pool (named, so each
 * connection prepares them once, as rvm's store does), the table rvm makes for `type User` on
 * PostgreSQL (`uuid` id, `text COLLATE "C"` fields, `role` defaulting to 'user', `timestamptz`
 * time stamps; `email` unique, `role` indexed), UUIDv7 ids and ISO-8601 time stamps, and the same
 * validation (ajv through Fastify's schema, ajv-formats' `email`).
 * Usage: `node dist/bench/servers/fastify-records-pg.js PORT DATABASE_URL POOL_SIZE`.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { USER_SCHEMA } from './user-schema.js';
import { uuidv7 } from './uuidv7.js';

const port = Number(process.argv[2] ?? 3000);
const url = process.argv[3];
const poolSize = Number(process.argv[4]);
if (!url || !(poolSize >= 1)) throw new Error('usage: fastify-records-pg.js PORT DATABASE_URL POOL_SIZE');

const pool = new pg.Pool({ connectionString: url, max: poolSize });
// An idle connection that breaks must not crash the server; the next query reports it.
pool.on('error', () => {});

await pool.query(`
  CREATE TABLE IF NOT EXISTS users (
    id uuid PRIMARY KEY NOT NULL,
    email text COLLATE "C",
    name text COLLATE "C",
    role text COLLATE "C" DEFAULT 'user',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS users_email_key ON users (email);
  CREATE INDEX IF NOT EXISTS users_role_idx ON users (role, created_at, id);
  CREATE INDEX IF NOT EXISTS users_created_at_idx ON users (created_at, id);
`);

const COLUMNS = 'id, email, name, role, created_at, updated_at';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const app = Fastify({ logger: false });

app.get('/hello', async () => ({ message: 'hello' }));

app.post<{ Body: { email: string; name: string; role: string } }>('/api/users', { schema: { body: USER_SCHEMA } }, async (request, reply) => {
  const { email, name, role } = request.body;
  const ms = Date.now();
  const now = new Date(ms).toISOString();
  const id = uuidv7(ms);
  try {
    await pool.query({
      name: 'insert-user',
      text: `INSERT INTO users (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`,
      values: [id, email, name, role, now, now],
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505') return reply.code(409).send({ code: 'conflict' });
    throw error;
  }
  return reply.code(201).send({ id, email, name, role, created_at: now, updated_at: now });
});

app.get<{ Params: { id: string } }>('/api/users/:id', async (request, reply) => {
  const id = request.params.id;
  const found = UUID.test(id) ? await pool.query({ name: 'user-by-id', text: `SELECT ${COLUMNS} FROM users WHERE id = $1`, values: [id] }) : null;
  if (!found || found.rows.length === 0) return reply.code(404).send({ code: 'not_found', message: 'no such user' });
  return found.rows[0];
});

app.get<{ Querystring: { role?: string } }>('/api/users', async (request) => {
  const found = await pool.query({
    name: 'users-by-role',
    text: `SELECT ${COLUMNS} FROM users WHERE role = $1 ORDER BY created_at DESC, id DESC LIMIT 20`,
    values: [request.query.role ?? 'user'],
  });
  return found.rows;
});

app.listen({ port, host: '127.0.0.1' }).then(
  (listening) => console.log(`fastify-records-pg listening on ${listening}`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
