import { describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../core/roles.ts';
import {
  type ActionSubject,
  actionRefusal,
  allowedActions,
  canMove,
  isCancellable,
  PAYOUT_STATUSES,
  RAILS,
} from './domain.ts';

const ME = 'user-me';
const OTHER = 'user-other';

/** Every payment shape the action rules can tell apart. */
function* subjects(): Generator<ActionSubject> {
  for (const status of PAYOUT_STATUSES)
    for (const rail of RAILS)
      for (const blocked_reason of [null, 'screening_hold', 'policy_max_per_day'])
        for (const maker_id of [ME, OTHER])
          for (const tx_hash of [null, '0xabc'])
            for (const approvedBy of [[], [ME]])
              yield { status, rail, blocked_reason, maker_id, tx_hash, approvedBy };
}

/** The page's rules as they were written out by hand before the domain held them. */
function handWritten(row: ActionSubject, role: Role) {
  const admin = role === 'owner' || role === 'admin';
  const held = row.status === 'blocked' && row.blocked_reason === 'screening_hold';
  const cancellable =
    row.status === 'executing'
      ? row.tx_hash === null
      : row.status === 'awaiting_approval' || row.status === 'approved' || row.status === 'blocked';
  return {
    approve:
      admin && row.status === 'awaiting_approval' && row.maker_id !== ME && !row.approvedBy.includes(ME),
    reject:
      admin &&
      (row.status === 'awaiting_approval' || row.status === 'blocked') &&
      (!held || role === 'owner'),
    release: held && role === 'owner',
    cancel: role !== 'viewer' && (admin || row.maker_id === ME) && cancellable,
    markExecuted: admin && row.rail === 'bank' && row.status === 'executing',
    downloadFile: admin && row.rail === 'bank' && (row.status === 'executing' || row.status === 'executed'),
    send: role !== 'viewer' && row.rail === 'chain' && row.status === 'executing' && row.tx_hash === null,
  };
}

describe('who may do what to a payment', () => {
  it('offers exactly the buttons the hand-written page rules offered, for every role and payment', () => {
    let checked = 0;
    for (const subject of subjects()) {
      for (const role of ROLES) {
        expect(allowedActions(subject, { userId: ME, role }), JSON.stringify({ subject, role })).toEqual(
          handWritten(subject, role),
        );
        checked++;
      }
    }
    expect(checked).toBe(PAYOUT_STATUSES.length * RAILS.length * 3 * 2 * 2 * 2 * ROLES.length);
  });

  it('allows a move only along the transition table', () => {
    for (const subject of subjects()) {
      const owner = { userId: ME, role: 'owner' as const };
      if (!actionRefusal('reject', subject, owner)) expect(canMove(subject.status, 'rejected')).toBe(true);
      if (!actionRefusal('cancel', subject, owner)) expect(canMove(subject.status, 'cancelled')).toBe(true);
      if (!actionRefusal('markExecuted', subject, owner))
        expect(canMove(subject.status, 'executed')).toBe(true);
      if (!actionRefusal('approve', { ...subject, maker_id: OTHER }, owner)) {
        expect(canMove(subject.status, 'approved')).toBe(true);
      }
    }
  });

  it('refuses with the code and sentence the API answers', () => {
    const base: ActionSubject = {
      status: 'awaiting_approval',
      rail: 'bank',
      blocked_reason: null,
      maker_id: OTHER,
      tx_hash: null,
      approvedBy: [],
    };
    expect(actionRefusal('approve', base, { userId: ME, role: 'member' })).toEqual({
      code: 'forbidden',
      detail: 'Only an owner or an admin can approve a payment; you are member.',
    });
    expect(actionRefusal('approve', { ...base, maker_id: ME }, { userId: ME, role: 'admin' })).toMatchObject({
      code: 'maker_cannot_approve',
    });
    expect(
      actionRefusal('approve', { ...base, approvedBy: [ME] }, { userId: ME, role: 'admin' }),
    ).toMatchObject({
      code: 'already_approved',
    });
    expect(actionRefusal('reject', { ...base, status: 'executed' }, { userId: ME, role: 'admin' })).toEqual({
      code: 'payment_state',
      detail: 'A payment that is executed cannot be rejected.',
      details: { status: 'executed' },
    });
    expect(actionRefusal('markExecuted', { ...base, rail: 'book' }, { userId: ME, role: 'owner' })).toEqual({
      code: 'invalid_request',
      detail: 'Only a bank payment is marked executed by hand.',
      field: 'rail',
    });
    expect(actionRefusal('cancel', { ...base, maker_id: ME }, { userId: ME, role: 'viewer' })).toMatchObject({
      code: 'forbidden',
    });
  });

  it('cancels while nothing has left: never once a chain transfer is reported', () => {
    expect(isCancellable('executing', null)).toBe(true);
    expect(isCancellable('executing', '0xabc')).toBe(false);
    expect(PAYOUT_STATUSES.filter((status) => isCancellable(status, null))).toEqual([
      'awaiting_approval',
      'approved',
      'executing',
      'blocked',
    ]);
  });
});
