import { getMetadataArgsStorage } from 'typeorm';

/** The bounded text columns of an entity, by property, each with its length (varchar(n)). */
export type TextBounds<T> = { readonly [K in keyof T]?: number };

/**
 * Each bounded text column of `entity` with its length, read from the entity's own declarations, so
 * a writer bounds a caller's text to exactly what its column holds (contract 9) and a new text column
 * is bounded by declaring it. Read once, when the writer's module loads (the decorators have run).
 */
export function textBoundsOf<T>(entity: new () => T): TextBounds<T> {
  const bounds: Record<string, number> = {};
  for (const { propertyName, options } of getMetadataArgsStorage().filterColumns(entity)) {
    if (options.type === 'varchar' && options.length !== undefined) bounds[propertyName] = Number(options.length);
  }
  return Object.freeze(bounds) as TextBounds<T>;
}
