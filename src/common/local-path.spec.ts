import { isLocalPath, localPath } from './local-path';

describe('isLocalPath (open-redirect guard)', () => {
  it.each(['/', '/Administration/Security/Users', '/Administration/Performance/ArchiverWarning?stageId=4&take=100', '/a//b'])(
    'accepts the local path %p',
    (value) => expect(isLocalPath(value)).toBe(true),
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
  ])('refuses hostile value %#', (value) => expect(isLocalPath(value)).toBe(false));
});

describe('localPath decodes before judging', () => {
  it.each(['/%2F%2Fevil.example', '/%5Cevil.example', '/%252F%252Fevil.example', '/%2f%5cevil', '/%0d%0aSet-Cookie:x', '/%E0%A4%A'])(
    'refuses the encoded variant %p',
    (value) => expect(localPath(value)).toBeNull(),
  );
  it('keeps an ordinary encoded query', () => expect(localPath('/a?b=%20c')).toBe('/a?b=%20c'));
});
