/** Which store errors are an outage (503) and which are a bug or a refused statement (500). */
import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/store/connection-errors.js';

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('isConnectionError', () => {
  it('recognises sockets, connection SQLSTATEs and node-postgres connection messages', () => {
    expect(isConnectionError(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isConnectionError(withCode('read ECONNRESET', 'ECONNRESET'))).toBe(true);
    expect(isConnectionError(withCode('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isConnectionError(withCode('connection failure', '08006'))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('leaves statement errors alone', () => {
    expect(isConnectionError(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isConnectionError(withCode('syntax error at or near "SELEC"', '42601'))).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
  });
});
