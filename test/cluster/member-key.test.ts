/** Node ids become key-value keys: host:port and other characters a key may not hold are escaped, and distinct ids stay distinct. */
import { expect, test } from 'bun:test';
import { memberKey } from '../../cluster/membership.ts';

test('a node id is escaped into a valid key, reversibly distinct', () => {
  expect(memberKey('node-a_1')).toBe('n.node-a_1');
  expect(memberKey('10.0.0.7:3000')).toBe('n.10=2e=0=2e=0=2e=7=3a=3000');
  for (const id of ['10.0.0.7:3000', 'ünïcode host', 'a.b', 'a=2e=b']) expect(memberKey(id)).toMatch(/^n\.[A-Za-z0-9_=-]+$/);
  // an id that looks like an escape is escaped itself
  expect(memberKey('a=2e=b')).not.toBe(memberKey('a.b'));
});
