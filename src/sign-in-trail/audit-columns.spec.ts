import { getMetadataArgsStorage } from 'typeorm';
import { AUDIT_COLUMNS, CanonicalColumnName } from '../audit-log/canonical';
import { BOUNDS } from '../common/text';
import { UserLogin } from './user-login.entity';
import { USER_LOGIN_TEXT_BOUNDS } from './user-login.repository';
import { UserLogout } from './user-logout.entity';
import { USER_LOGOUT_TEXT_BOUNDS } from './user-logout.repository';

/** True only when A and B are the same set of names: a constant of this type does not compile otherwise. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
type Properties<T> = Exclude<keyof T, 'searchText'>;

/**
 * The sign-in trails' columns are listed once (audit-log/canonical.ts, contract 9's order); the
 * entities TypeORM writes them through must name the same columns, in the same order, and the
 * writers bound each text to its column's length, the contract's bounds.
 */
describe('UserLogin and UserLogout: the entities are the canonical columns', () => {
  it('name the same properties (checked by the compiler)', () => {
    const login: Same<Properties<UserLogin>, Uncapitalize<CanonicalColumnName<'UserLogin'>>> = true;
    const logout: Same<Properties<UserLogout>, Uncapitalize<CanonicalColumnName<'UserLogout'>>> = true;
    expect([login, logout]).toEqual([true, true]);
  });

  it.each([
    ['UserLogin', UserLogin],
    ['UserLogout', UserLogout],
  ] as const)('%s: the entity declares the canonical columns in their order, then SearchText', (table, entity) => {
    const declared = getMetadataArgsStorage()
      .filterColumns(entity)
      .map((column) => column.options.name);
    expect(declared).toEqual([...AUDIT_COLUMNS[table].map(({ name }) => name), 'SearchText']);
  });

  it("bounds every caller text to contract 9's bound", () => {
    expect(USER_LOGIN_TEXT_BOUNDS).toEqual({
      createdUser: BOUNDS.name,
      failureMessage: BOUNDS.failureMessage,
      remoteIp: BOUNDS.ip,
      localIp: BOUNDS.ip,
      userAgent: BOUNDS.userAgent,
    });
    expect(USER_LOGOUT_TEXT_BOUNDS).toEqual({
      createdUser: BOUNDS.name,
      remoteIp: BOUNDS.ip,
      localIp: BOUNDS.ip,
      userAgent: BOUNDS.userAgent,
      cutByUser: BOUNDS.name,
      message: BOUNDS.message,
    });
  });
});
