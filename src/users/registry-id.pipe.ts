import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { MAX_REGISTRY_ID, parseRegistryId } from './registry-id';

export { MAX_REGISTRY_ID, RegistryIdParam } from './registry-id';

/**
 * Pipe form of parseRegistryId for `@Param('id', RegistryIdPipe)`. Prefer @RegistryIdParam(): the
 * global ValidationPipe has already made `+value` of a `number` parameter when this runs, so `1e3`
 * arrives as 1000 and `0x10` as 16 (still a valid id, never a 500), which only the decorator refuses.
 */
@Injectable()
export class RegistryIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown, metadata?: ArgumentMetadata): number {
    const field = metadata?.data ?? 'id';
    if (typeof value === 'number') {
      if (!Number.isInteger(value) || value < 1 || value > MAX_REGISTRY_ID) return parseRegistryId('', field);
      return value;
    }
    return parseRegistryId(value, field);
  }
}
