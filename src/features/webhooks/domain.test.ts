import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterAttempt,
  attemptsMaxFor,
  BOOK_EVENTS,
  bookBody,
  keyBody,
  planDeliveries,
  retryBudget,
  SCHEDULES_MS,
  subscribesTo,
} from './domain.ts';

const T0 = new Date('2026-01-01T00:00:00.000Z');

describe('attempt schedules', () => {
  it('waits 5 s then 30 s on the key channel and gives up after the third failure', () => {
    expect(afterAttempt('key', 1, 3, false, T0)).toEqual({
      status: 'pending',
      nextAttemptAt: new Date(T0.getTime() + 5_000),
    });
    expect(afterAttempt('key', 2, 3, false, T0)).toEqual({
      status: 'pending',
      nextAttemptAt: new Date(T0.getTime() + 30_000),
    });
    expect(afterAttempt('key', 3, 3, false, T0)).toEqual({ status: 'given_up', nextAttemptAt: null });
  });

  it('spreads eight book attempts over about a day', () => {
    const total = SCHEDULES_MS.subscription.reduce((sum, wait) => sum + wait, 0);
    expect(attemptsMaxFor('subscription')).toBe(8);
    expect(total).toBe((1 + 5 + 15 + 60 + 180 + 360 + 720) * 60_000);
  });

  it('delivers on any 2xx-judged attempt and never schedules past the budget', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('key' as const, 'subscription' as const),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (kind, attempt, delivered) => {
          const max = attemptsMaxFor(kind);
          const next = afterAttempt(kind, attempt, max, delivered, T0);
          if (delivered) expect(next.status).toBe('delivered');
          else if (attempt >= max) expect(next.status).toBe('given_up');
          else expect(next.nextAttemptAt!.getTime() - T0.getTime()).toBe(SCHEDULES_MS[kind][attempt]);
        },
      ),
    );
  });

  it('gives a finished delivery exactly one more attempt on retry, and leaves a pending one its schedule', () => {
    expect(retryBudget('given_up', 8, 8)).toBe(9);
    expect(retryBudget('delivered', 1, 8)).toBe(2);
    expect(retryBudget('pending', 3, 8)).toBe(8);
  });
});

describe('fan-out', () => {
  const subscriptions = [
    { id: 'all', spaceId: 's1', events: [] },
    { id: 'out', spaceId: 's1', events: ['money.out'] },
    { id: 'other-space', spaceId: 's2', events: [] },
  ];

  it('sends key events to live keys only and book events to the subscriptions that asked', () => {
    const planned = planDeliveries(
      [
        { id: 'e1', spaceId: 's1', channel: 'key', keyId: 'k-live', event: 'invoice.paid' },
        { id: 'e2', spaceId: 's1', channel: 'key', keyId: 'k-dead', event: 'invoice.paid' },
        { id: 'e3', spaceId: 's1', channel: 'book', keyId: null, event: 'money.in' },
        { id: 'e4', spaceId: 's1', channel: 'book', keyId: null, event: 'money.out' },
      ],
      new Set(['k-live']),
      subscriptions,
    );
    expect(
      planned.map((delivery) => `${delivery.eventId}->${delivery.keyId ?? delivery.subscriptionId}`),
    ).toEqual(['e1->k-live', 'e3->all', 'e4->all', 'e4->out']);
  });

  it('treats an empty event list as every event, including names not known today', () => {
    for (const event of [...BOOK_EVENTS, 'some.future_event']) expect(subscribesTo([], event)).toBe(true);
    expect(subscribesTo(['money.in'], 'money.out')).toBe(false);
  });
});

describe('bodies', () => {
  it('spells the key body without a version and the book body with its envelope first', () => {
    expect(keyBody('invoice.paid', 's1', T0, { total: '10' })).toBe(
      '{"event":"invoice.paid","space_id":"s1","at":"2026-01-01T00:00:00.000Z","data":{"total":"10"}}',
    );
    expect(bookBody('money.in', T0, { amount: '1.00000000', version: 2, at: 'x', event: 'y' })).toBe(
      '{"event":"money.in","version":1,"at":"2026-01-01T00:00:00.000Z","amount":"1.00000000"}',
    );
  });
});
