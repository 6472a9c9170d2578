/**
 * ioredis, loaded when a Redis is configured: a node on the in-process bus (the embedded default)
 * never loads it, and starts that much sooner (issue 33). Its types are imported with `import type`.
 */
export function ioredis(): typeof import('ioredis') {
  return require('ioredis') as typeof import('ioredis');
}
