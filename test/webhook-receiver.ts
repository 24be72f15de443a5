import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP receiver on loopback for webhook tests. It records every arrival with its raw
// bytes, and the most requests for one event id it ever held open at once.

export type Arrival = {
  eventId: string;
  attempt: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  path: string;
  receivedAt: number;
};

export type ReceiverOptions = {
  /** The status for the n-th arrival (from 1) of an event id; default 200. */
  statusFor?: (arrival: Arrival, nth: number) => number;
  /** Wait before answering (ms). */
  delayMs?: number;
  /** Extra answer headers (a redirect's Location, say). */
  headersFor?: (arrival: Arrival) => Record<string, string>;
  /** Do not answer at all (the sender's timeout test). */
  hang?: boolean;
};

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function startReceiver(options: ReceiverOptions = {}) {
  const arrivals: Arrival[] = [];
  const counts = new Map<string, number>();
  const open = new Map<string, number>();
  let overlapMax = 0;
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      const arrival: Arrival = {
        eventId,
        attempt: Number(req.headers['x-service-delivery-attempt']),
        headers: req.headers,
        body: Buffer.concat(chunks),
        path: req.url ?? '',
        receivedAt: Date.now(),
      };
      arrivals.push(arrival);
      const nth = (counts.get(eventId) ?? 0) + 1;
      counts.set(eventId, nth);
      open.set(eventId, (open.get(eventId) ?? 0) + 1);
      overlapMax = Math.max(overlapMax, open.get(eventId)!);
      if (options.hang) {
        hanging.push(res);
        return;
      }
      const answer = () => {
        open.set(eventId, open.get(eventId)! - 1);
        res.writeHead(options.statusFor?.(arrival, nth) ?? 200, options.headersFor?.(arrival) ?? {});
        res.end('ok');
      };
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    /** The most requests for one event id that were in flight at the same moment. */
    overlapMax: () => overlapMax,
    countFor: (eventId: string) => counts.get(eventId) ?? 0,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
