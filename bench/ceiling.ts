/**
 * The ceiling of `npm run bench`: a bare Fastify server with default options that answers every
 * request with the constant `{"AvailableCredits":100}`. No logging, no hooks, no database: what
 * Node and Fastify cost per request on this machine. A POST or PUT with a JSON body (sms/send,
 * the update scenarios) has that body parsed first, as Fastify's default JSON parser does, so the
 * writes are compared with a comparable request. Prints `listening <port>` when ready.
 */
import Fastify from 'fastify';

const app = Fastify();
app.all('*', () => Promise.resolve({ AvailableCredits: 100 }));
const port = Number(process.argv[2] ?? 0);
await app.listen({ port, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void app.close().then(() => process.exit(0)));
