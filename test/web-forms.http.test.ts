import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { Type } from '../src/platform/http/schema-kit.ts';
import { typedRoutes } from '../src/platform/http/typed.ts';
import { formRoute, type Posted, runForm } from '../src/platform/web/forms.ts';
import { createHarness, type Harness, type User } from './harness.ts';

// A form route (platform/web/forms.ts): only the form's own fields are answered in place; the
// address and the query are checked before the handler runs, as on every page route, so the
// handler may trust them; the posted body is typed as checked only once runForm opened it.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function post(user: User | null, url: string, fields: Record<string, string>) {
  return h.inject({
    method: 'POST',
    url,
    headers: user ? { ...FORM, cookie: `tb_session=${user.token}` } : FORM,
    payload: new URLSearchParams(user ? { _csrf: user.csrf, ...fields } : fields).toString(),
  });
}

describe('a form route', () => {
  it('answers a field that fails its schema in place (422), beside the field, keeping what was typed', async () => {
    const owner = await h.signup('Owner');
    const bookId = await h.createSpace(owner);
    const res = await post(owner, `/app/books/${bookId}/members`, { email: 'not-mail', role: 'viewer' });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('id="field-email-error"');
    expect(res.body).toContain('value="not-mail"');
  });

  it('refuses an address its schema does not take with the 400 page, never the form in place', async () => {
    const owner = await h.signup('Owner');
    const bookId = await h.createSpace(owner);
    const res = await post(owner, `/app/books/${bookId}/members/not-a-uuid`, { role: 'viewer' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This address is not one the app knows.');
    expect(res.body).not.toContain('field-role-error');
  });

  it('checks the query even when the body failed first, so a bad query is never shown as the form', async () => {
    const tooLong = `/app/${'x'.repeat(2001)}`;
    const both = await post(null, `/app/login?next=${encodeURIComponent(tooLong)}`, { email: 'a@b.example' });
    expect(both.statusCode).toBe(400);
    expect(both.body).toContain('This address is not one the app knows.');
    const bodyOnly = await post(null, '/app/login?next=%2Fapp%2Fbooks', { email: 'a@b.example' });
    expect(bodyOnly.statusCode).toBe(422);
    expect(bodyOnly.body).toContain('action="/app/login?next=%2Fapp%2Fbooks"');
  });

  it('types the posted body as unreadable until runForm opens it, and opens it only when its schema passed', async () => {
    const app = Fastify();
    const params = Type.Object({ thing: Type.String() });
    const body = Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Integer() });
    typedRoutes(app).post('/things/:thing', formRoute({ params, body }), async (request) => {
      expectTypeOf(request.params).toEqualTypeOf<{ thing: string }>();
      expectTypeOf(request.body).toEqualTypeOf<Posted<{ name: string; count: number }>>();
      // @ts-expect-error: a posted field is not readable before its schema is known to have passed.
      void request.body.name;
      const outcome = await runForm(request, async ({ body }) => {
        expectTypeOf(body).toEqualTypeOf<{ name: string; count: number }>();
        return `${request.params.thing}: ${body.count} × ${body.name}`;
      });
      return outcome.ok ? { value: outcome.value } : { status: outcome.status, form: outcome.form };
    });
    const good = await app.inject({ method: 'POST', url: '/things/t1', payload: { name: 'pen', count: 3 } });
    expect(good.json()).toEqual({ value: 't1: 3 × pen' });
    const bad = await app.inject({ method: 'POST', url: '/things/t1', payload: { name: '', count: 3 } });
    expect(bad.json()).toMatchObject({
      status: 422,
      form: { values: { name: '', count: 3 }, errors: { name: expect.any(String) } },
    });
    await app.close();
  });
});
