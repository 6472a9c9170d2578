import { Injectable, PipeTransform } from '@nestjs/common';
import { badRequest } from '../common/problem';

/** Largest value of a PostgreSQL `integer`, the type of every registry Id. */
export const MAX_REGISTRY_ID = 2_147_483_647;

/**
 * Parses a path id of the registry: a positive integer that fits the `integer` columns. Anything
 * else (letters, signs, decimals, huge numbers) is a 400 problem, never a 500 from the database.
 */
@Injectable()
export class RegistryIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (typeof value !== 'string' || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_REGISTRY_ID) {
      throw badRequest('The id must be a positive integer.', [{ field: 'id', message: 'must be a positive integer' }]);
    }
    return Number(value);
  }
}
