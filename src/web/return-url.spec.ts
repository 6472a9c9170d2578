import { isLocalReturnUrl } from './return-url';

describe('isLocalReturnUrl (open-redirect guard)', () => {
  it.each(['/', '/Administration/Security/Users', '/Administration/Performance/ArchiverWarning?stageId=4&take=100', '/a//b'])(
    'accepts the local path %p',
    (value) => expect(isLocalReturnUrl(value)).toBe(true),
  );

  it.each([
    '//evil.example/',
    '/\\evil.example',
    '/a\\b',
    'https://evil.example/',
    'javascript:alert(1)',
    'evil.example',
    '',
    '/\r\nSet-Cookie: x=1',
    '/\u0000',
    '/\u0085',
    `/${'a'.repeat(2048)}`,
    undefined,
    ['/a'],
  ])('refuses hostile value %#', (value) => expect(isLocalReturnUrl(value)).toBe(false));
});
