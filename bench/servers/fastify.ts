/**
 * The Fastify peer of the HTTP benchmark: the same routes as bench/apps/hello, with Fastify's
 * defaults as users run it (logger off; its ajv validation, which includes ajv-formats, for the
 * body of POST /api/users). Usage: `node dist/bench/servers/fastify.js PORT`.
 */
import Fastify from 'fastify';
import { USER_SCHEMA } from './user-schema.js';

const app = Fastify({ logger: false });

app.get('/hello', async () => ({ message: 'hello' }));
app.get<{ Params: { id: string } }>('/users/:id', async (request) => ({
  id: Number.parseInt(request.params.id, 10),
  name: `user ${request.params.id}`,
}));
app.post('/echo', async (request) => request.body);

app.post<{ Body: { email: string; name: string; role: string } }>('/api/users', { schema: { body: USER_SCHEMA } }, async (request, reply) => {
  const { email, name, role } = request.body;
  return reply.code(201).send({ email, name, role });
});

const port = Number(process.argv[2] ?? 3000);
app.listen({ port, host: '127.0.0.1' }).then(
  (url) => console.log(`fastify listening on ${url}`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
