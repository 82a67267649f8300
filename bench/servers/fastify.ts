/**
 * The Fastify peer of the HTTP benchmark: the same three routes as bench/apps/hello, with
 * Fastify's defaults as users run it (logger off). Usage: `node dist/bench/servers/fastify.js PORT`.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });

app.get('/hello', async () => ({ message: 'hello' }));
app.get<{ Params: { id: string } }>('/users/:id', async (request) => ({
  id: Number.parseInt(request.params.id, 10),
  name: `user ${request.params.id}`,
}));
app.post('/echo', async (request) => request.body);

const port = Number(process.argv[2] ?? 3000);
app.listen({ port, host: '127.0.0.1' }).then(
  (url) => console.log(`fastify listening on ${url}`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
