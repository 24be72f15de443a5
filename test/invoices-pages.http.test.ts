import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// The Invoices screens over HTTP: who may open and post what, the New form with its errors in
// place, each action's result or refusal on the document's page, and text that stays text.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const cookie = (user: User) => `tb_session=${user.token}`;
const XSS = '<script>alert(1)</script>';

type Book = { owner: User; spaceId: string; accountId: string };

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  return { owner, spaceId, accountId: account.id };
}

async function createInvoice(b: Book, extra: Record<string, unknown> = {}) {
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${b.spaceId}/invoices`,
    session: b.owner.token,
    payload: {
      account_id: b.accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      line_items: [{ description: 'Design', unit_price: '100', quantity: '2' }],
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; number: string };
}

function page(user: User | null, url: string) {
  return h.inject({ method: 'GET', url, headers: user ? { cookie: cookie(user) } : {} });
}

function post(user: User | null, url: string, fields: Record<string, string>, csrf = true) {
  return h.inject({
    method: 'POST',
    url,
    headers: user ? { ...FORM, cookie: cookie(user) } : FORM,
    payload: form(user && csrf ? { ...fields, _csrf: user.csrf } : fields),
  });
}

describe('who may open and post the Invoices screens', () => {
  let b: Book;
  let viewer: User;
  let stranger: User;
  let gets: string[];
  let posts: [string, Record<string, string>][];

  beforeAll(async () => {
    b = await book();
    viewer = await h.signup('Viewer');
    stranger = await h.signup('Stranger');
    await h.createSpace(stranger);
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    const invoice = await createInvoice(b);
    const at = `/app/books/${b.spaceId}/invoices`;
    gets = [
      at,
      `${at}?kind=quote&status=quote_sent`,
      `${at}/new?kind=invoice`,
      `${at}/${invoice.id}`,
      `${at}/${invoice.id}/pdf`,
    ];
    posts = [
      [
        at,
        {
          kind: 'invoice',
          account_id: b.accountId,
          client_name: 'X',
          due_on: '2099-01-01',
          'line_items.0.description': 'a',
          'line_items.0.unit_price': '1',
        },
      ],
      [`${at}/${invoice.id}/send`, { via: 'none' }],
      [`${at}/${invoice.id}/payments`, { amount: '1' }],
      [`${at}/${invoice.id}/remind`, {}],
      [`${at}/${invoice.id}/write-off`, {}],
      [`${at}/${invoice.id}/void`, {}],
      [`${at}/${invoice.id}/accept`, {}],
      [`${at}/${invoice.id}/decline`, {}],
    ];
  });

  it('opens every screen for the owner, with the security headers', async () => {
    for (const url of gets) {
      const res = await page(b.owner, url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
    }
  });

  it('sends a visitor without a session to log in, for every screen and every write', async () => {
    for (const url of gets) {
      const res = await page(null, url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toBe(`/app/login?next=${encodeURIComponent(url)}`);
    }
    for (const [url, fields] of posts) {
      const res = await post(null, url, fields);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toBe('/app/login');
    }
  });

  it('answers 404 for another person’s book on every screen and every write', async () => {
    for (const url of gets) expect((await page(stranger, url)).statusCode, url).toBe(404);
    for (const [url, fields] of posts) expect((await post(stranger, url, fields)).statusCode, url).toBe(404);
  });

  it('answers 404 for an invoice of another book opened inside one’s own book', async () => {
    const theirs = await book();
    const invoice = await createInvoice(theirs);
    const url = `/app/books/${b.spaceId}/invoices/${invoice.id}`;
    expect((await page(b.owner, url)).statusCode).toBe(404);
    expect((await page(b.owner, `${url}/pdf`)).statusCode).toBe(404);
    expect((await post(b.owner, `${url}/void`, {})).statusCode).toBe(404);
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${theirs.spaceId}/invoices/${invoice.id}`,
      session: theirs.owner.token,
    });
    expect(read.json().status).toBe('draft');
  });

  it('refuses every write without the session’s CSRF token', async () => {
    for (const [url, fields] of posts)
      expect((await post(b.owner, url, fields, false)).statusCode, url).toBe(403);
  });

  it('shows a viewer no write control and refuses their every write, changing nothing', async () => {
    for (const [url, fields] of posts) expect((await post(viewer, url, fields)).statusCode, url).toBe(403);
    const list = await page(viewer, gets[0]!);
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('New invoice');
    const detail = await page(viewer, gets[3]!);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain('method="post" action="/app/books');
    expect(detail.body).toContain('Acme GmbH');
    expect((await page(viewer, gets[2]!)).statusCode).toBe(403);
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/invoices`,
      session: b.owner.token,
    });
    expect(read.json().items).toHaveLength(1);
    expect(read.json().items[0].status).toBe('draft');
  });
});

describe('the New form', () => {
  it('creates an invoice from the lines filled in (blank rows skipped), the client taken from a picked contact', async () => {
    const b = await book();
    const contact = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${b.spaceId}/contacts`,
      session: b.owner.token,
      payload: { name: 'Globex Ltd', email: 'ap@globex.test', country: 'GB' },
    });
    expect(contact.statusCode, contact.body).toBe(201);
    const url = `/app/books/${b.spaceId}/invoices`;
    const res = await post(b.owner, url, {
      kind: 'invoice',
      account_id: b.accountId,
      contact_id: contact.json().id,
      due_on: '2099-03-31',
      'line_items.0.description': 'Design',
      'line_items.0.unit_price': '100',
      'line_items.0.quantity': '2',
      'line_items.1.description': '',
      'line_items.2.description': 'Hosting',
      'line_items.2.unit_price': '9.99',
      'line_items.2.tax_kind': 'standard',
      'line_items.2.tax_rate': '20',
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`^${url}/[0-9a-f-]{36}\\?done=created$`));
    const detail = await page(b.owner, String(res.headers.location));
    expect(detail.body).toContain('Created. Send it when it is ready.');
    expect(detail.body).toContain('Globex Ltd');
    expect(detail.body).toContain('ap@globex.test');
    expect(detail.body).toContain('Hosting');
    const id = String(res.headers.location).split('/').at(-1)!.split('?')[0]!;
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/invoices/${id}`,
      session: b.owner.token,
    });
    expect(read.json()).toMatchObject({
      client_name: 'Globex Ltd',
      client_email: 'ap@globex.test',
      contact_id: contact.json().id,
      total: '211.99000000',
      tax_total: '2.00000000',
    });
    expect(detail.body).toContain('211.99 USD');
  });

  it('shows each refusal in place: a missing date beside its field, a bad price as the sentence, a missing client', async () => {
    const b = await book();
    const url = `/app/books/${b.spaceId}/invoices`;
    const missing = await post(b.owner, url, {
      kind: 'quote',
      account_id: b.accountId,
      client_name: 'Acme',
      'line_items.0.description': 'Design',
      'line_items.0.unit_price': '100',
    });
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toContain('New quote');
    expect(missing.body).toMatch(/id="field-due_on"[^>]*aria-invalid="true"/);
    expect(missing.body).toContain('id="field-due_on-error"');
    expect(missing.body).toContain('value="Design"');
    const price = await post(b.owner, url, {
      kind: 'invoice',
      account_id: b.accountId,
      client_name: 'Acme',
      due_on: '2099-01-01',
      'line_items.0.description': 'Design',
      'line_items.0.unit_price': '12,50',
    });
    expect(price.statusCode).toBe(422);
    expect(price.body).toContain('Line 1: unit_price must be a decimal string');
    const nobody = await post(b.owner, url, {
      kind: 'invoice',
      account_id: b.accountId,
      due_on: '2099-01-01',
      'line_items.0.description': 'Design',
      'line_items.0.unit_price': '1',
    });
    expect(nobody.statusCode).toBe(422);
    expect(nobody.body).toContain('Name the client, or pick a contact.');
    expect(nobody.body).toMatch(/id="field-client_name"[^>]*aria-invalid="true"/);
    const none = await post(b.owner, url, {
      kind: 'invoice',
      account_id: b.accountId,
      client_name: 'A',
      due_on: '2099-01-01',
    });
    expect(none.statusCode).toBe(422);
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/invoices`,
      session: b.owner.token,
    });
    expect(listed.json().items).toEqual([]);
  });

  it('issues a credit note against an open invoice, preselected from that invoice’s page', async () => {
    const b = await book();
    const invoice = await createInvoice(b);
    const at = `/app/books/${b.spaceId}/invoices`;
    await post(b.owner, `${at}/${invoice.id}/send`, { via: 'none' });
    const detail = await page(b.owner, `${at}/${invoice.id}`);
    const link = `${at}/new?kind=credit_note&amp;corrects_invoice_id=${invoice.id}`;
    expect(detail.body).toContain(`href="${link}"`);
    const blank = await page(b.owner, link.replace('&amp;', '&'));
    expect(blank.body).toContain('New credit note');
    expect(blank.body).toMatch(
      new RegExp(`<option value="${invoice.id}" selected>${invoice.number}: Acme GmbH`),
    );
    const res = await post(b.owner, at, {
      kind: 'credit_note',
      account_id: b.accountId,
      corrects_invoice_id: invoice.id,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      'line_items.0.description': 'Goodwill',
      'line_items.0.unit_price': '25',
    });
    expect(res.statusCode, res.body).toBe(303);
    const note = await page(b.owner, String(res.headers.location));
    expect(note.body).toContain('Credit note CN-');
    expect(note.body).toContain('>Issued</span>');
    const credited = await page(b.owner, `${at}/${invoice.id}`);
    expect(credited.body).toMatch(/data-field="credited"><span class="money">25.00 USD/);
    expect(credited.body).toMatch(/data-field="open"><span class="money">175.00 USD/);
  });

  it('answers a form of an unknown kind with its errors, not a failure', async () => {
    const b = await book();
    const res = await post(b.owner, `/app/books/${b.spaceId}/invoices`, {
      kind: 'receipt',
      client_name: 'A',
    });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('New invoice');
  });

  it('adds a line row without creating anything, keeping what was typed', async () => {
    const b = await book();
    const res = await post(b.owner, `/app/books/${b.spaceId}/invoices`, {
      kind: 'invoice',
      client_name: 'Keep me',
      'line_items.0.description': 'First',
      'line_items.3.description': 'Fourth',
      _more: '1',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body.match(/<legend>Line \d+<\/legend>/g)).toHaveLength(4);
    expect(res.body).toContain('value="Keep me"');
    expect(res.body).toContain('value="Fourth"');
    const more = await post(b.owner, `/app/books/${b.spaceId}/invoices`, {
      kind: 'invoice',
      'line_items.0.description': 'a',
      'line_items.1.description': 'b',
      'line_items.2.description': 'c',
      _lines: '5',
      _more: '1',
    });
    expect(more.body.match(/<legend>Line \d+<\/legend>/g)).toHaveLength(6);
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/invoices`,
      session: b.owner.token,
    });
    expect(listed.json().items).toEqual([]);
  });

  it('says what to do next when the book has no account or no invoice yet', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const list = await page(owner, `/app/books/${spaceId}/invoices`);
    expect(list.body).toContain('No invoices, quotes or credit notes yet');
    expect(list.body).toContain('New invoice');
    const quotes = await page(owner, `/app/books/${spaceId}/invoices?kind=quote&status=quote_sent`);
    expect(quotes.body).toContain('No sent quotes');
    const blank = await page(owner, `/app/books/${spaceId}/invoices/new?kind=credit_note`);
    expect(blank.body).toContain('No account yet');
  });
});

describe('a document’s page and its actions', () => {
  it('records a payment and shows the result; an overpayment shows its sentence inside the payment form', async () => {
    const b = await book();
    const invoice = await createInvoice(b);
    const at = `/app/books/${b.spaceId}/invoices/${invoice.id}`;
    const sent = await post(b.owner, `${at}/send`, { via: 'none' });
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe(`${at}?done=marked_sent`);
    const over = await post(b.owner, `${at}/payments`, { amount: '500' });
    expect(over.statusCode).toBe(422);
    const section = over.body.slice(over.body.indexOf('data-action="payments"'));
    expect(section.slice(0, section.indexOf('</section>'))).toContain(
      'The payment is larger than the amount still open on the invoice.',
    );
    expect(over.body).toMatch(/id="payments-amount"[^>]*value="500"/);
    const paid = await post(b.owner, `${at}/payments`, { amount: '200', note: 'wire' });
    expect(paid.headers.location).toBe(`${at}?done=paid`);
    const after = await page(b.owner, String(paid.headers.location));
    expect(after.body).toContain('Payment recorded.');
    expect(after.body).toContain('>Paid</span>');
    expect(after.body).toContain('200.00 USD');
    expect(after.body).not.toContain('data-action="payments"');
  });

  it('refuses sending by email without a mail server, in place, and records a reminder without mail', async () => {
    const b = await book();
    const invoice = await createInvoice(b, { client_email: 'ap@acme.test' });
    const at = `/app/books/${b.spaceId}/invoices/${invoice.id}`;
    const mail = await post(b.owner, `${at}/send`, { via: 'email' });
    expect(mail.statusCode).toBe(422);
    expect(mail.body).toContain('Mail is not configured on this server');
    await post(b.owner, `${at}/send`, { via: 'none' });
    const remind = await post(b.owner, `${at}/remind`, { message: 'Friendly nudge' });
    expect(remind.headers.location).toBe(`${at}?done=reminded_recorded`);
    const after = await page(b.owner, String(remind.headers.location));
    expect(after.body).toContain('Reminder recorded');
    expect(after.body).toContain('recorded, not delivered');
  });

  it('lets an owner write off what is open, and refuses it to a member', async () => {
    const b = await book();
    const member = await h.signup('Member');
    await h.addMember(b.owner, b.spaceId, member, 'member');
    const invoice = await createInvoice(b);
    const at = `/app/books/${b.spaceId}/invoices/${invoice.id}`;
    await post(b.owner, `${at}/send`, { via: 'none' });
    const asMember = await page(member, at);
    expect(asMember.body).toContain('data-action="payments"');
    expect(asMember.body).not.toContain('data-action="write-off"');
    const refused = await post(member, `${at}/write-off`, { reason: 'no' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Only an owner or an admin can do this');
    const done = await post(b.owner, `${at}/write-off`, { reason: 'Client went under' });
    expect(done.headers.location).toBe(`${at}?done=written_off`);
    expect((await page(b.owner, at)).body).toContain('Written off');
  });

  it('accepts a quote from its page and links the invoice made from it; voids another invoice', async () => {
    const b = await book();
    const quote = await createInvoice(b, { kind: 'quote' });
    const at = `/app/books/${b.spaceId}/invoices/${quote.id}`;
    const early = await post(b.owner, `${at}/accept`, {});
    expect(early.statusCode).toBe(422);
    expect(early.body).toContain('it cannot be accepted');
    await post(b.owner, `${at}/send`, { via: 'none' });
    const accepted = await post(b.owner, `${at}/accept`, {});
    expect(accepted.headers.location).toBe(`${at}?done=accepted`);
    const after = await page(b.owner, at);
    expect(after.body).toContain('>Accepted</span>');
    expect(after.body).toMatch(
      /data-field="became"><a href="\/app\/books\/[0-9a-f-]+\/invoices\/[0-9a-f-]{36}">INV-\d{6}<\/a>/,
    );
    const other = await createInvoice(b);
    const voided = await post(b.owner, `/app/books/${b.spaceId}/invoices/${other.id}/void`, {
      reason: 'Duplicate',
    });
    expect(voided.statusCode).toBe(303);
    const gone = await page(b.owner, `/app/books/${b.spaceId}/invoices/${other.id}`);
    expect(gone.body).toContain('>Void</span>');
    expect(gone.body).toContain('Voided: Duplicate');
  });

  it('shows a client and a line named like a script as text, in the list, the page and the New form', async () => {
    const b = await book();
    const contact = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${b.spaceId}/contacts`,
      session: b.owner.token,
      payload: { name: XSS },
    });
    expect(contact.statusCode).toBe(201);
    const invoice = await createInvoice(b, {
      client_name: XSS,
      line_items: [{ description: XSS, unit_price: '1' }],
      notes: XSS,
    });
    for (const url of [
      `/app/books/${b.spaceId}/invoices`,
      `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      `/app/books/${b.spaceId}/invoices/new?kind=invoice`,
    ]) {
      const res = await page(b.owner, url);
      expect(res.statusCode, url).toBe(200);
      // The renderer escapes "<" and "&" in text, which is what keeps a tag from opening.
      expect(res.body, url).toContain('&lt;script>alert(1)&lt;/script>');
      expect(res.body, url).not.toContain(XSS);
    }
  });
});
