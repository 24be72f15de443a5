import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';

// No outside I/O inside a database transaction: a mail sent, a node asked or an address fetched
// while rows are locked holds the locks for as long as the peer takes, and a commit that then
// fails leaves the world told of something the books never recorded. The database handle marks
// the async context of every transaction's work; adapters that reach outside refuse to run in a
// marked context, so the mistake fails the first test that takes that path.

const insideTransaction = new AsyncLocalStorage<true>();

type Executor = { execute: (work: (tx: unknown) => Promise<unknown>) => Promise<unknown> };

/** Wraps a transaction builder so its work runs marked; builder methods answer wrapped builders. */
function markedBuilder<B extends object>(builder: B): B {
  return new Proxy(builder, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'execute') {
        return (work: (tx: unknown) => Promise<unknown>) =>
          (target as unknown as Executor).execute((tx) => insideTransaction.run(true, () => work(tx)));
      }
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        return result !== null && typeof result === 'object' && 'execute' in result
          ? markedBuilder(result)
          : result;
      };
    },
  });
}

/** The database whose `transaction()` (and its configured variants) marks the work it runs. */
export function markTransactions<D>(db: Kysely<D>): Kysely<D> {
  return new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'transaction' && typeof value === 'function') {
        return () => markedBuilder(value.call(target));
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A bug: an outside call made from a transaction's work. Never an outcome of the call itself. */
export class CalledInsideTransactionError extends Error {
  override name = 'CalledInsideTransactionError';
}

/** Throws when called from a transaction's work: `what` names the outside call for the bug report. */
export function refuseInsideTransaction(what: string): void {
  if (insideTransaction.getStore() === true)
    throw new CalledInsideTransactionError(
      `Bug: ${what} was called inside a database transaction; do it after commit.`,
    );
}

/** Whether `error`, or any error it wraps (its `cause` chain), is the guard's refusal. */
export function isCalledInsideTransaction(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth += 1) {
    if (current instanceof CalledInsideTransactionError) return true;
    current = current.cause;
  }
  return false;
}
