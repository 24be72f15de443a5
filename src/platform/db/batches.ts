/**
 * Runs `batch` (which handles at most `size` rows and answers how many it handled) again and
 * again until one comes back short, so every row due when it started is handled; answers the
 * total. Each call is its own statement or transaction, so no lock is held across batches.
 */
export async function untilShort(size: number, batch: (size: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await batch(size);
    total += handled;
    if (handled < size) return total;
  }
}
