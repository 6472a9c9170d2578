import { splitStartupOptions } from './data-source';
import { searchPathStartupOption } from './search-path';

describe('startup options of the service\'s sessions', () => {
  it('pins a schema as a quoted identifier, spaces, backslashes and quotes escaped, the temporary schema last', () => {
    expect(searchPathStartupOption('public')).toBe('-c search_path="public",pg_temp');
    expect(searchPathStartupOption('tm monitor')).toBe('-c search_path="tm\\ monitor",pg_temp');
    expect(searchPathStartupOption('a"b\\c')).toBe('-c search_path="a""b\\\\c",pg_temp');
  });

  it('takes the options out of a ConnectionString, leaving the rest of it as it was', () => {
    expect(splitStartupOptions('postgres://u:p%40ss@db.bank.example:5433/tm?sslmode=require')).toEqual({
      url: 'postgres://u:p%40ss@db.bank.example:5433/tm?sslmode=require',
      options: null,
    });
    expect(splitStartupOptions('postgres://u@db.bank.example/tm?options=-c%20search_path%3Dtm&sslmode=require')).toEqual({
      url: 'postgres://u@db.bank.example/tm?sslmode=require',
      options: '-c search_path=tm',
    });
  });
});
