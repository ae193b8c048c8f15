/**
 * The A2A 1.0 proto (`proto/a2a.proto`) and the A2A 0.3 one (`proto/a2a-v0_3.proto`), shipped with
 * the package and loaded with protobufjs, and the one conversion at the binding's edge between
 * protobuf messages and ProtoJSON, which the core's codecs read and write for every binding (1.0's
 * for `lf.a2a.v1`, 0.3's HTTP+JSON one for `a2a.v1`).
 *
 * protobufjs' plain objects (`toObject` with enums and bytes as strings) are ProtoJSON already but
 * for the well-known types, whose JSON forms the ProtoJSON mapping defines apart: a `Struct` is a
 * JSON object, a `Value` any JSON value, a `ListValue` an array, a `Timestamp` an RFC 3339 string.
 * The conversion walks each message by its descriptor, so every Struct, Value and Timestamp field
 * of the proto (metadata, a data part, a status timestamp, a card's extension params…) is converted
 * wherever it sits, with no list of fields to keep in step with the proto. A field declared with
 * a `json_name` (0.3's `SendMessageRequest.request`, written `message`) goes by that name, as
 * ProtoJSON says.
 */

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '@fastify-a2a/core';
import protobuf from 'protobufjs';

/**
 * The folder of the `.proto` files: `proto/` beside `src/` and `dist/`; or, when this module was
 * bundled into an application (esbuild, say), the installed package's own.
 */
function protoDir(): string {
  const beside = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'proto');
  if (existsSync(join(beside, 'a2a.proto'))) return beside;
  return join(dirname(createRequire(import.meta.url).resolve('@fastify-a2a/grpc/package.json')), 'proto');
}

export const PROTO_DIR: string = protoDir();

/** The `.proto` of the A2A 1.0 service, for tools (grpcurl, code generators) and clients. */
export const A2A_PROTO_PATH: string = join(PROTO_DIR, 'a2a.proto');

/** The `.proto` of the A2A 0.3 service (package `a2a.v1`), for tools and clients. */
export const A2A_0_3_PROTO_PATH: string = join(PROTO_DIR, 'a2a-v0_3.proto');

/** The fully qualified service name: gRPC paths are `/lf.a2a.v1.A2AService/<Method>`. */
export const SERVICE_NAME = 'lf.a2a.v1.A2AService';

/** A2A 0.3's service: gRPC paths are `/a2a.v1.A2AService/<Method>`. */
export const SERVICE_NAME_0_3 = 'a2a.v1.A2AService';

function loadRoot(files: string[]): protobuf.Root {
  const root = new protobuf.Root();
  // google/protobuf/* are protobufjs' bundled well-known types; the rest are ours.
  root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : resolve(PROTO_DIR, target));
  root.loadSync(files, { keepCase: false });
  root.resolveAll();
  return root;
}

/** The loaded proto (a protobufjs Root): the A2A 1.0 messages and google.rpc's, for tools and tests. */
export const root: protobuf.Root = loadRoot([A2A_PROTO_PATH, join(PROTO_DIR, 'google/rpc/status.proto')]);
export const service: protobuf.Service = root.lookupService(SERVICE_NAME);

/**
 * The A2A 0.3 proto, in a Root of its own: its messages have the names of 1.0's (`Task`, `Part`…)
 * in another package, and no lookup should find one for the other.
 */
export const root0_3: protobuf.Root = loadRoot([A2A_0_3_PROTO_PATH]);
export const service0_3: protobuf.Service = root0_3.lookupService(SERVICE_NAME_0_3);

/** A field's ProtoJSON name: its `json_name` when the proto gives one, else its lowerCamelCase name. */
function jsonNameOf(field: protobuf.Field): string {
  const declared = field.options?.json_name;
  return typeof declared === 'string' ? declared : field.name;
}

const TO_OBJECT: protobuf.IConversionOptions = {
  longs: Number,
  enums: String,
  bytes: String,
  defaults: false,
  oneofs: false,
};

// ---- protobuf → ProtoJSON ----

function timestampToJson(value: JsonObject): string {
  const seconds = Number(value.seconds ?? 0);
  const nanos = Number(value.nanos ?? 0);
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new RangeError(`a Timestamp of ${seconds} seconds is out of range`);
  const iso = date.toISOString(); // …T10:00:00.000Z
  const fraction = nanos === 0 ? '' : `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}`;
  return `${iso.slice(0, 19)}${fraction}Z`;
}

function valueToJson(value: JsonObject | undefined): unknown {
  if (value === undefined || value === null) return null;
  if (value.structValue !== undefined) return structToJson(value.structValue as JsonObject);
  if (value.listValue !== undefined) return listToJson(value.listValue as JsonObject);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null; // nullValue, or no kind set
}

function structToJson(value: JsonObject): JsonObject {
  const fields = (value.fields ?? {}) as Record<string, JsonObject>;
  const out: JsonObject = {};
  for (const [key, field] of Object.entries(fields)) out[key] = valueToJson(field);
  return out;
}

function listToJson(value: JsonObject): unknown[] {
  return ((value.values ?? []) as JsonObject[]).map(valueToJson);
}

/** A well-known type's ProtoJSON form, or undefined when `type` is not one this file converts. */
function wellKnownToJson(type: protobuf.Type, value: JsonObject): unknown {
  switch (type.fullName) {
    case '.google.protobuf.Struct':
      return structToJson(value);
    case '.google.protobuf.Value':
      return valueToJson(value);
    case '.google.protobuf.ListValue':
      return listToJson(value);
    case '.google.protobuf.Timestamp':
      return timestampToJson(value);
    default:
      return undefined;
  }
}

function messageToJson(type: protobuf.Type, object: JsonObject): JsonObject {
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    if (value === undefined) continue;
    const jsonName = jsonNameOf(field);
    if (jsonName !== field.name) {
      delete object[field.name];
      object[jsonName] = value;
    }
    if (!(field.resolvedType instanceof protobuf.Type)) continue;
    const nested = field.resolvedType;
    const convert = (item: unknown): unknown => {
      const known = wellKnownToJson(nested, item as JsonObject);
      return known !== undefined ? known : messageToJson(nested, item as JsonObject);
    };
    if (field.map) {
      const map = value as JsonObject;
      for (const key of Object.keys(map)) map[key] = convert(map[key]);
    } else if (field.repeated) {
      object[jsonName] = (value as unknown[]).map(convert);
    } else {
      object[jsonName] = convert(value);
    }
  }
  return object;
}

/**
 * A binary `type` message as ProtoJSON (lowerCamelCase names, enums by name, bytes as base64, unset
 * fields left out).
 * @throws {Error} when the bytes are not a `type` message.
 */
export function decodeToJson(type: protobuf.Type, bytes: Uint8Array): JsonObject {
  const message = type.decode(bytes);
  return messageToJson(type, type.toObject(message, TO_OBJECT) as JsonObject);
}

// ---- ProtoJSON → protobuf ----

/** RFC 3339, as ProtoJSON writes a Timestamp: seconds and up to nine fraction digits. */
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

function timestampFromJson(value: unknown): JsonObject {
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  if (match === null) throw new TypeError(`not an RFC 3339 timestamp: ${JSON.stringify(value)}`);
  const millis = Date.parse(`${match[1]}${match[3]}`);
  return { seconds: Math.floor(millis / 1000), nanos: Number((match[2] ?? '').padEnd(9, '0')) };
}

function valueFromJson(value: unknown): JsonObject {
  if (value === null || value === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: listFromJson(value) };
  return { structValue: structFromJson(value as JsonObject) };
}

function structFromJson(value: JsonObject): JsonObject {
  const fields: JsonObject = {};
  for (const [key, field] of Object.entries(value)) if (field !== undefined) fields[key] = valueFromJson(field);
  return { fields };
}

function listFromJson(value: unknown[]): JsonObject {
  return { values: value.map(valueFromJson) };
}

function wellKnownFromJson(type: protobuf.Type, value: unknown): JsonObject | undefined {
  switch (type.fullName) {
    case '.google.protobuf.Struct':
      return structFromJson((value ?? {}) as JsonObject);
    case '.google.protobuf.Value':
      return valueFromJson(value);
    case '.google.protobuf.ListValue':
      return listFromJson(Array.isArray(value) ? value : []);
    case '.google.protobuf.Timestamp':
      return timestampFromJson(value);
    default:
      return undefined;
  }
}

function messageFromJson(type: protobuf.Type, json: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const value = json[jsonNameOf(field)];
    if (value === undefined) continue;
    if (!(field.resolvedType instanceof protobuf.Type)) {
      out[field.name] = value;
      continue;
    }
    const nested = field.resolvedType;
    const convert = (item: unknown): unknown =>
      wellKnownFromJson(nested, item) ?? messageFromJson(nested, (item ?? {}) as JsonObject);
    if (field.map) {
      out[field.name] = Object.fromEntries(
        Object.entries(value as JsonObject).map(([key, item]) => [key, convert(item)]),
      );
    } else if (field.repeated) {
      out[field.name] = (value as unknown[]).map(convert);
    } else {
      out[field.name] = convert(value);
    }
  }
  return out;
}

/** A ProtoJSON value of `type` as binary protobuf; members the proto does not have are left out. */
export function encodeFromJson(type: protobuf.Type, json: JsonObject): Uint8Array {
  return type.encode(type.fromObject(messageFromJson(type, json))).finish();
}
