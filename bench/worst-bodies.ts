// Bodies built to be as slow as possible to read, each `size` characters long: long runs of
// zeros before a last digit (once quadratic to trim), megabyte digit strings, escapes, surrogate
// pairs, many keys and many numbers a float cannot hold. Used by bench/parse.ts and by
// test/size-limit.http.test.ts.

export type WorstBody = { name: string; text: string };

/** `head` + `fill` repeated + `tail`, exactly `size` characters (the fill is cut to fit). */
function padded(head: string, fill: string, tail: string, size: number): string {
  const room = size - head.length - tail.length;
  return head + fill.repeat(Math.ceil(room / fill.length)).slice(0, room) + tail;
}

function listOf(item: string, size: number, open = '[', close = ']'): string {
  const count = Math.floor((size - 2) / (item.length + 1));
  const body = Array.from({ length: count }, () => item).join(',');
  return padded(`${open}${body}`, ' ', close, size);
}

export function worstBodies(size: number): WorstBody[] {
  let index = 0;
  const keys: string[] = [];
  for (let length = 2; length < size - 16; index++) {
    const entry = `"k${index}":1`;
    keys.push(entry);
    length += entry.length + 1;
  }
  return [
    { name: 'number-zeros', text: padded('{"amount":1.', '0', '1}', size) },
    { name: 'number-zeros-exponent', text: padded('{"amount":1', '0', '1e-300}', size) },
    { name: 'amount-string-zeros', text: padded('{"amount":"0.', '0', '1"}', size) },
    { name: 'amount-string-whole', text: padded('{"amount":"', '9', '"}', size) },
    { name: 'string-escapes', text: padded('{"name":"', '\\u00e9', '"}', size) },
    { name: 'surrogate-pairs', text: padded('{"name":"', '\\ud83d\\ude00', '"}', size) },
    { name: 'many-keys', text: padded(`{${keys.join(',')}`, ' ', '}', size) },
    { name: 'many-inexact-numbers', text: listOf('0.1000000000000001', size) },
    { name: 'nested-64', text: padded(`${'['.repeat(63)}[`, '1,', `1${']'.repeat(64)}`, size) },
  ];
}
