// Group commit for hot per-request queries. Calls made while a batch is in flight wait and
// go together in the next one, so under load one round trip serves many requests and the
// database sees a handful of statements per tick instead of one per request.

export type BatchRunner<In, Out> = (items: In[]) => Promise<Out[]>;

export function createBatcher<In, Out>(
  run: BatchRunner<In, Out>,
  maxBatch = 1000,
): (item: In) => Promise<Out> {
  type Pending = { item: In; resolve: (value: Out) => void; reject: (error: unknown) => void };
  let queue: Pending[] = [];
  let inFlight = false;

  const flush = async (): Promise<void> => {
    if (inFlight || queue.length === 0) return;
    inFlight = true;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    try {
      const results = await run(batch.map((pending) => pending.item));
      batch.forEach((pending, index) => {
        pending.resolve(results[index] as Out);
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      inFlight = false;
      if (queue.length > 0) setImmediate(() => void flush());
    }
  };

  return (item: In) =>
    new Promise<Out>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (queue.length === 1 && !inFlight) setImmediate(() => void flush());
    });
}
