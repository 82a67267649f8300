/**
 * The Fastify + better-sqlite3 peer of the records benchmark: the routes of bench/apps/records
 * written as a Fastify user would, with hand-written prepared statements on a SQLite file set up
 * as rvm sets up its own (WAL, synchronous=NORMAL, a busy timeout, writes in BEGIN IMMEDIATE),
 * the same table and indexes as rvm makes (`email` unique; `role`, then creation order, for the
 * listing; creation order for the table), UUIDv7 ids and ISO-8601 time
 * stamps, and the same validation (ajv through Fastify's schema, ajv-formats' `email`).
 * Usage: `node dist/bench/servers/fastify-records.js PORT DATABASE_FILE`.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { USER_SCHEMA } from './user-schema.js';
import { uuidv7 } from './uuidv7.js';

const port = Number(process.argv[2] ?? 3000);
const file = process.argv[3];
if (!file) throw new Error('usage: fastify-records.js PORT DATABASE_FILE');

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.exec(`
  CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'user',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS users_email_unique ON users (email);
  CREATE INDEX IF NOT EXISTS users_role ON users (role, created_at, id);
  CREATE INDEX IF NOT EXISTS users_created_at ON users (created_at, id);
`);

const insert = db.prepare('INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
const byId = db.prepare('SELECT id, email, name, role, created_at, updated_at FROM users WHERE id = ?');
const byRole = db.prepare('SELECT id, email, name, role, created_at, updated_at FROM users WHERE role = ? ORDER BY created_at DESC, id DESC LIMIT 20');
const create = db.transaction((row: unknown[]) => insert.run(...row));

const app = Fastify({ logger: false });

app.get('/hello', async () => ({ message: 'hello' }));

app.post<{ Body: { email: string; name: string; role: string } }>('/api/users', { schema: { body: USER_SCHEMA } }, async (request, reply) => {
  const { email, name, role } = request.body;
  const ms = Date.now();
  const now = new Date(ms).toISOString();
  const id = uuidv7(ms);
  try {
    create.immediate([id, email, name, role, now, now]);
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return reply.code(409).send({ code: 'conflict' });
    throw error;
  }
  return reply.code(201).send({ id, email, name, role, created_at: now, updated_at: now });
});

app.get<{ Params: { id: string } }>('/api/users/:id', async (request, reply) => {
  const user = byId.get(request.params.id.toLowerCase());
  if (user === undefined) return reply.code(404).send({ code: 'not_found', message: 'no such user' });
  return user;
});

app.get<{ Querystring: { role?: string } }>('/api/users', async (request) => byRole.all(request.query.role ?? 'user'));

app.listen({ port, host: '127.0.0.1' }).then(
  (url) => console.log(`fastify-records listening on ${url}`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
