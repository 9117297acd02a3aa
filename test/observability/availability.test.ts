/** Outages are reported once per change of state, and URLs lose their password. */
import { describe, expect, it } from 'vitest';
import { Availability, withoutCredentials } from '../../src/observability/availability.js';

describe('Availability', () => {
  it('calls its listener once per change, however many calls fail or succeed', () => {
    const changes: Array<[boolean, string | null]> = [];
    const a = new Availability('redis://h:1/0', (up, error) => changes.push([up, error]));
    a.ok();
    a.down(new Error('ECONNREFUSED'));
    a.down(new Error('ECONNREFUSED again'));
    expect(a.check()).toMatchObject({ status: 'unavailable', target: 'redis://h:1/0', error: 'ECONNREFUSED again' });
    a.ok();
    a.ok();
    expect(changes).toEqual([[false, 'ECONNREFUSED'], [true, null]]);
    expect(a.check()).not.toHaveProperty('error');
  });
});

describe('withoutCredentials', () => {
  it('drops the password and keeps the rest', () => {
    expect(withoutCredentials('redis://user:hunter2@cache:6380/2')).toBe('redis://user@cache:6380/2');
    expect(withoutCredentials('redis://:hunter2@cache:6380')).toBe('redis://cache:6380');
    expect(withoutCredentials('::')).toBe('(unparseable URL)');
  });
});
