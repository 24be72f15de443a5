import type { RawBuilder } from 'kysely';

/**
 * A row one feature writes inside another feature's statement (a charge row inside its ledger
 * entry's). Given the host statement's step that holds the host row only when it was written
 * (a CTE name), it answers an `INSERT … SELECT … FROM` that step, so the rider's row exists
 * exactly when the host row does and the pair costs one round trip. Its text must not depend on
 * values, so the host statement stays prepared.
 */
export type Rider = (step: RawBuilder<unknown>) => RawBuilder<unknown>;
