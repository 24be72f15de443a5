import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellerLogoOf } from '../src/features/spaces/index.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { testJpeg, testPng } from './support/images.ts';

// The book's logo: PUT /app/api/spaces/{id}/profile/logo (the image as the body) or the Book
// settings form (multipart); PNG or JPEG up to 1 MB, shrunk to 512 pixels, kept in the
// database, shown on the pay page and the public invoice page, and there for the PDF as bytes.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const logoUrl = (spaceId: string) => `/app/api/spaces/${spaceId}/profile/logo`;

function upload(user: User, spaceId: string, body: Buffer, type = 'image/png') {
  return h.inject({
    method: 'PUT',
    url: logoUrl(spaceId),
    session: user.token,
    headers: { 'content-type': type },
    payload: body,
  });
}

describe("the book's logo", () => {
  it('takes a PNG, shrinks it to 512 pixels, serves it at its public address and hands documents its bytes', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const res = await upload(owner, spaceId, testPng(1600, 400));
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json();
    expect(out).toMatchObject({ content_type: 'image/png', width: 512, height: 128 });
    expect(out.url).toMatch(/^\/logos\/[0-9a-f]{64}$/);
    const served = await h.inject({ method: 'GET', url: out.url });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    const picture = PNG.sync.read(served.rawPayload);
    expect([picture.width, picture.height]).toEqual([512, 128]);
    expect((await h.inject({ method: 'GET', url: logoUrl(spaceId), session: owner.token })).json()).toEqual(
      out,
    );
    const forPdf = await sellerLogoOf(h.db, spaceId);
    expect(forPdf?.contentType).toBe('image/png');
    expect(forPdf?.bytes.equals(served.rawPayload)).toBe(true);
  });

  it('takes a JPEG whatever type the sender names, and replaces the logo the book had', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const first = (await upload(owner, spaceId, testPng(64, 64))).json();
    const second = await upload(owner, spaceId, testJpeg(300, 100), 'application/octet-stream');
    expect(second.json()).toMatchObject({ content_type: 'image/jpeg', width: 300, height: 100 });
    expect((await h.inject({ method: 'GET', url: first.url })).statusCode).toBe(404);
    expect((await h.inject({ method: 'GET', url: second.json().url })).headers['content-type']).toBe(
      'image/jpeg',
    );
  });

  it('refuses SVG and other formats (422), more than 1 MB (413), and a member who does not administer (403)', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const svg = await upload(
      owner,
      spaceId,
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>'),
      'image/svg+xml',
    );
    expect(svg.statusCode).toBe(422);
    expect(svg.json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'logo', reason: 'type' },
    });
    const gif = await upload(owner, spaceId, Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;'), 'image/gif');
    expect(gif.statusCode).toBe(422);
    const big = Buffer.concat([testPng(8, 8), Buffer.alloc(1024 * 1024)]);
    expect((await upload(owner, spaceId, big)).statusCode).toBe(413);
    const member = await h.signup('Member');
    await h.addMember(owner, spaceId, member, 'member');
    expect((await upload(member, spaceId, testPng(8, 8))).statusCode).toBe(403);
    expect((await h.inject({ method: 'GET', url: logoUrl(spaceId), session: owner.token })).statusCode).toBe(
      404,
    );
  });

  it('shows on the pay page and the public invoice page, and goes away when removed', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
    const { url } = (await upload(owner, spaceId, testPng(200, 80))).json();
    const invoice = (
      await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/invoices`,
        session: owner.token,
        payload: {
          account_id: account.id,
          client_name: 'Acme',
          due_on: '2099-01-31',
          line_items: [{ description: 'Work', unit_price: '10' }],
        },
      })
    ).json();
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${invoice.id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    const invoicePage = await h.inject({ method: 'GET', url: `/i/${invoice.token}` });
    expect(invoicePage.body).toContain(`<img id="seller-logo" src="${url}"`);
    const pay = await h.inject({
      method: 'POST',
      url: `/i/${invoice.token}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(pay.statusCode).toBe(303);
    const payPage = await h.inject({ method: 'GET', url: String(pay.headers.location) });
    expect(payPage.body).toContain(`<img id="seller-logo" src="${url}"`);
    const removed = await h.inject({ method: 'DELETE', url: logoUrl(spaceId), session: owner.token });
    expect(removed.json()).toEqual({ removed: true });
    expect((await h.inject({ method: 'GET', url: `/i/${invoice.token}` })).body).not.toContain('seller-logo');
  });

  it('is uploaded from Book settings as a multipart form, and a refusal is shown in place', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const post = (file: Buffer, name: string, type: string) => {
      const form = new FormData();
      form.append('_csrf', owner.csrf);
      form.append('logo', new Blob([new Uint8Array(file)], { type }), name);
      const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
      return request.arrayBuffer().then((body) =>
        h.inject({
          method: 'POST',
          url: `/app/books/${spaceId}/settings/logo`,
          headers: {
            cookie: `tb_session=${owner.token}`,
            'content-type': String(request.headers.get('content-type')),
          },
          payload: Buffer.from(body),
        }),
      );
    };
    const saved = await post(testPng(700, 700), 'logo.png', 'image/png');
    expect(saved.statusCode, saved.body).toBe(303);
    const settings = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/settings`,
      headers: { cookie: `tb_session=${owner.token}` },
    });
    expect(settings.body).toMatch(/<img id="logo-image" src="\/logos\/[0-9a-f]{64}"/);
    const refused = await post(Buffer.from('<svg/>'), 'logo.svg', 'image/svg+xml');
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('The logo must be a PNG or a JPEG image');
  });
});
