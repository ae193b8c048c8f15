/**
 * Data parts hold a JSON object in the model, as A2A 0.3 defines them (§6.5.3) and as 0.3 clients
 * read them. A2A 1.0 lets a data part hold any JSON value (`google.protobuf.Value`): one that is not
 * an object is kept wrapped as `{ value }`, marked by a metadata flag, and unwrapped again for 1.0
 * clients. The official SDKs use the same flag, so a part keeps its form across them.
 */

import type { DataPart, Metadata } from './types.js';

export const DATA_PART_COMPAT_FLAG = 'data_part_compat';

/** The model's data part for any JSON value. */
export function dataPart(value: unknown, metadata?: Metadata): DataPart {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return metadata === undefined
      ? { kind: 'data', data: value as Record<string, unknown> }
      : { kind: 'data', data: value as Record<string, unknown>, metadata };
  }
  return { kind: 'data', data: { value }, metadata: { ...metadata, [DATA_PART_COMPAT_FLAG]: true } };
}

/** The JSON value a data part carries (its object, or the value it wraps). */
export function dataValue(part: DataPart): unknown {
  return part.metadata?.[DATA_PART_COMPAT_FLAG] === true && 'value' in part.data ? part.data.value : part.data;
}
