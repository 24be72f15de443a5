import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from './public-address.ts';
import { pinnedLookup, SafeSender } from './safe-post.ts';

// The SSRF table (issue 4): every way of spelling or resolving to an internal address is refused
// before a byte is sent. A live server on loopback proves it: the loopback spellings point at its
// port, and it must see no request at all.

const DNS: Record<string, string[]> = {
  'public.example': ['93.184.215.14'],
  'internal.example': ['10.0.0.8'],
  'mixed.example': ['93.184.215.14', '192.168.1.4'],
  'loopback6.example': ['::1'],
  'mapped.example': ['::ffff:10.1.2.3'],
  'metadata.example': ['169.254.169.254'],
  'cgnat.example': ['100.64.0.9'],
};
const lookups: string[] = [];
const stubResolver: Resolver = async (hostname) => {
  lookups.push(hostname);
  const found = DNS[hostname];
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

let server: Server;
let port = 0;
let hits = 0;
let answer: { status: number; headers?: Record<string, string>; body?: Buffer } = { status: 200 };

beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const production = () => new SafeSender({ policy: { allowPrivate: false }, resolver: stubResolver });
const body = Buffer.from('{"event":"test"}');

describe('SafeSender refuses internal targets before sending (production policy)', () => {
  const table = (p: number) => [
    ['loopback v4', `http://127.0.0.1:${p}/`],
    ['loopback v4 over https', `https://127.0.0.1:${p}/`],
    ['loopback v6', `https://[::1]:${p}/`],
    ['short form 127.1', `https://127.1:${p}/`],
    ['the number 0', `https://0:${p}/`],
    ['octal 017700000001', `https://017700000001:${p}/`],
    ['hex 0x7f.0.0.1', `https://0x7f.0.0.1:${p}/`],
    ['decimal 2130706433', `https://2130706433:${p}/`],
    ['RFC 1918 10/8', 'https://10.1.2.3/'],
    ['RFC 1918 172.16/12', 'https://172.16.5.4/'],
    ['RFC 1918 192.168/16', 'https://192.168.0.1/'],
    ['carrier-grade NAT 100.64/10', 'https://100.64.0.1/'],
    ['cloud metadata 169.254.169.254', 'https://169.254.169.254/latest/meta-data/'],
    ['IPv4-mapped loopback ::ffff:127.0.0.1', `https://[::ffff:127.0.0.1]:${p}/`],
    ['unique local fc00::/7', 'https://[fc00::1]/'],
    ['unique local fd00::/8', 'https://[fd12:3456::1]/'],
    ['link-local fe80::/10', 'https://[fe80::1]/'],
    ['a name resolving to a private address', 'https://internal.example/'],
    ['a name resolving to public and private addresses', 'https://mixed.example/'],
    ['a name resolving to ::1', `https://loopback6.example:${p}/`],
    ['a name resolving to an IPv4-mapped private address', 'https://mapped.example/'],
    ['a name resolving to the metadata address', 'https://metadata.example/'],
    ['a name resolving to 100.64/10', 'https://cgnat.example/'],
    ['a name that does not resolve', 'https://nowhere.example/'],
    ['plain http to a public host', 'http://public.example/'],
    ['credentials in the URL', 'https://user:pw@public.example/'],
  ];

  it.each(table(0))('refuses %s', async (_label, url) => {
    const sender = production();
    const result = await sender.post(url.replace(':0/', `:${port}/`), body, {});
    await sender.close();
    expect(result.kind, JSON.stringify(result)).toBe('refused');
  });

  it('sent nothing to the live loopback server while refusing all of the above', () => {
    expect(hits).toBe(0);
  });

  it('refuses the metadata address even with the development switch on', async () => {
    const sender = new SafeSender({ policy: { allowPrivate: true }, resolver: stubResolver });
    expect((await sender.post('http://169.254.169.254/', body, {})).kind).toBe('refused');
    expect((await sender.post('http://metadata.example/', body, {})).kind).toBe('refused');
    await sender.close();
  });

  it('resolves the name again at every send', async () => {
    const sender = production();
    lookups.length = 0;
    await sender.post('https://internal.example/', body, {});
    await sender.post('https://internal.example/', body, {});
    await sender.close();
    expect(lookups).toEqual(['internal.example', 'internal.example']);
  });
});

describe('SafeSender with the development switch (loopback admitted)', () => {
  it('does not follow a redirect to a private address: the 302 is the answer', async () => {
    const sender = new SafeSender({ policy: { allowPrivate: true }, resolver: stubResolver });
    answer = { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } };
    hits = 0;
    const result = await sender.post(`http://127.0.0.1:${port}/hook`, body, {});
    await sender.close();
    expect(result).toMatchObject({ kind: 'answered', status: 302 });
    expect(hits).toBe(1);
  });

  it('reads at most 64 KiB of an answer', async () => {
    const sender = new SafeSender({ policy: { allowPrivate: true }, resolver: stubResolver });
    answer = { status: 200, body: Buffer.alloc(1024 * 1024, 0x61) };
    const result = await sender.post(`http://127.0.0.1:${port}/big`, body, {});
    await sender.close();
    expect(result.kind).toBe('answered');
    expect(result.kind === 'answered' && result.body.length).toBe(64 * 1024);
  });

  it('reports a refused connection as a failure, not a throw', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const sender = new SafeSender({ policy: { allowPrivate: true }, resolver: stubResolver });
    const result = await sender.post(`http://127.0.0.1:${deadPort}/`, body, {});
    await sender.close();
    expect(result.kind).toBe('failed');
    expect(result.kind === 'failed' && result.error).toContain('ECONNREFUSED');
  });
});

describe('pinnedLookup', () => {
  it('answers only the checked name, with only the checked addresses, in both callback forms', () => {
    const lookup = pinnedLookup('hooks.example', ['93.184.215.14', '2606:2800:220:1::1']);
    const calls: unknown[][] = [];
    lookup('hooks.example', { all: true }, (...args) => calls.push(args));
    lookup('hooks.example', {}, (...args) => calls.push(args));
    lookup('other.example', {}, (...args) => calls.push(args));
    expect(calls[0]).toEqual([
      null,
      [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    ]);
    expect(calls[1]).toEqual([null, '93.184.215.14', 4]);
    expect((calls[2]![0] as { code: string }).code).toBe('ENOTFOUND');
  });
});

describe('SafeSender over TLS with a pinned address', () => {
  const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

  it.skipIf(!hasOpenssl)(
    'sends SNI and checks the certificate against the name, not the address',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tollbook-tls-'));
      const keyFile = join(dir, 'key.pem');
      const certFile = join(dir, 'cert.pem');
      const made = spawnSync('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=hooks.test',
        '-addext',
        'subjectAltName=DNS:hooks.test',
      ]);
      expect(made.status, made.stderr.toString()).toBe(0);
      const cert = readFileSync(certFile);
      const names: string[] = [];
      const hosts: string[] = [];
      const tlsServer = createHttpsServer({ key: readFileSync(keyFile), cert }, (req, res) => {
        hosts.push(String(req.headers.host));
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      tlsServer.on('secureConnection', (socket: TLSSocket) => names.push(String(socket.servername)));
      await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
      const tlsPort = (tlsServer.address() as AddressInfo).port;
      // Neither name exists in real DNS: only the pinned lookup can reach the server.
      const resolver: Resolver = async (name) =>
        name === 'hooks.test' || name === 'other.test' ? ['127.0.0.1'] : [];
      const sender = new SafeSender({ policy: { allowPrivate: true }, resolver, tls: { ca: cert } });
      try {
        const good = await sender.post(`https://hooks.test:${tlsPort}/hook`, body, {});
        expect(good).toMatchObject({ kind: 'answered', status: 204 });
        expect(names).toEqual(['hooks.test']);
        expect(hosts).toEqual([`hooks.test:${tlsPort}`]);
        // The same address under a name the certificate does not carry is refused by TLS.
        const wrong = await sender.post(`https://other.test:${tlsPort}/hook`, body, {});
        expect(wrong.kind).toBe('failed');
        expect(wrong.kind === 'failed' && wrong.error).toMatch(/altname|certificate|hostname/i);
      } finally {
        await sender.close();
        tlsServer.closeAllConnections();
        await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
      }
    },
  );
});
