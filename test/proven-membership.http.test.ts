import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssertionFailure } from '../src/core/assert.ts';
import { insertNotification } from '../src/features/notifications/index.ts';
import * as requests from '../src/features/payment-requests/service.ts';
import { requireMember } from '../src/features/spaces/index.ts';
import { Member } from '../src/platform/http/member.ts';
import { createHarness, type Harness } from './harness.ts';

// A book page's service takes the viewer's proven membership (a Member the spaces feature makes
// from the members row, read by the shell with the viewer's books) instead of reading the role
// again. These tests hold the other side of that bargain: nothing else can stand in for one, and
// the shell's one statement still carries the right role and the right badge.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h.close());

const deps = () => ({ db: h.db, clock: h.clock, publicUrl: 'http://localhost' });

describe('a proven membership', () => {
  it('is needed to list a book’s payment requests: a look-alike object is refused before any query', async () => {
    const { owner, spaceId } = await h.world();
    const proven = await requireMember(h.db, spaceId, owner.id);
    expect(proven.role).toBe('owner');
    await expect(requests.listRequests(deps(), proven, {})).resolves.toMatchObject({ items: [] });

    const lookAlike = { spaceId, userId: owner.id, role: 'owner' as const };
    // @ts-expect-error a plain object of the same shape is not a Member
    await expect(requests.listRequests(deps(), lookAlike, {})).rejects.toBeInstanceOf(AssertionFailure);
    const cast = lookAlike as unknown as Member;
    await expect(requests.listRequests(deps(), cast, {})).rejects.toBeInstanceOf(AssertionFailure);
    await expect(requests.getRequestInApp(deps(), cast, 'pr_x')).rejects.toBeInstanceOf(AssertionFailure);
    expect(Member.isMember(cast)).toBe(false);
    expect(Member.isMember(proven)).toBe(true);
  });

  it('cannot be had for a book one is not in (not_found), and a viewer’s does not mark a request paid', async () => {
    const { owner, spaceId } = await h.world();
    const stranger = await h.signup('Stranger');
    await expect(requireMember(h.db, spaceId, stranger.id)).rejects.toMatchObject({ code: 'not_found' });
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    const member = await requireMember(h.db, spaceId, viewer.id);
    await expect(
      requests.markPaid(deps(), member, 'pr_x', { amount: '1', reference: 'r' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('is not taken from the address: a page of another person’s book answers 404 and lists nothing', async () => {
    const a = await h.world();
    const b = await h.world();
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/payment-requests`,
      headers: { cookie: `tb_session=${a.owner.token}` },
    });
    expect(page.statusCode).toBe(404);
    expect(page.body).not.toContain('Payment requests</h1>');
  });
});

describe('the shell’s one statement', () => {
  it('counts the viewer’s unread notifications in the open book only, and the badge empties once read', async () => {
    const { owner, spaceId } = await h.world();
    const other = await h.createSpace(owner);
    const colleague = await h.signup('Colleague');
    await h.addMember(owner, spaceId, colleague, 'member');
    const note = (space: string, userId: string) =>
      insertNotification(h.db, {
        spaceId: space,
        userId,
        kind: 'test',
        subjectId: randomUUID(),
        payload: {},
        at: new Date(),
      });
    await note(spaceId, owner.id);
    await note(spaceId, owner.id);
    await note(other, owner.id);
    await note(spaceId, colleague.id);
    const cookie = `tb_session=${owner.token}`;
    const open = (space: string) =>
      h.inject({ method: 'GET', url: `/app/books/${space}/payment-requests`, headers: { cookie } });
    expect((await open(spaceId)).body).toContain('Notifications: 2 unread');
    expect((await open(other)).body).toContain('Notifications: 1 unread');
    const read = await h.inject({
      method: 'POST',
      url: `/app/books/${spaceId}/notifications/read`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${owner.csrf}`,
    });
    expect(read.statusCode).toBe(303);
    expect((await open(spaceId)).body).toContain('Notifications: 0 unread');
    expect((await open(other)).body).toContain('Notifications: 1 unread');
  });

  it('gives a page the viewer’s role in a book older than the switcher’s 50', async () => {
    const { owner, spaceId } = await h.world();
    const viewer = await h.signup('Viewer of many');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    for (let i = 0; i < 50; i++) await h.addMember(owner, await h.createSpace(owner), viewer, 'admin');
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/payment-requests`,
      headers: { cookie: `tb_session=${viewer.token}` },
    });
    expect(page.statusCode).toBe(200);
    const post = await h.inject({
      method: 'POST',
      url: `/app/books/${spaceId}/payment-requests/pr_x/mark-paid`,
      headers: { cookie: `tb_session=${viewer.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${viewer.csrf}&amount=1&reference=r`,
    });
    expect(post.statusCode).toBe(403);
  });
});
