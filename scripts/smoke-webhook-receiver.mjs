// The production smoke pass's webhook receiver: listens on 127.0.0.1, checks each delivery's
// X-Service-Signature (HMAC-SHA256 of the raw body) and its Standard Webhooks headers with the
// `standardwebhooks` package, and writes the first delivery that passes both to a file as JSON.
// A delivery failing either check is answered 400 and recorded beside it, so the pass can say why.
//
//   node scripts/smoke-webhook-receiver.mjs PORT SECRET OUT_FILE
// OUT_FILE.listening appears once it listens.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const [port, secret, outFile] = process.argv.slice(2);
if (!port || !secret || !outFile) {
  process.stderr.write('usage: smoke-webhook-receiver.mjs PORT SECRET OUT_FILE\n');
  process.exit(2);
}

function serviceSignatureHolds(body, header) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(String(header ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function standardSignatureHolds(body, headers) {
  try {
    new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(headers['webhook-signature'] ?? ''),
    });
    return true;
  } catch {
    return false;
  }
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const service = serviceSignatureHolds(body, request.headers['x-service-signature']);
    const standard = standardSignatureHolds(body, request.headers);
    if (!service || !standard) {
      writeFileSync(`${outFile}.refused`, JSON.stringify({ service, standard, body }));
      response.writeHead(400).end();
      return;
    }
    writeFileSync(outFile, JSON.stringify({ event: request.headers['x-service-event'], body: JSON.parse(body) }));
    response.writeHead(204).end();
  });
});
server.listen(Number(port), '127.0.0.1', () => writeFileSync(`${outFile}.listening`, port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
