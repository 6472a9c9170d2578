import { messageOf, PgErrorCode, pgErrorCode } from './errors';

describe('messageOf', () => {
  it.each([
    [new Error('boom'), 'boom'],
    [{ message: 'from a plain object' }, 'from a plain object'],
    ['a string', 'a string'],
    [42, '42'],
    [null, 'null'],
    [undefined, 'undefined'],
  ])('%p reads as %p', (error, text) => {
    expect(messageOf(error)).toBe(text);
  });
});

describe('pgErrorCode', () => {
  it('reads the SQLSTATE on the error or on the driver error TypeORM wraps', () => {
    expect(pgErrorCode({ code: '23505' })).toBe(PgErrorCode.UniqueViolation);
    expect(pgErrorCode({ driverError: { code: '57014' } })).toBe(PgErrorCode.QueryCanceled);
    expect(pgErrorCode({ code: 7 })).toBeUndefined();
    expect(pgErrorCode(new Error('no code'))).toBeUndefined();
    expect(pgErrorCode(null)).toBeUndefined();
  });

  it('names the SQLSTATEs PostgreSQL documents', () => {
    expect(PgErrorCode).toMatchObject({ UniqueViolation: '23505', QueryCanceled: '57014', LockNotAvailable: '55P03', SerializationFailure: '40001', DeadlockDetected: '40P01', TooManyConnections: '53300' });
  });
});
