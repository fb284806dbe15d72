import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

test('frames back to back, split anywhere, come out whole', () => {
  const wire = '{"Data":"aGk=","Offset":2}{}{"Index":3,"Events":[{"Topic":"Job","Payload":{"a":"}{"}}]}';
  for (let cut = 0; cut <= wire.length; cut++) {
    const d = new JsonFrameDecoder();
    const out = [...d.push(wire.slice(0, cut)), ...d.push(wire.slice(cut))];
    assert.deepEqual(out, ['{"Data":"aGk=","Offset":2}', '{}', '{"Index":3,"Events":[{"Topic":"Job","Payload":{"a":"}{"}}]}'], `cut at ${cut}`);
    assert.equal(d.pending, '');
  }
});

test('braces and escaped quotes inside strings do not end a frame', () => {
  const d = new JsonFrameDecoder();
  assert.deepEqual(d.pushParsed('{"m":"a \\" } {"}{"n":1}'), [{ m: 'a " } {' }, { n: 1 }]);
});

test('newlines between frames (older agents) are skipped; a half frame is pending', () => {
  const d = new JsonFrameDecoder();
  assert.deepEqual(d.pushParsed('{"a":1}\n{}\n{"b":'), [{ a: 1 }, {}]);
  assert.equal(d.pending, '{"b":');
});

test('text that is not a frame is an error, not a silent skip', () => {
  assert.throws(() => new JsonFrameDecoder().push('{}x{}'), /unexpected "x" between JSON frames/);
});
