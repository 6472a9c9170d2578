import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { badRequest } from '../common/problem';

/** Largest value of a PostgreSQL `integer`, the type of every registry Id. */
export const MAX_REGISTRY_ID = 2_147_483_647;

/**
 * A registry id from the path: a positive integer written in plain digits that fits the `integer`
 * columns. Anything else (letters, signs, decimals, `1e3`, `0x10`, huge numbers) is a 400 problem,
 * never a 500 from the database.
 */
export function parseRegistryId(value: unknown, field = 'id'): number {
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_REGISTRY_ID) {
    throw badRequest(`The ${field} must be a positive integer.`, [{ field, message: 'must be a positive integer' }]);
  }
  return Number(value);
}

/**
 * The path parameter `name` (default `id`) parsed by parseRegistryId. A custom decorator rather than
 * a pipe on @Param: the global ValidationPipe (transform) turns a `number` path parameter into
 * `+value` before any parameter pipe runs, so `1e3` would arrive as 1000 and `0x10` as 16. Custom
 * decorators receive the raw string. Document the parameter with @ApiParam on the route.
 */
export const RegistryIdParam = createParamDecorator((name: string | undefined, ctx: ExecutionContext): number => {
  const field = name ?? 'id';
  return parseRegistryId(ctx.switchToHttp().getRequest<Request>().params[field], field);
});
