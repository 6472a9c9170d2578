import { QueryFailedError } from 'typeorm';
import { toProblem } from '../common/problem';
import { CommitNotConfirmedError, DatabaseUnavailableError, isDatabaseTimeout, isDatabaseUnavailable, isDatabaseUnreachable } from './deadlines';

/** An error as node-postgres gives it for an ErrorResponse: message and SQLSTATE. */
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'ERROR' });
/** The same as TypeORM rethrows it from a repository or a query runner. */
const typeorm = (error: Error) => new QueryFailedError('UPDATE "UserRegistry" SET …', [], error);

describe('isDatabaseUnavailable: what is a 503, what opens the breaker', () => {
  it.each([
    ['57014', 'canceling statement due to statement timeout'],
    ['57014', 'canceling statement due to user request'],
    ['55P03', 'canceling statement due to lock timeout'],
    ['55P03', 'could not obtain lock on row in relation "UserRegistry"'],
    ['25P03', 'terminating connection due to idle-in-transaction timeout'],
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
  ])('%s (%s) did not finish in time: 503, but the server answered (the breaker stays closed)', (code, message) => {
    for (const error of [pgError(code, message), typeorm(pgError(code, message))]) {
      expect(isDatabaseTimeout(error)).toBe(true);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isDatabaseUnreachable(error)).toBe(false);
    }
  });

  it.each([
    ['ECONNREFUSED', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['08006', pgError('08006', 'connection failure')],
    ['57P01', pgError('57P01', 'terminating connection due to administrator command')],
    ['53300', pgError('53300', 'sorry, too many clients already')],
    ['Query read timeout', new Error('Query read timeout')],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['the breaker', new DatabaseUnavailableError()],
  ])('%s: unreachable (503, the breaker opens)', (_name, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
    expect(isDatabaseUnreachable(typeorm(error))).toBe(true);
    expect(isDatabaseUnavailable(typeorm(error))).toBe(true);
  });

  it('a commit the synchronous standby did not confirm is a 503, not a success and not an outage', () => {
    const error = new CommitNotConfirmedError();
    expect(isDatabaseUnavailable(typeorm(error))).toBe(true);
    expect(isDatabaseTimeout(error)).toBe(true);
    expect(isDatabaseUnreachable(error)).toBe(false);
  });

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['22P02', 'invalid input syntax for type integer'],
    ['42P01', 'relation "x" does not exist'],
    ['XX000', 'internal error'],
  ])('%s (%s) is an answer that was an error, not an outage', (code, message) => {
    expect(isDatabaseUnavailable(typeorm(pgError(code, message)))).toBe(false);
  });

  it('a plain error with a timeout-like message but no SQLSTATE is not mistaken for one', () => {
    expect(isDatabaseUnavailable(new Error('canceling statement due to statement timeout'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
    expect(isDatabaseUnavailable('57014')).toBe(false);
  });

  it('the problem answer of a cancelled statement is 503 with Retry-After, saying nothing internal', () => {
    const { problem, headers } = toProblem(typeorm(pgError('57014', 'canceling statement due to statement timeout')), isDatabaseUnavailable);
    expect(problem).toEqual({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'A service this request needs did not answer in time; try again shortly.' });
    expect(headers).toEqual({ 'Retry-After': '5' });
  });
});
