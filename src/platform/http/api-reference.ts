import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

// The API reference at /docs: Scalar's page and its script, reading /openapi.json. Scalar's
// plugin carries its browser bundle inside its own module, 16.5 MB of heap once imported (the
// module's source and the bundle as a string), which no other route needs. So the module is
// imported on the first request for /docs, into a Fastify instance of its own that serves only
// the reference; the server's routes answer by handing the request to it. A server nobody reads
// the reference on never holds it.

/** The reference's routes (Scalar's): the prefix redirects to its slash form, which is the page. */
const ROUTES = ['/docs', '/docs/', '/docs/js/scalar.js'] as const;

/** What Scalar's answer carries over to the server's reply; the server's hooks add the rest. */
const CARRIED_HEADERS = ['content-type', 'location'] as const;

async function buildReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const reference = Fastify({ logger: false });
  await reference.register(scalar, {
    routePrefix: '/docs',
    // A self-hosted product's docs call nothing outside this server: the system's fonts instead
    // of Scalar's font host, no telemetry, no AI agent or MCP panel, no button to Scalar's client, no
    // developer toolbar (its Share and Deploy go to Scalar's services).
    configuration: {
      url: '/openapi.json',
      title: 'Tollbook API',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      hideClientButton: true,
      showDeveloperTools: 'never',
    },
  });
  await reference.ready();
  return reference;
}

export function registerApiReference(app: FastifyInstance) {
  let reference: Promise<FastifyInstance> | undefined;
  let built: FastifyInstance | undefined;
  const loaded = () => {
    reference ??= buildReference().then(
      (docs) => {
        built = docs;
        return docs;
      },
      (error: unknown) => {
        // A failed import is tried again by the next request rather than kept as the answer.
        reference = undefined;
        throw error;
      },
    );
    return reference;
  };
  app.addHook('onClose', async () => {
    await built?.close();
  });
  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    const docs = await loaded();
    const inner = await docs.inject({ method: 'GET', url: request.url });
    reply.code(inner.statusCode);
    for (const name of CARRIED_HEADERS) {
      const value = inner.headers[name];
      if (typeof value === 'string') reply.header(name, value);
    }
    return reply.send(inner.rawPayload);
  };
  for (const url of ROUTES) app.get(url, { schema: { hide: true } }, answer);
}
