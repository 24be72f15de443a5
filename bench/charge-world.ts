// The in-process charge benches' common start: a harness on DATABASE_URL, a key's space with a
// USD bank account, the service's deps and caller, and client refs topped up by test card.

import { systemClock } from '../src/core/clock.ts';
import type { AmountE8 } from '../src/core/money.ts';
import { charge } from '../src/features/charges/service.ts';
import { createHarness } from '../test/harness.ts';

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

export async function chargeWorld() {
  const h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const { key } = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
  const deps = { clock: systemClock, publicUrl: 'http://127.0.0.1' };
  const caller = {
    keyId: key.id,
    spaceId: key.spaceId,
    issuerUserId: key.id,
    scopes: ['payments' as const],
    pushSourceId: null,
  };
  /** Tops `ref` up with `topUp` through its top-up request, paid by the test card. */
  const topUp = async (ref: string, amount: AmountE8) => {
    const input = { client_ref: ref, account_id: bank.id, amount: '1' };
    const refused = await charge(h.db, deps, caller, input, { price: amount, topUp: amount });
    const token = (refused.top_up as { token: string }).token;
    const paid = await h.inject({ method: 'POST', url: `/pay/${token}/card`, payload: CARD });
    if (paid.json().status !== 'paid') throw new Error(`top-up not paid: ${paid.body}`);
  };
  return { h, key, bank, deps, caller, topUp };
}
